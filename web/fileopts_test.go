package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/agent"
)

// The server confines every agent option that names a file to the run
// directories, whichever agent declares it (issue 39, item 5: the guard
// derives the options from the registry's marks instead of a hand-kept
// list, which had missed the solver's book=).
func TestFileOptionsConfined(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside.bin")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := testServer(t, Config{Runs: []string{t.TempDir()}})
	for _, text := range []string{
		"solver:book=" + outside,
		"az:net=" + outside,
		"policy:net=" + outside,
		"mcts:eval=" + outside,
		"mcts:eval=blend,static=" + outside,
		"mcts-v:eval=" + outside,
	} {
		err := s.checkAgentSpec(text)
		if err == nil || !strings.Contains(err.Error(), "only inside the run directories") {
			t.Errorf("%s: %v, want refused", text, err)
		}
	}
	for _, text := range []string{"solver:book=none", "solver:book=default", "az:net=init", "mcts:eval=rollout"} {
		if err := s.checkAgentSpec(text); err != nil {
			t.Errorf("%s: %v, want accepted (names no file)", text, err)
		}
	}
	// Every option the registry marks as naming a file is guarded, and
	// the marks are where the guard expects them.
	marked := 0
	for _, r := range agent.Registered() {
		for _, o := range r.Options {
			if o.File {
				marked++
			}
		}
	}
	if marked == 0 {
		t.Error("no agent option is marked as naming a file")
	}
}
