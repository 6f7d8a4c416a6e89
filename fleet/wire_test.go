package fleet

import (
	"math"
	"reflect"
	"testing"

	"github.com/canopy-go/canopy/selfplay"
)

// sameRecord compares two records field by field, floats by their bits.
func sameRecord(a, b *selfplay.GameRecord) bool {
	if a == nil || b == nil {
		return a == b
	}
	f32 := func(x, y []float32) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				return false
			}
		}
		return true
	}
	return a.ID == b.ID && f32(a.Obs, b.Obs) && f32(a.Policy, b.Policy) && reflect.DeepEqual(a.Legal, b.Legal) &&
		f32(a.Value, b.Value) && f32(a.RootQ, b.RootQ) && reflect.DeepEqual(a.Ply, b.Ply) &&
		reflect.DeepEqual(a.Returns, b.Returns) && a.Resigned == b.Resigned && a.ResignOffGame == b.ResignOffGame &&
		a.FalseResign == b.FalseResign && a.Nodes == b.Nodes && f32(a.Values, b.Values) && f32(a.RootValues, b.RootValues)
}

// sample is a game of 3 positions, 2 observation values and 3 actions,
// written by hand, with values whose bits a lossy encoding would change.
func sample() *Game {
	return &Game{Run: "0123abcd", Iteration: 7, NetworkSHA256: "ab", Record: &selfplay.GameRecord{
		ID:      41,
		Obs:     []float32{0, 1, float32(math.Copysign(0, -1)), 0.1, 1e-38, -3.5},
		Policy:  []float32{0.5, 0.25, 0.25, 1, 0, 0, 0, 0, 1},
		Legal:   []uint8{1, 1, 1, 1, 0, 1, 0, 0, 1},
		Value:   []float32{1, -1, 1},
		RootQ:   []float32{0.3, -0.7, 0.999},
		Ply:     []int32{0, 1, 2},
		Returns: []float64{1, -1}, Resigned: true, ResignOffGame: false, FalseResign: true, Nodes: 1234567890123,
	}}
}

func TestGameRoundTrip(t *testing.T) {
	g := sample()
	data, err := EncodeGame(nil, g, 2)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeGame(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Run != g.Run || back.Iteration != g.Iteration || back.NetworkSHA256 != g.NetworkSHA256 || !sameRecord(back.Record, g.Record) {
		t.Fatalf("round trip changed the game:\n got %+v %+v\nwant %+v %+v", back, back.Record, g, g.Record)
	}
	// The body is the arrays' raw bytes: 3 positions x (2 obs + 3 policy
	// floats + 3 legal bytes + value, root_q, ply).
	body := 3*(2*4+3*4+3+4+4+4) + 0
	if head := len(data) - body; head < len(gameMagic)+4 || head > 400 {
		t.Errorf("message of %d bytes: %d of header for a %d-byte body", len(data), head, body)
	}
	if _, err := EncodeGame(nil, g, 3); err == nil {
		t.Error("EncodeGame with a wrong observation size: no error")
	}
}

// sample3 is a three-player game of 2 positions with its per-player value
// targets and root values (seat-rotated, each row starting with the
// mover's value and root_q), as self-play records them.
func sample3() *Game {
	return &Game{Run: "0123abcd", Iteration: 2, NetworkSHA256: "ab", Record: &selfplay.GameRecord{
		ID:         5,
		Obs:        []float32{1, 0, 0, 1},
		Policy:     []float32{0.5, 0.5, 0, 1},
		Legal:      []uint8{1, 1, 0, 1},
		Value:      []float32{-1, 1},
		Values:     []float32{-1, 1, 0, 1, 0, -1},
		RootQ:      []float32{-0.25, 0.5},
		RootValues: []float32{-0.25, 0.125, 0.1, 0.5, 0.3, -0.7},
		Ply:        []int32{0, 1},
		Returns:    []float64{-1, 1, 0},
	}}
}

// TestGameRoundTripValues: a game of three players crosses the wire with
// every player's value targets and root values (they were dropped, so
// fleet shards of such games lacked the values array training needs),
// and the trainer's check wants them.
func TestGameRoundTripValues(t *testing.T) {
	g := sample3()
	data, err := EncodeGame(nil, g, 2)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeGame(data)
	if err != nil {
		t.Fatal(err)
	}
	if !sameRecord(back.Record, g.Record) {
		t.Fatalf("round trip changed the game:\n got %+v\nwant %+v", back.Record, g.Record)
	}
	shape := gameShape{obs: 2, actions: 2, players: 3}
	if err := shape.check(back.Record); err != nil {
		t.Fatalf("the trainer refuses a good three-player game: %v", err)
	}
	for name, edit := range map[string]func(r *selfplay.GameRecord){
		"no values":          func(r *selfplay.GameRecord) { r.Values = nil },
		"values not rotated": func(r *selfplay.GameRecord) { r.Values[0], r.Values[1] = r.Values[1], r.Values[0] },
		"root value NaN":     func(r *selfplay.GameRecord) { r.RootValues[4] = float32(math.NaN()) },
	} {
		bad := sample3().Record
		edit(bad)
		if err := shape.check(bad); err == nil {
			t.Errorf("%s: the trainer's check accepts it", name)
		}
	}
	two := sample().Record
	two.Values = []float32{1, -1, -1, 1, 1, -1}
	if err := (gameShape{obs: 2, actions: 3, players: 2}).check(two); err == nil {
		t.Error("per-player values in a two-player game: accepted")
	}
	odd := sample3()
	odd.Record.Values = odd.Record.Values[:5]
	if _, err := EncodeGame(nil, odd, 2); err == nil {
		t.Error("EncodeGame with 5 values for 2 positions: no error")
	}
}

func TestDecodeGameRejects(t *testing.T) {
	good, err := EncodeGame(nil, sample(), 2)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"empty":     nil,
		"magic":     append([]byte("CNPYGAM9"), good[8:]...),
		"truncated": good[:len(good)-1],
		"longer":    append(append([]byte{}, good...), 0),
		"header":    good[:20],
		"huge": func() []byte {
			g := sample()
			g.Record = &selfplay.GameRecord{Returns: []float64{}}
			d, _ := EncodeGame(nil, g, 1)
			// a header claiming 4M positions over an empty body
			return []byte(string(d[:12]) + `{"positions":4000000,"obs":1000000,"actions":1000000}`)
		}(),
	} {
		if _, err := DecodeGame(data); err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
	}
}

func FuzzDecodeGame(f *testing.F) {
	good, _ := EncodeGame(nil, sample(), 2)
	f.Add(good)
	f.Add(good[:30])
	three, _ := EncodeGame(nil, sample3(), 2)
	f.Add(three)
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := DecodeGame(data)
		if err != nil {
			return
		}
		// The trainer's check of a decoded game, on anything: an error
		// or nil, never a panic; the sample's shape accepts the sample.
		err = gameShape{obs: 2, actions: 3, players: 2}.check(g.Record)
		if sameRecord(g.Record, sample().Record) && err != nil {
			t.Fatalf("the sample fails the check of its own shape: %v", err)
		}
		obs := 1
		if p := g.Record.Positions(); p > 0 {
			obs = len(g.Record.Obs) / p
		}
		if obs == 0 {
			return // positions without observations cannot be re-encoded
		}
		again, err := EncodeGame(nil, g, obs)
		if err != nil {
			t.Fatalf("re-encoding a decoded game: %v", err)
		}
		back, err := DecodeGame(again)
		if err != nil || !sameRecord(back.Record, g.Record) {
			t.Fatalf("decode(encode(decode(x))) differs: %v", err)
		}
	})
}
