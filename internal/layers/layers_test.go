package layers

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/canopy-go/canopy/"

// rank orders the top-level packages bottom-up, as in ARCHITECTURE.md.
// Sub-packages take their parent's rank unless listed: every game package
// (games/NAME) is at the games layer by its path, beside the two APIs it
// implements and uses, games and agent (OpenSpiel's spiel.h beside
// spiel_bots.h), so that a game can register its own agents.
var rank = map[string]int{
	"spec":                   0,
	"internal/atomicfile":    0,
	"internal/cputime":       0,
	"internal/runlock":       0,
	"internal/rundir":        0,
	"internal/readfile":      0,
	"internal/refdata":       3,
	"kernels":                1,
	"cuda":                   1,
	"games":                  2,
	"agent":                  2,
	"games/gametest":         3,
	"games/perft":            3,
	"nets":                   4,
	"batcher":                5,
	"search":                 6,
	"arena":                  7,
	"selfplay":               7,
	"fleet":                  7,
	"train":                  7,
	"rl":                     7,
	"plots":                  8,
	"bench":                  8,
	"zero":                   8,
	"pyapi":                  8,
	"python":                 9,
	"web":                    8,
	"cmd":                    9,
	"internal/layers":        9,
	"perf":                   9,
	"docs/studies/seqblocks": 9,
}

// apis are the two interfaces of the games layer. Within that layer they
// import only each other (agent imports games): a game package implements
// or uses them, never the reverse, so a game-specific agent lives in its
// game's package and the baselines in agent play every game.
var apis = map[string]bool{"games": true, "agent": true}

// rankOf returns the rank of a package path relative to the module: that
// of the longest listed path it is, or is under.
func rankOf(rel string) (int, bool) {
	for p := rel; p != "."; {
		if r, ok := rank[p]; ok {
			return r, true
		}
		i := strings.LastIndex(p, "/")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return 0, false
}

func TestLayersPointDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(p.ImportPath, module)
		r, ok := rankOf(rel)
		if !ok {
			t.Errorf("package %s has no layer: add it to ARCHITECTURE.md and this test", rel)
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			irel := strings.TrimPrefix(imp, module)
			ir, ok := rankOf(irel)
			if ok && ir > r {
				t.Errorf("%s (layer %d) imports %s (layer %d): layers must point down", rel, r, irel, ir)
			}
			if ok && ir == r && apis[rel] && !apis[irel] {
				t.Errorf("%s, an API of layer %d, imports %s: the APIs import no package that implements them", rel, r, irel)
			}
		}
	}
}

// gameImporters are the packages whose code may import a game package
// (games/NAME, games/all included): the games themselves, and the
// commands, harnesses and bindings that register games or pick one by
// name. Every other package sees games only through the games API (the
// web UI draws a game through games.Boarder, not a type switch on its
// state: issue 39, item 5). gametest and perft are helpers of the API,
// not games.
var gameImporters = []string{"games", "cmd", "perf", "pyapi", "docs/studies", "nets/nettest"}

// gameImportsLeft are the imports of a game package by another package
// that remain to be replaced by a capability (package -> game package).
var gameImportsLeft = map[string]string{}

func TestOnlyHarnessesImportGames(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	under := func(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(p.ImportPath, module)
		allowed := false
		for _, d := range gameImporters {
			allowed = allowed || under(rel, d)
		}
		if allowed {
			continue
		}
		checked++
		for _, imp := range p.Imports {
			irel, ok := strings.CutPrefix(imp, module)
			if !ok || !under(irel, "games") || irel == "games" || under(irel, "games/gametest") || under(irel, "games/perft") || gameImportsLeft[rel] == irel {
				continue
			}
			t.Errorf("%s imports the game package %s: use a capability of the games API (a small interface found by type assertion, games.go), or add %s to gameImporters if it registers or picks games by name", rel, irel, rel)
		}
	}
	if checked < 20 {
		t.Errorf("only %d packages checked: is the listing wrong?", checked)
	}
}
