package pyapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// buf returns n elements of size bytes as a byte slice (aligned: backed
// by uint64s).
func buf(n, size int) []byte {
	w := make([]uint64, (n*size+7)/8+1)
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n*size)
}

func req(t *testing.T, method string, args any) []byte {
	t.Helper()
	a, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"method": method, "args": json.RawMessage(a)})
	return b
}

func kind(err error) string {
	if e, ok := err.(*Error); ok {
		return e.Kind
	}
	return ""
}

func TestEnvSelfPlayTicTacToe(t *testing.T) {
	l := NewLibrary()
	const n = 2
	bufs := [][]byte{buf(n*18, 4), buf(n*9, 1), buf(n*2, 4), buf(n, 1), buf(n, 1), buf(n, 4), buf(n, 8)}
	h, _, err := l.Open(req(t, "env", map[string]any{"game": "tictactoe", "num_envs": n}), bufs)
	if err != nil {
		t.Fatal(err)
	}
	acts, legal, rew, term := i64s(bufs[6]), bufs[1], f32s(bufs[2]), bufs[3]
	// X plays 0, 1, 2 (cells of the top row) while O plays 3, 4: X wins
	// on its third move, by the rules.
	for i, a := range []int64{0, 3, 1, 4, 2} {
		if legal[a] != 1 {
			t.Fatalf("move %d: cell %d not legal", i, a)
		}
		acts[0], acts[1] = a, a
		if err := l.Step(h); err != nil {
			t.Fatal(err)
		}
	}
	if term[0] != 1 || rew[0] != 1 || rew[1] != -1 {
		t.Fatalf("after X's top row: terminated %d, rewards %v; want 1, [1 -1]", term[0], rew[:2])
	}
	for a := range 9 {
		if legal[a] != 1 {
			t.Fatalf("the next game's cell %d is not legal", a)
		}
	}
	acts[0], acts[1] = 0, 9
	if err := l.Step(h); err == nil || kind(err) != "ValueError" || !strings.Contains(err.Error(), "actions[1] = 9") {
		t.Fatalf("out-of-range action: %v", err)
	}
	if err := l.Close(h); err != nil {
		t.Fatal(err)
	}
	if err := l.Step(h); err == nil || kind(err) != "RuntimeError" {
		t.Fatalf("step after close: %v", err)
	}
	if l.Live() != 0 {
		t.Fatalf("%d handles live after close", l.Live())
	}
}

func TestOpenChecksBuffers(t *testing.T) {
	l := NewLibrary()
	bufs := [][]byte{buf(18, 4), buf(9, 1), buf(2, 4), buf(1, 1), buf(1, 1), buf(1, 4), buf(1, 8)}
	bufs[0] = bufs[0][:17*4]
	_, _, err := l.Open(req(t, "env", map[string]any{"game": "tictactoe", "num_envs": 1}), bufs)
	if err == nil || !strings.Contains(err.Error(), "buffer obs") {
		t.Fatalf("short obs buffer: %v", err)
	}
	_, _, err = l.Open(req(t, "env", map[string]any{"game": "nosuch", "num_envs": 1}), bufs)
	if err == nil || kind(err) != "ValueError" || !strings.Contains(err.Error(), "game_spec") {
		t.Fatalf("bad game: %v", err)
	}
}

// evaluate plays Python's part of a session with a uniform evaluator
// until the run is done.
func evaluate(t *testing.T, l *Library, h int64, bufs [][]byte, stopAfter int) int {
	t.Helper()
	batches := 0
	for {
		ev, err := l.Wait(h, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case ev > 0:
			clear(bufs[2])
			clear(bufs[3])
			batches++
			if batches == stopAfter {
				if _, err := l.Call([]byte(`{"method":"cancel","handle":` + jsonInt(h) + `}`)); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := l.Submit(h); err != nil {
				t.Fatal(err)
			}
		case ev == WaitDone:
			return batches
		}
	}
}

func jsonInt(h int64) string { b, _ := json.Marshal(h); return string(b) }

func TestSearchFindsWinAndCancels(t *testing.T) {
	l := NewLibrary()
	const b = 8
	bufs := [][]byte{buf(b*84, 4), buf(b*7, 1), buf(b*7, 4), buf(b, 4)}
	// Connect Four: the first player has three in column 1 and wins by
	// playing it again (action 0), hand-worked.
	h, _, err := l.Open(req(t, "search", map[string]any{"game": "connect4", "moves": []string{"1 2 1 2 1 2", ""},
		"sims": 100, "rule": "puct", "batch": b}), bufs)
	if err != nil {
		t.Fatal(err)
	}
	evaluate(t, l, h, bufs, -1)
	res := [][]byte{buf(2*7, 4), buf(2, 4), buf(2, 8), buf(2*7, 4)}
	if _, err := l.Exchange(h, "results", nil, res); err != nil {
		t.Fatal(err)
	}
	if a := i64s(res[2]); a[0] != 0 {
		t.Fatalf("chose %d, want the winning column 1 (action 0)", a[0])
	}
	var total float32
	for _, v := range f32s(res[0])[7:] {
		total += v
	}
	if total != 100 {
		t.Fatalf("initial position: %v visits, want 100", total)
	}
	l.Close(h)

	// Cancelling in the middle ends the run; the handle closes cleanly.
	h, _, err = l.Open(req(t, "search", map[string]any{"game": "connect4", "moves": []string{"", "", ""}, "sims": 1000, "batch": b}), bufs)
	if err != nil {
		t.Fatal(err)
	}
	if n := evaluate(t, l, h, bufs, 3); n != 3 {
		t.Fatalf("%d batches after cancelling at the third", n)
	}
	if err := l.Close(h); err != nil {
		t.Fatal(err)
	}
	if l.Live() != 0 {
		t.Fatal("handles left")
	}
}

func TestSubmitRejectsNaN(t *testing.T) {
	l := NewLibrary()
	bufs := [][]byte{buf(4*84, 4), buf(4*7, 1), buf(4*7, 4), buf(4, 4)}
	h, _, err := l.Open(req(t, "search", map[string]any{"game": "connect4", "moves": []string{""}, "sims": 10, "batch": 4}), bufs)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(h)
	for {
		ev, err := l.Wait(h, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if ev > 0 {
			break
		}
	}
	f32s(bufs[3])[0] = float32(nan())
	if err := l.Submit(h); err == nil || kind(err) != "ValueError" || !strings.Contains(err.Error(), "values[0]") {
		t.Fatalf("NaN value: %v", err)
	}
}

func nan() float64 { z := 0.0; return z / z }

func TestParseSettingsIsAzTable(t *testing.T) {
	st, err := ParseSettings(map[string]string{"c": "2.5", "leaves": "4"})
	if err != nil || st.C != 2.5 || st.Leaves != 4 {
		t.Fatalf("%+v %v", st, err)
	}
	if _, err := ParseSettings(map[string]string{"c": "-1"}); err == nil {
		t.Fatal("c=-1 accepted")
	}
	if _, err := ParseSettings(map[string]string{"nosuch": "1"}); err == nil || !strings.Contains(err.Error(), "sims") {
		t.Fatalf("unknown key: %v", err)
	}
}

// TestSearchTwoConsumers: with more leaves in flight than two batches the
// session runs two batcher consumers; the results must not depend on it
// (a search depends only on its seeds and the evaluator's rows), and
// cancelling with a batch held and another waiting must drain cleanly.
func TestSearchTwoConsumers(t *testing.T) {
	if consumersFor(64, 8) != 2 || consumersFor(64, 64) != 1 {
		t.Fatalf("consumersFor(64, 8) = %d, consumersFor(64, 64) = %d; want 2 and 1", consumersFor(64, 8), consumersFor(64, 64))
	}
	l := NewLibrary()
	moves := make([]string, 64)
	for i := range moves {
		moves[i] = strings.Repeat("4 ", i%5)
	}
	visits := func(batch int) []float32 {
		bufs := [][]byte{buf(batch*84, 4), buf(batch*7, 1), buf(batch*7, 4), buf(batch, 4)}
		h, _, err := l.Open(req(t, "search", map[string]any{"game": "connect4", "moves": moves, "sims": 40, "batch": batch, "seed": 3}), bufs)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close(h)
		evaluate(t, l, h, bufs, -1)
		res := [][]byte{buf(64*7, 4), buf(64, 4), buf(64, 8), buf(64*7, 4)}
		if _, err := l.Exchange(h, "results", nil, res); err != nil {
			t.Fatal(err)
		}
		return slices.Clone(f32s(res[0]))
	}
	one, two := visits(64), visits(8)
	if !slices.Equal(one, two) {
		t.Fatalf("visits differ between batches of 64 (one consumer) and 8 (two):\n%v\n%v", one[:14], two[:14])
	}

	bufs := [][]byte{buf(8*84, 4), buf(8*7, 1), buf(8*7, 4), buf(8, 4)}
	h, _, err := l.Open(req(t, "search", map[string]any{"game": "connect4", "moves": moves, "sims": 400, "batch": 8}), bufs)
	if err != nil {
		t.Fatal(err)
	}
	if n := evaluate(t, l, h, bufs, 5); n != 5 {
		t.Fatalf("%d batches after cancelling at the fifth", n)
	}
	if err := l.Close(h); err != nil {
		t.Fatal(err)
	}
	if l.Live() != 0 {
		t.Fatal("handles left")
	}
}

// TestSequentialGamePointsToView: a simultaneous game is refused with a
// ValueError naming its sequential view (games.SequentialViewer), with
// the same options; a sequential game passes.
func TestSequentialGamePointsToView(t *testing.T) {
	g, err := newGame("sushigo:players=3")
	if err != nil {
		t.Fatal(err)
	}
	err = sequentialGame(g, "search")
	if kind(err) != "ValueError" || !strings.Contains(err.Error(), `use "sushigo-seq:players=3"`) {
		t.Fatalf("sushigo: %v (%s), want a ValueError naming sushigo-seq:players=3", err, kind(err))
	}
	if g, err = newGame("sushigo-seq:players=3"); err != nil {
		t.Fatal(err)
	}
	if err := sequentialGame(g, "search"); err != nil {
		t.Fatalf("sushigo-seq: %v", err)
	}
}
