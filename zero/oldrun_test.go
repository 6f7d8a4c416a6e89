package zero

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOldConfigResumes: a zero.json written before the loop's flags
// became Config.Table and self-play's --noreuse became --reuse (at
// 311b2ec, by cmd/canopy/testdata/oldrun/make.sh) loads, and the same
// command given again with today's flags (--reuse=false for the old
// --noreuse) is the same run; another value is refused, named by flag.
func TestOldConfigResumes(t *testing.T) {
	old, ok, err := LoadConfig(filepath.Join("..", "cmd", "canopy", "testdata", "oldrun", "zero"))
	if err != nil || !ok {
		t.Fatalf("LoadConfig: ok %v, %v", ok, err)
	}
	if !old.SelfPlay.NoReuse {
		t.Fatalf("the fixture was made with --noreuse; read %+v", old.SelfPlay)
	}
	req := DefaultConfig("tictactoe")
	tab := req.Table()
	for _, kv := range [][2]string{{"games", "2"}, {"sims", "4"}, {"reuse", "false"}, {"steps", "2"}, {"batch", "4"},
		{"eval-games", "0"}, {"solver-positions", "0"}, {"baselines", "random"}, {"backend", "cpu"}} {
		if err := tab.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	req.Iterations = old.Iterations
	if err := sameRun(old, req); err != nil {
		t.Fatalf("the same command today: %v", err)
	}
	for _, kv := range [][2]string{{"reuse", "true"}, {"sims", "8"}, {"window-iters", "2"}, {"trees", "8"}} {
		c := req
		if err := c.Table().Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
		err := sameRun(old, c)
		name := map[string]string{"reuse": "noreuse"}[kv[0]] // zero.json's key, its flag until now
		if name == "" {
			name = kv[0]
		}
		if err == nil || !strings.Contains(err.Error(), "--"+name) {
			t.Errorf("--%s %s: %v, want a refusal naming --%s", kv[0], kv[1], err, name)
		}
	}
}
