package pyapi

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"

	"github.com/canopy-go/canopy/nets"
)

// Net is canopy.Net: a Canopy network on the CPU backend.
type Net struct {
	net     *nets.Net
	be      nets.Backend
	game    string
	desc    string
	weights []byte // the safetensors encoding (for to_torch)
	in, na  int
	vsize   int // values per row: 1, or the players of a per-player value head
}

type netArgs struct {
	Ref  string `json:"ref"`
	Game string `json:"game"`
}

// openNet loads a network by shipped name or path (any buffers are an
// error). Without a game, the game is the shipped network's or the one
// the file's config names.
func openNet(args json.RawMessage, bufs [][]byte) (*Net, error) {
	var a netArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if err := checkBufs("Net.load", bufs, nil); err != nil {
		return nil, err
	}
	if a.Ref == "" {
		return nil, valueErrorf("name_or_path is empty: give a shipped network's name (%s), a .safetensors path, or \"init\" with game=", shippedNames())
	}
	if _, err := os.Stat(a.Ref); err == nil && nets.IsONNXPath(a.Ref) {
		return nil, valueErrorf("name_or_path %q is an ONNX model, not a Canopy network file: agents take it as it is (opponent=\"az:net=%s\"); canopy.Net needs it converted with `canopy net import %s`", a.Ref, a.Ref, a.Ref)
	}
	game := a.Game
	if game == "" {
		for _, s := range nets.Shipped() {
			if s.Name == a.Ref {
				game = s.Game
			}
		}
	}
	if game == "" {
		if _, err := os.Stat(a.Ref); err != nil {
			return nil, valueErrorf("name_or_path %q: no such file and not a shipped network (%s); for a built-in random network give \"init\" with game=", a.Ref, shippedNames())
		}
		n, err := nets.Load(a.Ref)
		if err != nil {
			return nil, valueErrorf("name_or_path %q: %v (is it a canopy .safetensors file?)", a.Ref, err)
		}
		game = n.Config().Game
		if game == "" {
			return nil, valueErrorf("name_or_path %q names no game in its config: give game=", a.Ref)
		}
	}
	g, err := newGame(game)
	if err != nil {
		return nil, err
	}
	n, src, err := nets.OpenNet(a.Ref, g)
	if err != nil {
		return nil, valueErrorf("name_or_path %q: %v", a.Ref, err)
	}
	be, _, err := nets.OpenBackendSpec("cpu", n, nets.BackendOptions{MaxBatch: 256})
	if err != nil {
		return nil, runtimeErrorf("%v", err)
	}
	w, err := n.Encode()
	if err != nil {
		return nil, runtimeErrorf("%v", err)
	}
	return &Net{net: n, be: be, game: g.Spec(), desc: src.Desc, weights: w, in: n.InputSize(), na: n.PolicySize(),
		vsize: nets.ValueSize(be)}, nil
}

func shippedNames() string {
	var names []string
	for _, s := range nets.Shipped() {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return "none shipped"
	}
	return "shipped: " + strings.Join(names, ", ")
}

func (n *Net) close() error {
	if c, ok := n.be.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

func (n *Net) info() any {
	cfg := n.net.Config()
	return map[string]any{"game": n.game, "source": n.desc, "input_size": n.in, "policy_size": n.na,
		"value_size": n.vsize, "config": cfg, "weights_bytes": len(n.weights)}
}

// exchange "evaluate" ({"batch": B}) reads input f32 [B, in] and writes
// logits f32 [B, A] and values f32 [B, value_size] (a per-player value
// head: the mover first, seats rotated); "weights" writes the safetensors
// encoding into a uint8 buffer of weights_bytes.
func (n *Net) exchange(op string, args json.RawMessage, bufs [][]byte) (any, error) {
	switch op {
	case "weights":
		if err := checkBufs("Net weights", bufs, []bufSpec{{"weights", 1, len(n.weights)}}); err != nil {
			return nil, err
		}
		copy(bufs[0], n.weights)
		return nil, nil
	case "evaluate":
	default:
		return nil, valueErrorf("Net has no operation %q", op)
	}
	var a struct {
		Batch int `json:"batch"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	b := a.Batch
	if b < 1 {
		return nil, valueErrorf("obs holds %d positions, want at least 1", b)
	}
	if err := checkBufs("Net.evaluate", bufs, []bufSpec{{"obs", 4, b * n.in}, {"logits", 4, b * n.na}, {"values", 4, b * n.vsize}}); err != nil {
		return nil, err
	}
	in, lo, va := f32s(bufs[0]), f32s(bufs[1]), f32s(bufs[2])
	mb := n.be.MaxBatch()
	for s := 0; s < b; s += mb {
		k := min(mb, b-s)
		if err := n.be.Evaluate(context.Background(), k, in[s*n.in:(s+k)*n.in], lo[s*n.na:(s+k)*n.na], va[s*n.vsize:(s+k)*n.vsize]); err != nil {
			return nil, valueErrorf("%v", err)
		}
	}
	return nil, nil
}
