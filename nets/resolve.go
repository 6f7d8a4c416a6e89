package nets

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/readfile"
)

// DefaultConfig is the built-in network for game g: DefaultPreset for the
// game it was made for (its Config.Game: the "connect4" preset, 64
// channels and 5 residual blocks, for connect4), and for other games a
// small AlphaZero net (32 channels, 2 blocks) shaped from g's observation
// and action count.
func DefaultConfig(g games.Game) (Config, error) {
	c, err := Preset(DefaultPreset)
	if err != nil {
		return c, err
	}
	if c.Game == g.Spec() {
		return c.ForGame(g)
	}
	c = Config{Preset: "small", Head: HeadAlphaZero, Channels: 32, Blocks: 2, ValueHidden: 32}
	return c.ForGame(g)
}

// Source says where a network came from.
type Source struct {
	Ref    string // the reference as given (path, "init", shipped name)
	Desc   string // for people: "runs/x/iter-0003.safetensors", "built-in small net ..."
	SHA256 string // hex SHA-256 of the encoded weights: identifies the network
}

// ErrUnknownNet is returned (wrapped) by OpenNet for a reference that is
// neither a shipped name nor an existing file.
var ErrUnknownNet = errors.New("unknown network")

// ErrWrongGame is returned (wrapped) by OpenNet for a network that cannot
// play the game asked for: made for another game, or shaped for other
// observations or actions.
var ErrWrongGame = errors.New("network of another game")

// wrongGameError is an error of OpenNet that is ErrWrongGame; its message
// says which game the network is for.
type wrongGameError struct{ msg string }

func (e wrongGameError) Error() string        { return e.msg }
func (e wrongGameError) Is(target error) bool { return target == ErrWrongGame }

// viewHint explains, when g is the sequential view of the game netGame
// (games.SequentialViewer: Sushi Go's sushigo-seq of sushigo), why a
// network of the one does not play the other and what to do; "" otherwise.
func viewHint(netGame string, g games.Game) string {
	ng, err := games.New(netGame)
	if err != nil {
		return ""
	}
	if sv, ok := ng.(games.SequentialViewer); !ok || sv.SequentialView().Spec() != g.Spec() {
		return ""
	}
	return fmt.Sprintf("; %s is the sequential view of %s (players choose one at a time), whose observations a network of the simultaneous game never saw: play %s with it (arena, play, move --player), or train one for the view (`canopy zero --game %s`)",
		g.Spec(), netGame, netGame, g.Spec())
}

func wrongGame(format string, args ...any) error {
	return wrongGameError{fmt.Sprintf(format, args...)}
}

// Shipped networks: weights compiled into the binary, by name, and the
// default network of each game that has one.
var (
	shippedMu sync.RWMutex
	shipped   = map[string]shippedNet{}
	defaults  = map[string]string{} // game spec -> shipped name
)

// SetDefault makes the shipped network name the one "default" resolves
// to for its game. It panics when name is not shipped (a programming
// error caught at init).
func SetDefault(name string) {
	shippedMu.Lock()
	defer shippedMu.Unlock()
	s, ok := shipped[name]
	if !ok {
		panic("nets: SetDefault of an unshipped network " + name)
	}
	defaults[s.game] = name
}

type shippedNet struct {
	game, about string
	data        []byte
}

// RegisterShipped makes the encoded weights data available as a network
// reference name for game (a game spec such as "connect4"). about is one
// line of description. A duplicate name panics (a programming error
// caught at init).
func RegisterShipped(name, game, about string, data []byte) {
	shippedMu.Lock()
	defer shippedMu.Unlock()
	if _, dup := shipped[name]; dup || name == "" || name == "init" || name == "random" || name == "default" {
		panic("nets: duplicate or reserved shipped network name " + name)
	}
	shipped[name] = shippedNet{game: game, about: about, data: data}
}

// ShippedNet describes a network compiled into the binary.
type ShippedNet struct{ Name, Game, About string }

// Shipped lists the shipped networks, sorted by name.
func Shipped() []ShippedNet {
	shippedMu.RLock()
	defer shippedMu.RUnlock()
	out := make([]ShippedNet, 0, len(shipped))
	for n, s := range shipped {
		out = append(out, ShippedNet{n, s.game, s.about})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// OpenNet resolves a network reference for game g:
//   - "default": the game's shipped default network (SetDefault), or
//     "init" when it has none;
//   - "" or "init": the built-in network (DefaultConfig) with random
//     weights from seed 1;
//   - the name of a shipped network (Shipped), which must be for g;
//   - otherwise the path of a .safetensors weights file.
//
// The network's input and policy sizes must match g. Errors say what was
// tried and how to fix it.
func OpenNet(ref string, g games.Game) (*Net, Source, error) {
	if ref == "default" {
		shippedMu.RLock()
		d, ok := defaults[g.Spec()]
		shippedMu.RUnlock()
		ref = "init"
		if ok {
			ref = d
		}
	}
	src := Source{Ref: ref}
	var (
		buf []byte
		net *Net
		err error
	)
	shippedMu.RLock()
	sh, isShipped := shipped[ref]
	shippedMu.RUnlock()
	switch {
	case ref == "" || ref == "init":
		cfg, err := DefaultConfig(g)
		if err != nil {
			return nil, src, fmt.Errorf("no built-in network for %s: %v (name a weights file)", g.Spec(), err)
		}
		if net, err = New(cfg, 1); err != nil {
			return nil, src, err
		}
		if buf, err = net.Encode(); err != nil {
			return nil, src, err
		}
		src.Ref = "init"
		src.Desc = fmt.Sprintf("built-in %s net for %s, random init (seed 1)", cfg.Preset, g.Spec())
	case isShipped:
		if sh.game != g.Spec() {
			return nil, src, wrongGame("network %q is for %s, not %s%s", ref, sh.game, g.Spec(), viewHint(sh.game, g))
		}
		buf = sh.data
		if net, err = Decode(buf); err != nil {
			return nil, src, fmt.Errorf("shipped network %q: %v", ref, err)
		}
		src.Desc = fmt.Sprintf("shipped network %s (%s)", ref, sh.about)
	case IsONNXPath(ref):
		return nil, src, onnxFileError(ref, g.Spec())
	default:
		buf, err = readfile.Regular(ref, MaxFileBytes)
		if errors.Is(err, fs.ErrNotExist) {
			var names []string
			for _, s := range Shipped() {
				names = append(names, s.Name)
			}
			avail := "none shipped"
			if len(names) > 0 {
				avail = "shipped: " + strings.Join(names, ", ")
			}
			return nil, src, fmt.Errorf("network %q: %w: no such file, and not a shipped name (%s; or init for a random one)", ref, ErrUnknownNet, avail)
		}
		if err != nil {
			return nil, src, fmt.Errorf("network %q: %v", ref, err)
		}
		if IsRecurrentFile(buf) {
			return nil, src, fmt.Errorf("network %s is a recurrent net (study 000's CNN-LSTM): only the policy agent plays it", ref)
		}
		if net, err = Decode(buf); err != nil {
			return nil, src, fmt.Errorf("network %s: %v (is it a canopy .safetensors file?)", ref, err)
		}
		src.Desc = ref
	}
	sum := sha256.Sum256(buf)
	src.SHA256 = hex.EncodeToString(sum[:])
	if err := CheckGame(net, g, src.Desc); err != nil {
		return nil, src, err
	}
	return net, src, nil
}

// CheckGame reports, as an error that is ErrWrongGame, why net (described
// as desc) cannot play g: it was made for another game, or its input is
// neither g's observation nor the observation followed by the legal-move
// plane (nets trained with `canopy ppo --legal-plane`), or its policy is
// not g's actions. A network made for another game plays nonsense
// wherever its shapes happen to fit (hex:size=5 with or without swap, a
// variant of the same board): refused, not warned about, since agent
// specs and servers have no one to read a warning.
func CheckGame(net *Net, g games.Game, desc string) error {
	if cg := net.Config().Game; cg != "" && cg != g.Spec() {
		if mg, err := games.New(cg); err != nil || mg.Spec() != g.Spec() {
			return wrongGame("network %s was made for %s, not %s: use a network of this game (`canopy net init --game %s` makes one)%s", desc, cg, g.Spec(), g.Spec(), viewHint(cg, g))
		}
	}
	if _, encErr := EncodingFor(g, net.InputSize()); encErr != nil || net.PolicySize() != g.NumActions() {
		return wrongGame("network %s takes %d inputs and %d actions; %s needs %d (or %d with the legal-move plane) and %d (make one with `canopy net init --game %s`)",
			desc, net.InputSize(), net.PolicySize(), g.Spec(), games.ObservationSize(g), Encoding{LegalPlane: true}.Size(g), g.NumActions(), g.Spec())
	}
	return nil
}
