package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/agent"
	_ "github.com/canopy-go/canopy/games/all"
	"github.com/canopy-go/canopy/spec"
)

var updateOptions = flag.Bool("update-options", false, "rewrite testdata/option-defaults.txt from the commands and agents (keeping the recorded reasons)")

// decl is one declaration of an option name: a command's flag or an
// agent's option.
type decl struct {
	place, def, help string
	// override: the default is a role's declared override of another
	// table's (spec.Role; the help carries its note).
	override bool
}

// optionDecls walks every command's flags and every registered agent's
// options (not the deprecated spellings kept by aliasFlag, which set
// another flag) and returns the declarations of each name. Places are
// "canopy CMD --name" for flags and "AGENT:name" for agent options;
// defaults are as help shows them ("" for an empty one).
func optionDecls() map[string][]decl {
	uses := map[string][]decl{}
	for _, name := range slices.Sorted(maps.Keys(commands)) {
		c := commands[name]
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		c.Setup(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if _, ok := aliasOf(f); ok {
				return // an old spelling of another flag, which is counted
			}
			_, _, _, ov := spec.OverrideNote(f.Usage)
			uses[f.Name] = append(uses[f.Name], decl{"canopy " + name + " --" + f.Name, f.DefValue, f.Usage, ov})
		})
	}
	for _, r := range agent.Registered() {
		for _, o := range r.Options {
			_, _, _, ov := spec.OverrideNote(o.Help)
			uses[o.Key] = append(uses[o.Key], decl{r.Name + ":" + o.Key, o.Default, o.Help, ov})
		}
	}
	for _, us := range uses {
		sort.Slice(us, func(i, j int) bool { return us[i].place < us[j].place })
	}
	return uses
}

// meaning is what a declaration's help says the option is: its first
// clause (up to the first ',', ';', ':', '(' or '['), lower-cased. Two
// declarations of one name whose first clauses differ are, unless the
// difference is recorded as one meaning worded two ways, one name with
// two meanings (perft's --depth and mcts's depth= were).
func meaning(help string) string {
	if i := strings.IndexAny(help, ",;:([."); i >= 0 {
		help = help[:i]
	}
	return strings.ToLower(strings.TrimSpace(help))
}

// optionConflicts returns the names declared with more than one default
// (role overrides apart: a declared override is the one way a name may
// take another default) and the names whose declarations give more than
// one meaning, one line each: "name: place=value place=value ...".
func optionConflicts() (defaults, meanings []string) {
	for name, us := range optionDecls() {
		defs, means := map[string]bool{}, map[string]bool{}
		var dparts, mparts []string
		for _, u := range us {
			means[meaning(u.help)] = true
			mparts = append(mparts, fmt.Sprintf("%s=%q", u.place, meaning(u.help)))
			if u.override {
				continue
			}
			defs[u.def] = true
			dparts = append(dparts, fmt.Sprintf("%s=%q", u.place, u.def))
		}
		if len(defs) > 1 {
			defaults = append(defaults, name+": "+strings.Join(dparts, " "))
		}
		if len(means) > 1 {
			meanings = append(meanings, name+": "+strings.Join(mparts, " "))
		}
	}
	sort.Strings(defaults)
	sort.Strings(meanings)
	return defaults, meanings
}

// recorded is testdata/option-defaults.txt: per section ("defaults",
// "meanings"), each recorded line and the reason given for it.
type recorded map[string]map[string]string

func readRecorded(path string) (recorded, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := recorded{"defaults": {}, "meanings": {}}
	section, last := "", ""
	for _, l := range strings.Split(string(raw), "\n") {
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]"):
			section = strings.Trim(l, "[]")
		case strings.HasPrefix(l, "  why:"):
			if last != "" && r[section] != nil {
				r[section][last] = strings.TrimSpace(strings.TrimPrefix(l, "  why:"))
			}
		default:
			if r[section] == nil {
				return nil, fmt.Errorf("%s: line %q outside [defaults] or [meanings]", path, l)
			}
			r[section][l], last = "", l
		}
	}
	return r, nil
}

const recordedHead = `# Option names of canopy's commands and agents that keep more than one default or more than one
# meaning (TestOptionDefaultsRatchet, issue 39 item 1: one name, one default, one meaning).
# A role's declared override (spec.Role: self-play's dir 1 over az's 0, with its reason in help) is not
# a second default. Every entry here says why it stays ("  why:"); the list only shrinks: give a new
# option a name of its own, the same default, or a declared role override. Rewrite it with
# go test ./cmd/canopy -run TestOptionDefaultsRatchet -update-options (reasons are kept by line).
`

// TestOptionDefaultsRatchet holds option names to one default and one
// meaning (issue 39, item 1): it fails on a name declared in two places
// with different defaults that is not a declared role override
// (spec.Role), and on a name whose declarations give it two meanings
// (their help's first clauses differ), unless testdata/option-defaults.txt
// records the case with a reason. The list only shrinks: a recorded case
// that is gone fails too until the file is rewritten (-update-options).
func TestOptionDefaultsRatchet(t *testing.T) {
	path := filepath.Join("testdata", "option-defaults.txt")
	defaults, meanings := optionConflicts()
	got := map[string][]string{"defaults": defaults, "meanings": meanings}
	if *updateOptions {
		old, _ := readRecorded(path)
		var b strings.Builder
		b.WriteString(recordedHead)
		for _, sec := range []string{"defaults", "meanings"} {
			fmt.Fprintf(&b, "\n[%s]\n", sec)
			for _, l := range got[sec] {
				why := old[sec][l]
				if why == "" { // a line that changed keeps its name's reason
					for ol, w := range old[sec] {
						if strings.SplitN(ol, ":", 2)[0] == strings.SplitN(l, ":", 2)[0] {
							why = w
						}
					}
				}
				fmt.Fprintf(&b, "%s\n  why: %s\n", l, why)
			}
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := readRecorded(path)
	if err != nil {
		t.Fatalf("%v (create it with go test -run TestOptionDefaultsRatchet -update-options)", err)
	}
	for _, sec := range []string{"defaults", "meanings"} {
		what := map[string]string{"defaults": "more than one default", "meanings": "more than one meaning"}[sec]
		for _, l := range got[sec] {
			why, ok := want[sec][l]
			switch {
			case !ok:
				t.Errorf("a name with %s that is not recorded:\n  %s\nuse one default and one meaning (or another name, or a declared role override, spec.Role); if a recorded case changed, rerun with -update-options and keep its reason", what, l)
			case why == "":
				t.Errorf("[%s] %s\n  records no reason (a line \"  why: ...\" after it)", sec, l)
			}
		}
		for l := range want[sec] {
			if !slices.Contains(got[sec], l) {
				t.Errorf("recorded case with %s no longer found (fixed? then rerun with -update-options to shrink the list):\n  %s", what, l)
			}
		}
	}
}

// TestOptionConflictsCatch: the ratchet's checks see what they are for.
// Two declarations of one name with two defaults are a conflict unless
// one is a role's declared override; two first clauses are two meanings.
func TestOptionConflictsCatch(t *testing.T) {
	var x, y int
	base := spec.Table{spec.Int("n", &x, 1, 0, 9, "rows of the board")}
	role := spec.Role{Name: "r", Of: "base", Overrides: []spec.Override{{Key: "n", Default: "2", Why: "r needs two"}}}
	over := role.Apply(base)
	if _, _, why, ok := spec.OverrideNote(over[0].Usage()); !ok || why != "r needs two" {
		t.Errorf("OverrideNote(%q) = %q, %v; want the role's reason", over[0].Usage(), why, ok)
	}
	if _, _, _, ok := spec.OverrideNote(spec.Int("n", &y, 2, 0, 9, "rows of the board").Usage()); ok {
		t.Error("a plain declaration reads as an override")
	}
	if meaning("rows of the board (0..9)") == meaning("steps of a rollout, per environment") {
		t.Error("two meanings read as one")
	}
	if meaning("rows of the board (0..9)") != meaning("Rows of the board, at most 9") {
		t.Error("one meaning worded two ways reads as two")
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
		// A value the flag takes; an empty --out makes the command refuse.
		{"dirichlet", "dir", []string{"selfplay", "--game", "tictactoe", "--out", ""}, "0.3"},
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

// TestOldSelfPlayRunResumes: a self-play run written before --noreuse
// became --reuse (cmd/canopy/testdata/oldrun/make.sh, at 311b2ec: its
// manifest stores "noreuse": false) resumes under today's flags, and
// --noreuse, kept as the deprecated spelling of --reuse=false, is
// refused as a change of the run's settings.
func TestOldSelfPlayRunResumes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sp")
	copyDir(t, filepath.Join("testdata", "oldrun", "selfplay"), dir)
	args := []string{"selfplay", "--game", "tictactoe", "--sims", "4", "--seed", "3", "--backend", "cpu", "--quiet", "--out", dir, "--resume"}
	for _, bad := range [][]string{{"--noreuse"}, {"--reuse=false"}, {"--sims", "5"}} {
		code, _, errs := runCLI(t, "", append(append(args, "--games", "3"), bad...)...)
		name := map[string]string{"--sims": "--sims 5"}[bad[0]]
		if name == "" {
			name = "--noreuse true (run: false)" // the manifest's key names it
		}
		if code != 2 || !strings.Contains(errs, "differ from the run's: "+name) {
			t.Errorf("resume with %v: status %d, stderr %q; want a refusal naming the setting", bad, code, errs)
		}
	}
	code, out, errs := runCLI(t, "", append(args, "--games", "3")...)
	if code != 0 || !strings.Contains(out, "3 games") {
		t.Fatalf("resume: status %d, stdout %q, stderr %q", code, out, errs)
	}
}
