package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/selfplay"
	"github.com/google/pprof/profile"
)

// Tests for issue 16 ("Hardening"): each reproduces a failure seen there.

// Every float option of mcts, az and policy refuses NaN and infinities
// with an error naming the option and its range.
func TestAgentFloatOptionsRejectNonFinite(t *testing.T) {
	g, err := games.New("connect4")
	if err != nil {
		t.Fatal(err)
	}
	floats := map[string][]string{
		"mcts":   {"c", "eps", "blend", "fpu", "dir", "dirfrac", "ravek", "raveb", "alpha", "poolp", "bias", "temp", "simgamma"},
		"az":     {"c", "fpu", "dir", "dirfrac", "temp", "blend"},
		"policy": {"temp"},
	}
	for name, keys := range floats {
		for _, k := range keys {
			for _, v := range []string{"NaN", "nan", "+Inf", "-Inf", "inf"} {
				a, err := agent.New(g, name+":"+k+"="+v, agent.Env{Seed: 1})
				if err == nil {
					arenaClose(a)
					t.Errorf("%s:%s=%s accepted", name, k, v)
					continue
				}
				if msg := err.Error(); !strings.Contains(msg, k+"=") || !strings.Contains(msg, "want [") {
					t.Errorf("%s:%s=%s: error %q does not name the option and its range", name, k, v, msg)
				}
			}
		}
	}
	// The list above is every float option: any other option of these
	// agents refuses NaN too (not an integer, duration, choice, ...),
	// except free-form names checked where they are used.
	for _, r := range agent.Registered() {
		if floats[r.Name] == nil {
			continue
		}
		for _, o := range r.Options {
			if o.Key == "static" { // an evaluator name, checked only with eval=blend
				continue
			}
			if a, err := agent.New(g, r.Name+":"+o.Key+"=NaN", agent.Env{Seed: 1}); err == nil {
				arenaClose(a)
				t.Errorf("%s:%s=NaN accepted", r.Name, o.Key)
			}
		}
	}
}

func arenaClose(a agent.Agent) {
	if c, ok := a.(interface{ Close() error }); ok {
		c.Close()
	}
}

// flagLine is a flag's line in PrintDefaults output: "  -name type".
var flagLine = regexp.MustCompile(`^  -(\S+)(?: (.*))?$`)

// Help texts: no flag shows its default twice ("(default 0) (default
// -1)"), and no back-ticked word in a flag's help is taken for its type
// name (flag.UnquoteUsage).
func TestHelpFlagsReadWell(t *testing.T) {
	types := map[string]bool{"": true, "string": true, "int": true, "uint": true, "int64": true, "uint64": true,
		"float": true, "duration": true, "value": true}
	// Flags known to read badly, with the reason (none today).
	known := map[string]string{}
	seen := map[string]bool{}
	var invocations [][]string
	for name := range commands {
		invocations = append(invocations, []string{name})
	}
	invocations = append(invocations, []string{"net", "init"}, []string{"net", "info"}, []string{"net", "eval"},
		[]string{"bench", "games"}, []string{"bench", "search"}, []string{"bench", "net"})
	for _, inv := range invocations {
		code, out, errs := runCLI(t, "", append(append([]string{}, inv...), "--help")...)
		if code != 0 {
			t.Errorf("%v --help: status %d", inv, code)
			continue
		}
		help := out + errs
		var flag string
		for _, line := range strings.Split(help, "\n") {
			if m := flagLine.FindStringSubmatch(line); m != nil {
				flag = m[1]
				id := strings.Join(inv, " ") + " --" + flag
				if !types[m[2]] {
					if why, ok := known[id]; ok {
						seen[id] = true
						t.Logf("known: %s: %s", id, why)
						continue
					}
					t.Errorf("%s: help shows %q as the value's type (a back-ticked word in the help?)", id, m[2])
				}
				continue
			}
			if flag != "" && strings.Count(line, "(default ") > 1 {
				t.Errorf("%s --%s: default shown twice: %q", strings.Join(inv, " "), flag, strings.TrimSpace(line))
			}
		}
	}
	for id := range known {
		if !seen[id] {
			t.Errorf("%s reads well now: drop it from the known list", id)
		}
	}
}

func mustBuiltin(t *testing.T, g games.Game) nets.Config {
	t.Helper()
	cfg, err := nets.DefaultConfig(g)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// net eval on a network that makes NaN: a one-line failure, never
// "value +NaN" or a JSON encoder error.
func TestNetEvalNonFinite(t *testing.T) {
	path := overflowNetFor(t, "connect4")
	for _, extra := range [][]string{nil, {"--json"}} {
		args := append([]string{"net", "eval", "--net", path, "--moves", "4453"}, extra...)
		code, out, errs := runCLI(t, "", args...)
		if code != 1 || strings.Contains(out, "NaN") || !strings.Contains(errs, "not finite") || strings.Contains(errs, "json") {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want status 1 and an error saying the output is not finite", args, code, out, errs)
		}
	}
}

// failWriter fails every write, like a closed pipe.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// Commands whose output cannot be written fail (status 1) instead of
// exiting 0 with nothing printed.
func TestStdoutWriteFailure(t *testing.T) {
	net := filepath.Join(t.TempDir(), "n.safetensors")
	if code, _, errs := runCLI(t, "", "net", "init", "--game", "tictactoe", "--out", net); code != 0 {
		t.Fatal(errs)
	}
	outs := map[string]func() (any, func()){
		"failing writer": func() (any, func()) { return failWriter{}, func() {} },
		"/dev/full": func() (any, func()) {
			f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err != nil {
				return nil, nil
			}
			return f, func() { f.Close() }
		},
	}
	for what, open := range outs {
		for _, c := range []struct {
			stdin string
			args  []string
		}{
			{"", []string{"net", "info", net}},
			{"", []string{"net", "info", "--json", net}},
			{"", []string{"net", "eval", "--net", net}},
			{"", []string{"net", "eval", "--json", "--net", net}},
			{"", []string{"solve", "--moves", "2252576253462244111563365343671351441"}},
			{"2252576253462244111563365343671351441\n", []string{"solve"}},
		} {
			w, done := open()
			if w == nil {
				continue // no /dev/full here
			}
			var errb bytes.Buffer
			code := run(c.args, &env{Stdin: strings.NewReader(c.stdin), Stdout: w.(interface{ Write([]byte) (int, error) }), Stderr: &errb})
			done()
			if code != 1 || !strings.Contains(errb.String(), "cannot write") {
				t.Errorf("%v to %s: status %d, stderr %q; want 1 and a write error", c.args, what, code, errb.String())
			}
		}
	}
}

// A very long stdin line to solve names the line and the limit.
func TestSolveLongLine(t *testing.T) {
	in := "4453\n" + strings.Repeat("4", 2<<20) + "\n"
	code, out, errs := runCLI(t, in, "solve")
	if code != 1 || !strings.Contains(errs, "line 2") || !strings.Contains(errs, "65536 bytes") || strings.Contains(errs, "token too long") {
		t.Errorf("solve with a 2 MB line: status %d, stderr %q", code, errs)
	}
	if !strings.HasPrefix(out, "4453 ") {
		t.Errorf("the position before the long line was not printed: %q", out)
	}
}

// stats defaults to one random agent per seat, whatever the player count.
func TestStatsDefaultAgentsEverySeat(t *testing.T) {
	code, out, errs := runCLI(t, "", "stats", "--game", "sushigo", "--games", "2", "--quiet")
	if code != 0 || !strings.Contains(out, "first-player win rate") {
		t.Errorf("stats --game sushigo: status %d, stderr %q", code, errs)
	}
}

// Tetris Link's board panel numbers players as the result line does.
func TestPlayTetrisLinkNumbering(t *testing.T) {
	code, out, errs := runCLI(t, "", "play", "--game", "tetrislink", "--agents", "random,random", "--seed", "3")
	if code != 0 {
		t.Fatalf("play: %d %s", code, errs)
	}
	if !strings.Contains(out, "player 0 (X)") || strings.Contains(out, "player 2 (O)") {
		t.Errorf("board panel numbering differs from the result line's (from 0):\n%s", out[max(0, len(out)-800):])
	}
}

// bench search names where the profiles really are.
func TestBenchSearchProfilePaths(t *testing.T) {
	d := t.TempDir()
	out, prof := filepath.Join(d, "run"), filepath.Join(d, "elsewhere.pprof")
	code, stdout, errs := runCLI(t, "", "bench", "search", "--game", "tictactoe", "--trees", "2", "--sims", "2", "--seconds", "0.2",
		"--quiet", "--out", out, "--cpuprofile", prof)
	if code != 0 {
		t.Fatalf("bench search: %d %s", code, errs)
	}
	if _, err := os.Stat(prof); err != nil || !strings.Contains(stdout, "CPU profile "+prof) || strings.Contains(stdout, "profiles and result.json in") {
		t.Errorf("--cpuprofile %s --out %s: %v; output:\n%s", prof, out, err, stdout)
	}
}

// selfplay writes the CPU and allocation profiles it is asked for: both
// parse as pprof profiles, and the allocation profile has samples (a run
// this short may take no CPU sample).
func TestSelfplayProfiles(t *testing.T) {
	d := t.TempDir()
	cpu, mem := filepath.Join(d, "cpu.pprof"), filepath.Join(d, "mem.pprof")
	code, _, errs := runCLI(t, "", "selfplay", "--game", "tictactoe", "--games", "8", "--trees", "4", "--sims", "32",
		"--quiet", "--out", filepath.Join(d, "run"), "--cpuprofile", cpu, "--memprofile", mem)
	if code != 0 {
		t.Fatalf("selfplay: %d %s", code, errs)
	}
	checkProfiles(t, cpu, mem)
}

// checkProfiles checks that cpu and mem are pprof profiles and that the
// heap profile has samples.
func checkProfiles(t *testing.T, cpu, mem string) {
	t.Helper()
	for _, p := range []string{cpu, mem} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		prof, err := profile.Parse(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if p == mem && len(prof.Sample) == 0 {
			t.Errorf("%s has no samples", p)
		}
	}
}

func TestMemTotalAndFormat(t *testing.T) {
	p := filepath.Join(t.TempDir(), "meminfo")
	os.WriteFile(p, []byte("MemFree:  100 kB\nMemTotal:       24576000 kB\n"), 0o644)
	if n, err := memTotal(p); err != nil || n != 24576000*1024 {
		t.Errorf("memTotal = %v, %v", n, err)
	}
	os.WriteFile(p, []byte("nothing\n"), 0o644)
	if _, err := memTotal(p); err == nil {
		t.Error("memTotal without a MemTotal line: no error")
	}
	for b, want := range map[float64]string{11e9: "11 GB", 1.5e12: "1.5 TB", 512: "512 B", 2.3e6: "2.3 MB"} {
		if got := formatBytes(b); got != want {
			t.Errorf("formatBytes(%v) = %q, want %q", b, got, want)
		}
	}
}

// The memory check refuses with the figures, and lets sizes that fit
// through.
func TestMemoryCheck(t *testing.T) {
	old := physicalMemory
	physicalMemory = func() (float64, bool) { return 1e9, true }
	defer func() { physicalMemory = old }()
	g, _ := games.New("connect4")
	st := selfplay.DefaultSettings()
	st.Sims = 200
	m, err := selfPlayMemory(g, selfplay.Config{Settings: st, Trees: 100000, NumGames: 100000}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = m.check("--trees 100000")
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--trees 100000 needs about") || !strings.Contains(err.Error(), "this machine has 1.0 GB") {
		t.Errorf("100000 trees on 1 GB: %v", err)
	}
	if m, _ := selfPlayMemory(g, selfplay.Config{Settings: st, Trees: 64, NumGames: 64}, 0, 0); m.check("--trees 64") != nil {
		t.Errorf("64 trees on 1 GB: %v", err)
	}
	if err := checkAgentMemory(g, []string{"mcts:sims=1000", "random"}, 2); err != nil {
		t.Errorf("mcts:sims=1000: %v", err)
	}
	if err := checkAgentMemory(g, []string{"mcts:nodes=67108864"}, 1); err == nil {
		t.Error("mcts:nodes=67108864 on 1 GB: accepted")
	}
}

// Ctrl-C during stats or arena prints the finished games' results, marked
// partial, and exits 1. Runs the command in a child process (the test
// binary itself) and interrupts it.
func TestInterruptPrintsPartial(t *testing.T) {
	if os.Getenv("CANOPY_HELPER_ARGS") != "" {
		os.Exit(run(strings.Split(os.Getenv("CANOPY_HELPER_ARGS"), "\x1f"), &env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
	}
	for _, args := range [][]string{
		{"stats", "--game", "tictactoe", "--games", "10000000", "--parallel", "1"},
		{"arena", "--game", "tictactoe", "--agents", "random,onestep", "--games", "5000000", "--parallel", "1", "--bootstrap", "10"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestInterruptPrintsPartial$")
		cmd.Env = append(os.Environ(), "CANOPY_HELPER_ARGS="+strings.Join(args, "\x1f"))
		// syncBuffer: the loop below reads stderr while exec copies into it.
		var out, errb syncBuffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait for some finished games (the progress line), then Ctrl-C.
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(errb.String(), "games ") && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
		cmd.Process.Signal(os.Interrupt)
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("%v: %v, want exit status 1; stderr %q", args, err, tail(errb.String()))
		}
		if !strings.Contains(out.String(), "PARTIAL") || !strings.Contains(errb.String(), "results printed are partial") {
			t.Errorf("%v: interrupted run did not print partial results:\nstdout %q\nstderr %q", args, out.String(), tail(errb.String()))
		}
	}
}

func tail(s string) string { return s[max(0, len(s)-300):] }
