package web

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// An az analysis with a per-player value head (Tetris Link for three:
// the built-in network has one value per player) carries a value per
// seat, each in [-1, 1], through the analyze call and every live
// snapshot; with a scalar head (Connect Four) or backup=paranoid, whose
// vectors only spread the mover's value, there is none.
func TestAnalysisSeatValues(t *testing.T) {
	_, hs := testServer(t, Config{})
	tl := create(t, hs, "tetrislink:players=3", "human", "human", "human")
	c4 := create(t, hs, "connect4", "human", "human")
	for _, tc := range []struct {
		id, agent string
		seats     int
	}{
		{tl.ID, "az:net=init,sims=8", 3},
		{tl.ID, "az:net=init,sims=8,backup=paranoid", 0},
		{c4.ID, "az:net=init,sims=8", 0},
		{tl.ID, "mcts:sims=8", 0},
		{tl.ID, "policy:net=init", 3}, // the network's own values by seat
		{c4.ID, "policy:net=init", 0},
	} {
		var an analysisJSON
		if code, msg := call(t, hs, "POST", "/api/games/"+tc.id+"/analyze", analyzeRequest{Agent: tc.agent}, &an); code != 200 {
			t.Fatalf("%s: %d %s", tc.agent, code, msg)
		}
		checkSeatValues(t, tc.agent, an.Values, tc.seats)
		if tc.id != tl.ID || tc.agent == "mcts:sims=8" || tc.agent == "policy:net=init" {
			continue // the live stream of the per-player cases suffices
		}
		ch, cancel := openSSE(t, hs, "/api/games/"+tc.id+"/analyze/live?every=50ms&agent="+url(tc.agent), nil)
		snaps, errs := snapshots(t, ch)
		cancel()
		if len(errs) > 0 || len(snaps) == 0 {
			t.Fatalf("%s: live: %d snapshots, errors %v", tc.agent, len(snaps), errs)
		}
		for i, sn := range snaps {
			checkSeatValues(t, fmt.Sprintf("%s: live snapshot %d", tc.agent, i), sn.Values, tc.seats)
		}
	}
}

func checkSeatValues(t *testing.T, what string, v []float64, seats int) {
	t.Helper()
	if len(v) != seats {
		t.Fatalf("%s: values %v, want %d", what, v, seats)
	}
	var nonzero bool
	for _, x := range v {
		if x < -1 || x > 1 {
			t.Errorf("%s: value %v out of [-1, 1]", what, x)
		}
		nonzero = nonzero || x != 0
	}
	if seats > 0 && !nonzero {
		t.Errorf("%s: every seat's value is 0: %v", what, v)
	}
}

// The analysis panel shows the value per seat, one badge per seat.
func TestBrowserSeatValues(t *testing.T) {
	_, hs := testServer(t, Config{})
	st := create(t, hs, "tetrislink:players=3", "human", "human", "human")
	p := newPage(t, hs)
	p.open("#/game/" + st.ID)
	p.until("the board", `!!document.querySelector("svg.board") && !!document.getElementById("analyst")`)
	p.do("naming the analyzer", chromedp.SetValue(chromedp.ID("analyst"), "az:net=init,sims=32"))
	p.click("#analyze")
	p.until("the final analysis with values per seat", `(() => { const a = document.getElementById("analysis");
		return a && a.dataset.final === "true" && document.querySelectorAll("#seatvalues .seatvalue").length === 3; })()`)
	for q := range 3 {
		s := eval[string](p, fmt.Sprintf(`document.querySelector('#seatvalues .seatvalue[data-seat="%d"]').textContent`, q))
		var x float64
		if _, err := fmt.Sscanf(s, fmt.Sprintf("P%d %%g", q), &x); err != nil || x < -1 || x > 1 {
			t.Errorf("seat %d's value reads %q", q, s)
		}
	}
	p.screenshot("tetrislink-seat-values")
}
