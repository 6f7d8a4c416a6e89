package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/agent"
	_ "github.com/canopy-go/canopy/games/all"
)

var updateOptions = flag.Bool("update-options", false, "rewrite testdata/option-defaults.txt from the commands and agents")

// optionDefaults walks every command's flags and every registered agent's
// options (not the deprecated spellings kept by aliasFlag, which set
// another flag) and returns, for each name declared in more than one place with
// more than one default, one line "name: place=default place=default ...".
// Places are "canopy CMD --name" for flags and "AGENT:name" for agent
// options; defaults are as help shows them ("" for an empty one).
func optionDefaults() []string {
	type use struct{ place, def string }
	uses := map[string][]use{}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range commands {
			if !yield(n) {
				return
			}
		}
	}) {
		c := commands[name]
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		c.Setup(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if _, ok := aliasOf(f); ok {
				return // an old spelling of another flag, which is counted
			}
			uses[f.Name] = append(uses[f.Name], use{"canopy " + name + " --" + f.Name, f.DefValue})
		})
	}
	for _, r := range agent.Registered() {
		for _, o := range r.Options {
			uses[o.Key] = append(uses[o.Key], use{r.Name + ":" + o.Key, o.Default})
		}
	}
	var lines []string
	for name, us := range uses {
		defs := map[string]bool{}
		for _, u := range us {
			defs[u.def] = true
		}
		if len(defs) < 2 {
			continue
		}
		sort.Slice(us, func(i, j int) bool { return us[i].place < us[j].place })
		parts := make([]string, len(us))
		for i, u := range us {
			parts[i] = fmt.Sprintf("%s=%q", u.place, u.def)
		}
		lines = append(lines, name+": "+strings.Join(parts, " "))
	}
	sort.Strings(lines)
	return lines
}

// TestOptionDefaultsRatchet holds the names that have two defaults (issue
// 39, item 1: one name, one default, one meaning) to the recorded list:
// a new command flag or agent option that reuses a name with another
// default fails here, and so does a fix that is not recorded (the list
// only shrinks). Run with -update-options after removing a conflict.
func TestOptionDefaultsRatchet(t *testing.T) {
	path := filepath.Join("testdata", "option-defaults.txt")
	got := optionDefaults()
	if *updateOptions {
		head := "# Names declared with more than one default across canopy's commands and agents (TestOptionDefaultsRatchet).\n# This list must only shrink: give a new option a name of its own, or the same default.\n"
		if err := os.WriteFile(path, []byte(head+strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with go test -run TestOptionDefaultsRatchet -update-options)", err)
	}
	var want []string
	for _, l := range strings.Split(string(raw), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			want = append(want, l)
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			t.Errorf("a name with more than one default that is not recorded:\n  %s\nuse one default (or another name); if a recorded conflict changed, rerun with -update-options", l)
		}
	}
	for _, l := range want {
		if !slices.Contains(got, l) {
			t.Errorf("recorded conflict no longer found (fixed? then rerun with -update-options to shrink the list):\n  %s", l)
		}
	}
}

// TestRenamedFlagsKeepOldSpellings runs the flags renamed for one name,
// one meaning under their old spellings: each still sets the renamed
// flag (the range error names the new flag) and says once, on stderr,
// which flag to use instead; the new spellings say nothing of the kind.
func TestRenamedFlagsKeepOldSpellings(t *testing.T) {
	tmp := t.TempDir()
	for _, tc := range []struct {
		old, new string
		args     []string // the command, with the flag last and a bad value following
		value    string
	}{
		{"batch", "net-batch", []string{"selfplay", "--game", "tictactoe", "--out", filepath.Join(tmp, "sp")}, "-1"},
		{"batch", "net-batch", []string{"bench", "search", "--game", "tictactoe", "--quiet", "--out", filepath.Join(tmp, "bs")}, "-1"},
		{"steps", "env-steps", []string{"ppo", "--game", "tictactoe", "--out", filepath.Join(tmp, "ppo"), "--quiet"}, "0"},
		{"warmup", "league-warmup", []string{"ppo", "--game", "tictactoe", "--out", filepath.Join(tmp, "ppo"), "--quiet"}, "-1"},
		{"eval", "final-games", []string{"tune", "--games", "2", "--iters", "0"}, "0"},
		{"report", "report-every", []string{"worker", "--nats", "nats://127.0.0.1:4222"}, "-1s"},
		// A value the flag takes; --games 0 makes the command refuse.
		{"dirichlet", "dir", []string{"selfplay", "--game", "tictactoe", "--games", "0", "--out", filepath.Join(tmp, "sp")}, "0.3"},
	} {
		warn := "--" + tc.old + " is deprecated; use --" + tc.new
		code, _, errs := runCLI(t, "", append(tc.args, "--"+tc.old, tc.value)...)
		if code != 2 || strings.Count(errs, warn) != 1 || !strings.Contains(strings.ReplaceAll(errs, warn, ""), "--"+tc.new) && tc.old != "dirichlet" {
			t.Errorf("%s --%s %s: status %d, stderr %q; want 2, one %q and the new name in the error", tc.args[0], tc.old, tc.value, code, errs, warn)
		}
		code, _, errs = runCLI(t, "", append(tc.args, "--"+tc.new, tc.value)...)
		if code != 2 || strings.Contains(errs, "deprecated") {
			t.Errorf("%s --%s %s: status %d, stderr %q; want 2 and no deprecation", tc.args[0], tc.new, tc.value, code, errs)
		}
	}
}

// TestFlagSetSeesOldSpellings: a flag given under a deprecated spelling
// counts as given (a resumed run compares what was given).
func TestFlagSetSeesOldSpellings(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Int("env-steps", 1, "")
	aliasFlag(fs, "steps", "env-steps")
	if err := fs.Parse([]string{"--steps", "3"}); err != nil {
		t.Fatal(err)
	}
	if !flagSet(fs, "env-steps") || fs.Lookup("env-steps").Value.String() != "3" {
		t.Errorf("--steps 3: flagSet(env-steps) = %v, value %s; want true, 3", flagSet(fs, "env-steps"), fs.Lookup("env-steps").Value)
	}
}
