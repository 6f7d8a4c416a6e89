package rl

import (
	"path/filepath"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// Study 002's third plane: every cell of a legal column is 1, every cell
// of a full column 0; the first two planes are the game's own.
func TestLegalPlaneConnect4(t *testing.T) {
	g := connect4Game(t)
	s := g.NewInitialState()
	for range 6 {
		s.Apply(4) // fills column 4
	}
	s.Apply(0)
	m := games.NewMask(7)
	s.Legal(m)
	enc, err := nets.NewEncoder(g, nets.Encoding{LegalPlane: true})
	if err != nil {
		t.Fatal(err)
	}
	if enc.Size() != 3*6*7 {
		t.Fatalf("size %d, want 126", enc.Size())
	}
	got := make([]float32, enc.Size())
	enc.Encode(s, s.CurrentPlayer(), m, got)
	want := make([]float32, 2*6*7)
	s.Observation(s.CurrentPlayer(), want)
	for i, v := range want {
		if got[i] != v {
			t.Fatalf("value %d = %g, the game's observation has %g", i, got[i], v)
		}
	}
	for r := range 6 {
		for c := range 7 {
			w := float32(1)
			if c == 4 {
				w = 0
			}
			if v := got[2*42+r*7+c]; v != w {
				t.Errorf("legal plane row %d column %d = %g, want %g", r, c, v, w)
			}
		}
	}
}

// For a game whose actions are cells (tic-tac-toe), the plane marks the
// empty cells.
func TestLegalPlaneCells(t *testing.T) {
	g, err := games.New("tictactoe")
	if err != nil {
		t.Fatal(err)
	}
	s := g.NewInitialState()
	s.Apply(0)
	s.Apply(4)
	m := games.NewMask(9)
	s.Legal(m)
	enc, err := nets.NewEncoder(g, nets.Encoding{LegalPlane: true})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, enc.Size())
	enc.Encode(s, 0, m, got)
	plane := got[games.ObservationSize(g):]
	for c, v := range plane {
		if w := float32(1); (c == 0 || c == 4) && v != 0 || c != 0 && c != 4 && v != w {
			t.Errorf("cell %d = %g", c, v)
		}
	}
}

// A net's input size selects the encoding: nets saved without the legal
// plane (the connect4-ppo preset's two planes) load and keep working; a
// three-plane net gets the plane; any other size is an error.
func TestEncodingFor(t *testing.T) {
	g := connect4Game(t)
	cfg, err := nets.Preset("connect4-ppo")
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConvChannels, cfg.Dense = []int{4}, 8
	if cfg, err = cfg.ForGame(g); err != nil {
		t.Fatal(err)
	}
	old, err := nets.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.safetensors")
	if err := old.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := nets.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := nets.EncodingFor(g, loaded.InputSize()); err != nil || e.LegalPlane {
		t.Fatalf("two-plane net: %+v, %v", e, err)
	}
	env, err := NewEnv(g, EnvOptions{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewPPO(loaded, env, DefaultOptions()); err != nil {
		t.Fatalf("two-plane net on the default environment: %v", err)
	}
	cfg.InputPlanes = 3
	three, err := nets.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := nets.EncodingFor(g, three.InputSize()); err != nil || !e.LegalPlane {
		t.Fatalf("three-plane net: %+v, %v", e, err)
	}
	env3, err := NewEnv(g, EnvOptions{N: 2, Encoding: nets.Encoding{LegalPlane: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewPPO(three, env3, DefaultOptions()); err != nil {
		t.Fatalf("three-plane net on the legal-plane environment: %v", err)
	}
	if _, err := NewPPO(loaded, env3, DefaultOptions()); err == nil {
		t.Fatal("two-plane net accepted on the legal-plane environment")
	}
	cfg.InputPlanes = 4
	four, err := nets.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nets.EncodingFor(g, four.InputSize()); err == nil {
		t.Fatal("four-plane net accepted")
	}
}
