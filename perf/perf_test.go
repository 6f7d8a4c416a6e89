package main

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

const sampleCachegrind = `desc: I1 cache:         32768 B, 64 B, 8-way associative
cmd: bin/perf run startup
events: Ir
fl=/usr/local/go/src/runtime/proc.go
fn=runtime.main
10 5
11 7
fn=runtime.sysmon
20 3
fl=perf/main.go
fn=main.main
1 100

fn=runtime.main
12 1
summary: 116
`

func TestParseCachegrind(t *testing.T) {
	p, err := parseCachegrind(strings.NewReader(sampleCachegrind))
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != 116 {
		t.Errorf("total %d, want 116", p.Total)
	}
	want := map[string]int64{"runtime.main": 13, "runtime.sysmon": 3, "main.main": 100}
	for k, v := range want {
		if p.Funcs[k] != v {
			t.Errorf("%s: %d, want %d", k, p.Funcs[k], v)
		}
	}
	if got := p.Counted(); got != 113 {
		t.Errorf("counted %d, want 113 (runtime.sysmon is noise)", got)
	}
	if top := p.topFuncs(2); len(top) != 2 || top[0].Name != "main.main" || top[1].Name != "runtime.main" {
		t.Errorf("top functions %v", top)
	}
}

func TestParseCachegrindErrors(t *testing.T) {
	for name, text := range map[string]string{
		"no summary":   "events: Ir\nfn=a\n1 2\n",
		"bad sum":      "events: Ir\nfn=a\n1 2\nsummary: 3\n",
		"other events": "events: Dr Ir\nsummary: 0\n",
		"empty":        "",
	} {
		if _, err := parseCachegrind(strings.NewReader(text)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestParseRunResult(t *testing.T) {
	out := "noise\n" + resultPrefix + `ok reps=1 seconds=0.010 kernels=avx2 go=go1.26.8 cpu="Intel(R) Core(TM) i7" features="AVX AVX2" result="games=3 actions=10"` + "\n"
	rr, err := parseRunResult(out)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Kernels != "avx2" || rr.CPU != "Intel(R) Core(TM) i7" || rr.Features != "AVX AVX2" || rr.Result != "games=3 actions=10" || rr.Skip != "" {
		t.Errorf("parsed %+v", rr)
	}
	rr, err = parseRunResult(resultPrefix + "skip reference data not found\n")
	if err != nil || rr.Skip != "reference data not found" {
		t.Errorf("skip line: %+v, %v", rr, err)
	}
	if _, err := parseRunResult("panic: oops\n"); err == nil {
		t.Error("output without a result line: no error")
	}
}

func TestCompareAndFuncDiff(t *testing.T) {
	ws := []*workload{{name: "a"}, {name: "b"}, {name: "c"}, {name: "d"}}
	m := func(total int64, funcs map[string]int64) []*measurement {
		return []*measurement{{cgProfile: cgProfile{Total: total, Funcs: funcs}, runResult: runResult{Result: "r"}}}
	}
	res := [][]*measurement{
		m(1040, map[string]int64{"hot": 1040}), // +4%: regressed
		m(1020, nil),                           // +2%: ok
		m(900, nil),                            // -10%: improved
		m(5, nil),                              // not in the baseline
	}
	b := &Baseline{Workloads: map[string]BaselineEntry{"a": {1000, "r"}, "b": {1000, "r"}, "c": {1000, "other"}}}
	rows := compare(ws, res, b, 3)
	want := []string{"REGRESSED", "ok", "improved", "new"}
	for i, r := range rows {
		if r.status != want[i] {
			t.Errorf("%s: status %s, want %s", r.name, r.status, want[i])
		}
	}
	var buf bytes.Buffer
	printTable(&buf, rows, 3)
	for _, s := range []string{"+4.00%", "REGRESSED", "-10.00%", "improved", "new (not in the baseline)", "note: c now computes"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, buf.String())
		}
	}

	base := map[string]int64{"hot": 600, "cold": 400}
	now := map[string]int64{"hot": 900, "cold": 380, "fresh": 50}
	lines := funcDiff(base, now, 5, true, 0)
	if len(lines) < 3 || !strings.Contains(lines[1], "hot") || !strings.Contains(lines[1], "+300") || !strings.Contains(lines[2], "fresh") {
		t.Errorf("growth diff:\n%s", strings.Join(lines, "\n"))
	}
	lines = funcDiff(base, now, 5, false, 0)
	if len(lines) != 2 || !strings.Contains(lines[1], "cold") || !strings.Contains(lines[1], "-20") {
		t.Errorf("shrink diff:\n%s", strings.Join(lines, "\n"))
	}
}

func TestCheckExpected(t *testing.T) {
	var buf bytes.Buffer
	if err := checkExpected(&buf, []string{"x", "y"}, map[string]bool{"x": true, "y": true}); err != nil {
		t.Error(err)
	}
	if err := checkExpected(&buf, []string{"x"}, map[string]bool{"x": true, "y": true}); err == nil {
		t.Error("a missing regression passed the self-test")
	}
	if err := checkExpected(&buf, []string{"x", "z"}, map[string]bool{"x": true}); err == nil {
		t.Error("an unexpected regression passed the self-test")
	}
}

func TestBenchfmt(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"games": {`[{"game":"hex:size=11","playouts":1000,"playouts_per_sec":64000,"moves_per_sec":1e6,"legal_ns":19.3,"apply_ns":31.4,"clone_ns":37.2,"hash_ns":6.1}]`,
			"BenchmarkCanopyGames/game=hex:size-11 1000 64000 playouts/s 1e+06 moves/s 19.3 ns/legal 31.4 ns/apply 37.2 ns/clone 6.1 ns/hash"},
		"net": {`{"game":"connect4","backend":"cpu","rows":[{"batch":16,"calls":50,"evals_per_sec":3524,"evals_per_cpu_sec":1800,"ms_per_batch_p50":4.5,"ms_per_batch_p99":6}]}`,
			"BenchmarkCanopyNet/game=connect4/backend=cpu/batch=16 50 3524 evals/s 1800 evals/cpu-s 4.5 ms/batch-p50 6 ms/batch-p99"},
		"search": {`{"game":"connect4","backend":"random","trees":1024,"batch":256,"sims":200,"leaves":1,"nodes_per_sec":598000,"nodes_per_cpu_sec":307000,"evals_per_sec":5e5,"mean_batch":182,"busy_fraction":0.5}`,
			"BenchmarkCanopySearch/game=connect4/backend=random/trees=1024/batch=256/sims=200/leaves=1 1 598000 nodes/s 307000 nodes/cpu-s 500000 evals/s 182 rows/batch 0.5 busy-frac"},
	} {
		var buf bytes.Buffer
		if err := benchToGoFormat(&buf, []byte(tc.in)); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.Contains(buf.String(), "\n"+tc.want+"\n") {
			t.Errorf("%s: got\n%s\nwant the line\n%s", name, buf.String(), tc.want)
		}
	}
	if err := benchToGoFormat(&bytes.Buffer{}, []byte(`{"x":1}`)); err == nil {
		t.Error("unrecognised JSON: no error")
	}
}

// TestWorkloads runs every workload twice natively: each must succeed and
// give the same result both times (the gate relies on fixed work).
func TestWorkloads(t *testing.T) {
	env := &runEnv{dataDir: findDataDir(), tmpDir: t.TempDir()}
	names := map[string]bool{}
	for _, w := range workloads {
		if names[w.name] {
			t.Errorf("workload %s listed twice", w.name)
		}
		names[w.name] = true
		t.Run(w.name, func(t *testing.T) {
			run, err := w.setup(env)
			if errors.Is(err, errNoData) {
				if onCI() {
					t.Fatalf("%v (CI is set: reference checks must not be skipped)", err)
				}
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			r1, err := run()
			if err != nil {
				t.Fatal(err)
			}
			r2, err := run()
			if err != nil {
				t.Fatal(err)
			}
			if r1 != r2 {
				t.Errorf("results differ between runs: %q, %q", r1, r2)
			}
		})
	}
}

// TestBaselineCoversWorkloads: the committed baseline must list every
// workload (make perf-baseline after adding one) and nothing else.
func TestBaselineCoversWorkloads(t *testing.T) {
	b, err := readBaseline("baseline.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range workloads {
		if _, ok := b.Workloads[w.name]; !ok {
			t.Errorf("workload %s is not in perf/baseline.json: run make perf-baseline", w.name)
		}
		if _, err := os.Stat(funcFile("baseline", w.name)); err != nil {
			t.Errorf("workload %s: %v", w.name, err)
		}
	}
	for name := range b.Workloads {
		if lookupWorkload(name) == nil {
			t.Errorf("perf/baseline.json lists %s, which is no longer a workload", name)
		}
	}
}

func TestCommandLine(t *testing.T) {
	var out, errb bytes.Buffer
	if code := mainErr([]string{"nosuch"}, &out, &errb); code != 2 {
		t.Errorf("unknown command: exit %d, want 2", code)
	}
	if code := mainErr([]string{"run", "nosuch"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "unknown workload") {
		t.Errorf("unknown workload: exit %d, stderr %q", code, errb.String())
	}
	out.Reset()
	if code := mainErr([]string{"list"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "playout-fast-connect4") {
		t.Errorf("list: exit %d, output %q", code, out.String())
	}
	out.Reset()
	if code := mainErr([]string{"run", "playout-tictactoe"}, &out, &errb); code != 0 || !strings.Contains(out.String(), resultPrefix+"ok") {
		t.Errorf("run: exit %d, output %q", code, out.String())
	}
}
