package zoo

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4"
	_ "github.com/canopy-go/canopy/games/connect4d"
	_ "github.com/canopy-go/canopy/games/strands"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search/engine"
)

// The shipped Connect Four network loads as the game's default, carries
// its training lineage, and plays: the network alone (no search) beats
// the random agent.
func TestShippedConnect4(t *testing.T) {
	g := games.MustNew("connect4")
	net, src, err := nets.OpenNet("default", g)
	if err != nil {
		t.Fatal(err)
	}
	if src.Ref != "connect4-zero" || net.PolicySize() != 7 {
		t.Fatalf("default connect4 net: %+v", src)
	}
	if _, src, err := nets.OpenNet("connect4-zero-v1", g); err != nil || src.Ref != "connect4-zero-v1" {
		t.Errorf("the earlier shipped net: %+v, %v", src, err)
	}
	_, meta, err := nets.DecodeWithMetadata(connect4)
	if err != nil {
		t.Fatal(err)
	}
	if meta["canopy.train.game"] != "connect4" || meta["canopy.train.iteration"] == "" || meta["canopy.train.iteration"] == "0" {
		t.Errorf("metadata %v: want the training lineage of a trained connect4 net", meta)
	}
	res, err := arena.Tournament(context.Background(), g, arena.TournamentConfig{
		Agents: []string{"policy:net=default,backend=cpu", "random"}, Games: 20, Seed: 1, Parallel: 4, Bootstrap: -1})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Pairwise[0][1]; p.Wins < 18 {
		t.Errorf("shipped network alone against random: %d-%d-%d, want at least 18 wins of 20", p.Wins, p.Draws, p.Losses)
	}
	if engine.Shared.Open() != 0 {
		t.Errorf("%d engines left open", engine.Shared.Open())
	}
}

// The shipped Connect4d network is connect4d's default, carries its
// lineage, and its policy alone beats onestep, which takes any winning
// action and blocks the opponent's (random otherwise): the untrained
// network's policy loses to it.
func TestShippedConnect4d(t *testing.T) {
	g := games.MustNew("connect4d")
	net, src, err := nets.OpenNet("default", g)
	if err != nil {
		t.Fatal(err)
	}
	if src.Ref != "connect4d-zero" || net.PolicySize() != g.NumActions() {
		t.Fatalf("default connect4d net: %+v", src)
	}
	_, meta, err := nets.DecodeWithMetadata(connect4d)
	if err != nil {
		t.Fatal(err)
	}
	if meta["canopy.train.game"] != g.Spec() || meta["canopy.train.iteration"] != "40" {
		t.Errorf("metadata %v: want iteration 40 of a %s run", meta, g.Spec())
	}
	for _, c := range []struct {
		net     string
		atLeast bool
	}{{"default", true}, {"init", false}} {
		res, err := arena.Tournament(context.Background(), g, arena.TournamentConfig{
			Agents: []string{"policy:net=" + c.net + ",backend=cpu", "onestep"}, Games: 20, Seed: 1, Parallel: 4, Bootstrap: -1})
		if err != nil {
			t.Fatal(err)
		}
		p := res.Pairwise[0][1]
		if won := p.Wins >= 16; won != c.atLeast {
			t.Errorf("policy:net=%s against onestep: %d-%d-%d (want at least 16 wins of 20: %v)", c.net, p.Wins, p.Draws, p.Losses, c.atLeast)
		}
	}
	if engine.Shared.Open() != 0 {
		t.Errorf("%d engines left open", engine.Shared.Open())
	}
}

// The shipped Strands network is the side-4 board's default, carries its
// lineage, and its policy alone beats strands-greedy (the study's
// connected-area baseline), which the untrained network's policy does not.
func TestShippedStrands(t *testing.T) {
	g := games.MustNew("strands:size=4")
	net, src, err := nets.OpenNet("default", g)
	if err != nil {
		t.Fatal(err)
	}
	if src.Ref != "strands-zero" || net.PolicySize() != g.NumActions() {
		t.Fatalf("default strands net: %+v", src)
	}
	_, meta, err := nets.DecodeWithMetadata(strands)
	if err != nil {
		t.Fatal(err)
	}
	if meta["canopy.train.game"] != g.Spec() || meta["canopy.train.iteration"] != "300" {
		t.Errorf("metadata %v: want iteration 300 of a %s run", meta, g.Spec())
	}
	for _, c := range []struct {
		net  string
		wins bool
	}{{"default", true}, {"init", false}} {
		res, err := arena.Tournament(context.Background(), g, arena.TournamentConfig{
			Agents: []string{"policy:net=" + c.net + ",backend=cpu", "strands-greedy"}, Games: 20, Seed: 1, Parallel: 4, Bootstrap: -1})
		if err != nil {
			t.Fatal(err)
		}
		p := res.Pairwise[0][1]
		if won := p.Wins >= 18; won != c.wins {
			t.Errorf("policy:net=%s against strands-greedy: %d-%d-%d (18 or more wins: %t, want %t)", c.net, p.Wins, p.Draws, p.Losses, won, c.wins)
		}
	}
}
