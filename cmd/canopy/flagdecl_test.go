package main

import (
	"flag"
	"io"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/canopy-go/canopy/spec"
)

// tableCommands are the command lines whose flags come from spec.Table
// declarations (issue 39, item 1): every command and sub-command but
// those still being converted (pendingTables).
func tableCommands() [][]string {
	var invs [][]string
	for name := range commands {
		if _, pending := pendingTables[name]; !pending {
			invs = append(invs, []string{name})
		}
	}
	for _, sub := range []string{"init", "info", "eval", "import", "export"} {
		invs = append(invs, []string{"net", sub})
	}
	for _, target := range []string{"games", "search", "net"} {
		invs = append(invs, []string{"bench", target})
	}
	sort.Slice(invs, func(i, j int) bool { return strings.Join(invs[i], " ") < strings.Join(invs[j], " ") })
	return invs
}

// pendingTables are the commands whose flags are converted to tables on
// another branch (optsa: selfplay, zero, train, ppo, worker), with the
// flags of theirs other commands share.
var pendingTables = map[string]string{}

// pendingFlags are flags of tableCommands declared outside a table, with
// the reason.
var pendingFlags = map[string]string{}

// helpFlags returns the flags --help lists for the command line inv:
// name -> [type, usage].
func helpFlags(t *testing.T, inv []string) map[string][2]string {
	t.Helper()
	code, out, errs := runCLI(t, "", append(slices.Clone(inv), "--help")...)
	if code != 0 {
		t.Fatalf("%v --help: status %d: %s", inv, code, errs)
	}
	flags := map[string][2]string{}
	name := ""
	for _, line := range strings.Split(out+errs, "\n") {
		if m := flagLine.FindStringSubmatch(line); m != nil {
			name = m[1]
			flags[name] = [2]string{m[2], ""}
			continue
		}
		if u, ok := strings.CutPrefix(line, "    \t"); ok && name != "" {
			f := flags[name]
			f[1] += u
			flags[name] = f
		}
	}
	return flags
}

// Every numeric flag of a converted command is declared with its range:
// a value that is not a number is a usage error (exit 2) naming the
// flag, the value and the range, on the first line, before anything runs.
func TestFlagValuesNameTheRange(t *testing.T) {
	bad := map[string]string{"int": "x1", "uint": "x1", "float": "x1", "duration": "x1"}
	seen := map[string]bool{}
	for _, inv := range tableCommands() {
		for name, f := range helpFlags(t, inv) {
			v, numeric := bad[f[0]]
			id := strings.Join(inv, " ") + " --" + name
			if !numeric || strings.HasPrefix(f[1], aliasUsage) {
				continue
			}
			code, _, errs := runCLI(t, "", append(slices.Clone(inv), "--"+name, v)...)
			first := strings.SplitN(errs, "\n", 2)[0]
			want := "canopy " + strings.Join(inv, " ") + ": --" + name + " " + v + ": "
			ok := code == 2 && strings.HasPrefix(first, want) && strings.Contains(first, "(want ")
			if why, known := pendingFlags[id]; known {
				seen[id] = true
				if ok {
					t.Errorf("%s is declared with its range now: drop it from pendingFlags", id)
				} else {
					t.Logf("known: %s: %s", id, why)
				}
				continue
			}
			if !ok {
				t.Errorf("%s %s: status %d, first line %q; want 2 and %q... (want RANGE)", id, v, code, first, want)
			}
		}
	}
	for id := range pendingFlags {
		if !seen[id] {
			t.Errorf("pendingFlags names %s, which no command has", id)
		}
	}
}

// The flags many commands share have one declaration each
// (common_options.go): in every converted command their help starts
// with the shared text, their type is the shared one, and the seed's
// default is the shared one.
func TestSharedFlagsOneDeclaration(t *testing.T) {
	var s string
	var u uint64
	var b bool
	var n int
	shared := map[string][2]string{} // name -> [type, help the command's note may follow]
	for _, o := range []struct {
		typ, key, help string
	}{
		{"string", "game", gameOption(&s, "", "").Help},
		{"string", "agents", agentsOption(&s, "", "").Help},
		{"string", "moves", movesOption(&s, "").Help},
		{"uint", "seed", seedOption(&u, "").Help},
		{"", "json", jsonOption(&b, "").Help},
		{"", "quiet", quietOption(&b).Help},
		{"string", "backend", backendOption(&s, "").Help},
		{"int", "parallel", parallelOption(&n).Usage()},
	} {
		shared[o.key] = [2]string{o.typ, o.help}
	}
	// A flag of a shared name with another meaning, and why.
	known := map[string]string{
		"net eval --moves": "state notation only: a move list and a state notation are ambiguous for some games (net_test's nettest), and eval answers for one position",
	}
	seen := map[string]bool{}
	for _, inv := range tableCommands() {
		for name, f := range helpFlags(t, inv) {
			want, ok := shared[name]
			if !ok {
				continue
			}
			id := strings.Join(inv, " ") + " --" + name
			if f[0] != want[0] || !strings.HasPrefix(f[1], want[1]) {
				if why, ok := known[id]; ok {
					seen[id] = true
					t.Logf("known: %s: %s", id, why)
					continue
				}
				t.Errorf("%s: type %q, help %q; want type %q and help starting %q (declare it with common_options.go)", id, f[0], f[1], want[0], want[1])
			}
			if name == "seed" && !strings.HasSuffix(f[1], "(default 1)") {
				t.Errorf("%s: help %q; want the shared default 1", id, f[1])
			}
		}
	}
	for id := range known {
		if !seen[id] {
			t.Errorf("%s is the shared flag now: drop it from the known list", id)
		}
	}
}

// parseFlags reports a bad value of a table flag as "--NAME VALUE: what
// is wrong (want RANGE)", under the flag a deprecated spelling sets, and
// a misspelled choice or flag with the one meant.
func TestParseFlagsValueMessages(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		want     string
		warnings int
	}{
		{[]string{"--games", "0"}, "--games 0: out of range (want 1..10)", 0},
		{[]string{"--games", "0x2f"}, "--games 0x2f: not an integer (want 1..10)", 0},
		{[]string{"--games", "a b"}, `--games a b: not an integer (want 1..10)`, 0},
		{[]string{"--n", "11"}, "--games 11: out of range (want 1..10)", 1},
		{[]string{"--by", "seet"}, `--by seet: want one of agent, seat (did you mean "seat"?)`, 0},
		{[]string{"--wait", "1h"}, "--wait 1h: out of range (want 0s..1s)", 0},
		{[]string{"--wait", ""}, `--wait "": not a duration such as 100ms or 2s (want 0s..1s)`, 0},
		{[]string{"--gmaes", "3"}, "flag provided but not defined: -gmaes (did you mean --games?)", 0},
	} {
		fs := sampleFlags()
		aliasFlag(fs, "n", "games")
		var w strings.Builder
		err := parseFlags(fs, tc.args, &w)
		if err == nil || err.Error() != tc.want || strings.Count(w.String(), "is deprecated; use --games") != tc.warnings {
			t.Errorf("%q: error %v, output %q; want %q and %d deprecation lines", tc.args, err, w.String(), tc.want, tc.warnings)
		}
	}
}

// sampleFlags is a flag set of one int, one choice and one duration
// table option, as the message tests parse them.
func sampleFlags() *flag.FlagSet {
	var games int
	var by string
	var wait time.Duration
	fs := flag.NewFlagSet("canopy x", flag.ContinueOnError)
	spec.Table{
		spec.Int("games", &games, 1, 1, 10, "games"),
		spec.Choice("by", &by, "agent", []string{"agent", "seat"}, "grouping"),
		spec.DurationIn("wait", &wait, 0, 0, time.Second, "wait"),
	}.Flags(fs)
	return fs
}

// Any value given to a table flag parses or fails with one message that
// starts with the flag's name and the value as given (flagValueError
// reads the value back out of the flag package's message).
func FuzzFlagValueMessage(f *testing.F) {
	for _, v := range []string{"0", "x", `"`, `a" for flag -b: c`, "1h", "seet", "\x00", " 5", "0x10"} {
		f.Add("games", v)
		f.Add("by", v)
		f.Add("wait", v)
	}
	f.Fuzz(func(t *testing.T, name, v string) {
		if name != "games" && name != "by" && name != "wait" {
			return
		}
		fs := sampleFlags()
		err := parseFlags(fs, []string{"--" + name + "=" + v}, io.Discard)
		shown := v
		if v == "" {
			shown = `""`
		}
		if err != nil && !strings.HasPrefix(err.Error(), "--"+name+" "+shown+": ") {
			t.Errorf("--%s=%q: %q does not start with the flag and value", name, v, err)
		}
	})
}
