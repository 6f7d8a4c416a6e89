package onnx

import (
	"math"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

func gameOf(t testing.TB, n *nets.Net) games.Game {
	t.Helper()
	g, err := games.New(n.Config().Game)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestRoundTrip: export then import restores every tensor bit for bit and
// the outputs exactly.
func TestRoundTrip(t *testing.T) {
	for name, n := range testNets(t) {
		t.Run(name, func(t *testing.T) {
			g := gameOf(t, n)
			buf, err := Export(n, ExportOptions{Game: g})
			if err != nil {
				t.Fatal(err)
			}
			m, err := Decode(buf, "")
			if err != nil {
				t.Fatal(err)
			}
			back, err := Import(m, g, ImportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if a, b := back.Config(), n.Config(); a.Head != b.Head || a.JSON() != withPreset(b, "onnx").JSON() {
				t.Fatalf("config %s, want %s", a.JSON(), b.JSON())
			}
			for _, p := range n.Params() {
				q, ok := back.Param(p.Name)
				if !ok {
					t.Fatalf("no %s after import", p.Name)
				}
				for i := range p.Data {
					if math.Float32bits(p.Data[i]) != math.Float32bits(q.Data[i]) {
						t.Fatalf("%s[%d] = %v, want %v", p.Name, i, q.Data[i], p.Data[i])
					}
				}
			}
			x := testInput(n, 5, 3)
			p1, v1 := forward(n, 5, x)
			p2, v2 := forward(back, 5, x)
			for i := range p1 {
				if math.Float32bits(p1[i]) != math.Float32bits(p2[i]) {
					t.Fatalf("policy[%d] %v, want %v", i, p2[i], p1[i])
				}
			}
			for i := range v1 {
				if math.Float32bits(v1[i]) != math.Float32bits(v2[i]) {
					t.Fatalf("value[%d] %v, want %v", i, v2[i], v1[i])
				}
			}
		})
	}
}

func withPreset(c nets.Config, p string) nets.Config {
	c.Preset = p
	return c
}
