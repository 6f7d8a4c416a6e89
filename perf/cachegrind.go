package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/cpuid/v2"
)

// buildHint is how the gate's binary must be built: no cgo, the baseline
// x86-64 level, and no heap base randomisation (a random heap address
// makes the page allocator's work differ from run to run).
const buildHint = "CGO_ENABLED=0 GOAMD64=v1 GOEXPERIMENT=norandomizedheapbase64 go build -o bin/perf ./perf"

// installHint says how to get valgrind.
const installHint = "install it with: apt-get install -y valgrind (Debian/Ubuntu; valgrind 3.19 or later)"

// valgrindVersion returns `valgrind --version`, or an error saying how to
// install it.
func valgrindVersion() (string, error) {
	path, err := exec.LookPath("valgrind")
	if err != nil {
		return "", fmt.Errorf("valgrind not found on PATH: the gate counts instructions under valgrind's cachegrind; %s", installHint)
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %v; %s", path, err, installHint)
	}
	return strings.TrimSpace(string(out)), nil
}

// gateEnv is the environment a workload runs in under the gate: one P,
// no garbage collection (the heap of every workload is small), no
// asynchronous preemption signals, no memory-profile sampling (its
// sample points are random), and nothing from the caller's environment
// that changes the code paths (CANOPY_KERNELS, GODEBUG).
func gateEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOMAXPROCS", "GOGC", "GOMEMLIMIT", "GODEBUG", "CANOPY_KERNELS":
			continue
		}
		env = append(env, kv)
	}
	// cpu.rdtscp=off: valgrind 3.19 cannot execute RDTSCP (SIGILL), which
	// the runtime's cputicks uses on CPUs that have it, in contended runtime
	// locks only, so a measurement crashed now and then (twice in about 75
	// on 2026-11-28, and every time in one startup run).
	return append(env, "GOMAXPROCS=1", "GOGC=off", "GODEBUG=asyncpreemptoff=1,memprofilerate=0,cpu.rdtscp=off")
}

// cgProfile is one workload's cachegrind result.
type cgProfile struct {
	Total int64            // instructions executed (Ir), the whole process
	Funcs map[string]int64 // instructions per function (self cost)
}

// noiseFuncs are runtime functions whose instruction counts are random
// from run to run of the same program, so the gate leaves them out of
// its count (they stay in the per-function lists):
//
//   - a type switch or assertion to an interface type that misses the
//     call site's cache calls interfaceSwitch or typeAssert (which call
//     getitab), and those add the result to the cache only one time in
//     1024, chosen with the runtime's randomly seeded generator: how many
//     misses a call site takes before its cache is filled is random
//     (about 1024 on average, some 50 instructions each);
//   - sysmon and retake run on the runtime's monitor thread, which wakes
//     on wall-clock time, and valgrind slows the program down by a
//     varying amount.
var noiseFuncs = []string{
	"runtime.interfaceSwitch", "runtime.typeAssert", "runtime.getitab",
	"runtime.(*itabTableType).find", "runtime.sysmon", "runtime.retake",
}

// Counted is the gate's count: Total less the noiseFuncs.
func (p *cgProfile) Counted() int64 {
	n := p.Total
	for _, f := range noiseFuncs {
		n -= p.Funcs[f]
	}
	return n
}

// runResult is the last line of `perf run`, parsed.
type runResult struct {
	Skip     string // non-empty: the workload was skipped, and why
	Result   string
	Kernels  string
	Go       string
	CPU      string
	Features string
}

// measurement is one workload measured once under cachegrind.
type measurement struct {
	runResult
	cgProfile
}

// measureOne runs workload name of binary bin under cachegrind, writing
// the raw output to outFile.
func measureOne(bin, name, kern, outFile string) (*measurement, error) {
	args := []string{"--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=" + outFile,
		bin, "run", "-kernels", kern, name}
	cmd := exec.Command("valgrind", args...)
	cmd.Env = gateEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		// The program's own lines (valgrind's removed): the start says
		// what went wrong, the end where.
		prog := programLines(stderr.String())
		return nil, fmt.Errorf("%s under cachegrind: %v\n%s%s[...]\n%s", name, err, stdout.String(), firstLines(prog, 15), lastLines(prog, 20))
	}
	rr, err := parseRunResult(stdout.String())
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	m := &measurement{runResult: rr}
	if rr.Skip != "" {
		return m, nil
	}
	f, err := os.Open(outFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := parseCachegrind(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", outFile, err)
	}
	m.cgProfile = *p
	return m, nil
}

// programLines returns the lines of s that valgrind did not write (those
// start with ==PID==).
func programLines(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "==") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// firstLines returns the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "")
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}

// parseRunResult finds the perf-result line of `perf run` output.
func parseRunResult(out string) (runResult, error) {
	var rr runResult
	i := strings.LastIndex(out, resultPrefix)
	if i < 0 {
		return rr, fmt.Errorf("no %q line in the output of perf run:\n%s", strings.TrimSpace(resultPrefix), out)
	}
	line, _, _ := strings.Cut(out[i+len(resultPrefix):], "\n")
	if rest, ok := strings.CutPrefix(line, "skip "); ok {
		rr.Skip = rest
		return rr, nil
	}
	fields, err := parseFields(strings.TrimPrefix(line, "ok "))
	if err != nil {
		return rr, fmt.Errorf("perf run printed %q: %v", line, err)
	}
	rr.Result, rr.Kernels, rr.Go, rr.CPU, rr.Features = fields["result"], fields["kernels"], fields["go"], fields["cpu"], fields["features"]
	return rr, nil
}

// parseFields reads space-separated key=value pairs whose values are bare
// words or Go-quoted strings.
func parseFields(s string) (map[string]string, error) {
	out := map[string]string{}
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		k, rest, ok := strings.Cut(s, "=")
		if !ok {
			return nil, fmt.Errorf("missing = in %q", s)
		}
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return nil, err
			}
			v, _ := strconv.Unquote(q)
			out[k], s = v, rest[len(q):]
			continue
		}
		v, after, _ := strings.Cut(rest, " ")
		out[k], s = v, after
	}
	return out, nil
}

// parseCachegrind reads a cachegrind.out file (format of valgrind 3.x)
// and sums the first event (Ir with --cache-sim=no) by function. The
// total is the file's summary line.
func parseCachegrind(r io.Reader) (*cgProfile, error) {
	p := &cgProfile{Funcs: map[string]int64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	fn := ""
	events, summary := false, false
	var sum int64
	for ln := 1; sc.Scan(); ln++ {
		line := sc.Text()
		switch {
		case line == "":
		case strings.HasPrefix(line, "events:"):
			ev := strings.Fields(strings.TrimPrefix(line, "events:"))
			if len(ev) == 0 || ev[0] != "Ir" {
				return nil, fmt.Errorf("line %d: events %v, want Ir first", ln, ev)
			}
			events = true
		case strings.HasPrefix(line, "fn="):
			fn = line[3:]
		case strings.HasPrefix(line, "summary:"):
			f := strings.Fields(strings.TrimPrefix(line, "summary:"))
			if len(f) == 0 {
				return nil, fmt.Errorf("line %d: empty summary", ln)
			}
			v, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", ln, err)
			}
			p.Total, summary = v, true
		case line[0] >= '0' && line[0] <= '9':
			f := strings.Fields(line)
			if len(f) < 2 {
				continue // a line with no count for the first event
			}
			v, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", ln, err)
			}
			p.Funcs[fn] += v
			sum += v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !events || !summary {
		return nil, errors.New("not a cachegrind output file (no events or summary line)")
	}
	if sum != p.Total {
		return nil, fmt.Errorf("function counts add up to %d, summary says %d", sum, p.Total)
	}
	return p, nil
}

// funcCount is one function's instruction count.
type funcCount struct {
	Name  string
	Count int64
}

// topFuncs returns the n functions of p with the largest counts, largest
// first (ties by name).
func (p *cgProfile) topFuncs(n int) []funcCount {
	out := make([]funcCount, 0, len(p.Funcs))
	for name, c := range p.Funcs {
		out = append(out, funcCount{name, c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// measureAll measures ws with binary bin, runs times each, jobs at once,
// keeping the cachegrind output files in dir. results[i][r] is run r of
// ws[i]; progress (may be nil) is told of every finished run.
func measureAll(bin string, ws []*workload, kern, dir string, runs, jobs int, progress func(name string, run int, m *measurement)) ([][]*measurement, error) {
	results := make([][]*measurement, len(ws))
	for i := range results {
		results[i] = make([]*measurement, runs)
	}
	type task struct{ i, r int }
	tasks := make(chan task)
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	for range max(jobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range tasks {
				name := ws[t.i].name
				out := filepath.Join(dir, fmt.Sprintf("%s.%d.cachegrind.out", name, t.r+1))
				m, err := measureOne(bin, name, kern, out)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil {
					results[t.i][t.r] = m
					if progress != nil {
						progress(name, t.r, m)
					}
				}
				mu.Unlock()
			}
		}()
	}
	for r := range runs {
		for i := range ws {
			mu.Lock()
			stop := firstErr != nil
			mu.Unlock()
			if stop {
				break
			}
			tasks <- task{i, r}
		}
	}
	close(tasks)
	wg.Wait()
	return results, firstErr
}

// selfBinary returns the path of the running executable and checks that
// it was built the way the gate needs (CGO_ENABLED=0), returning the
// build's GOAMD64 level and tags.
func selfBinary() (path, goamd64, tags string, err error) {
	path, err = os.Executable()
	if err != nil {
		return "", "", "", err
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return path, "", "", nil
	}
	cgo, exp := "", ""
	for _, s := range bi.Settings {
		switch s.Key {
		case "CGO_ENABLED":
			cgo = s.Value
		case "GOAMD64":
			goamd64 = s.Value
		case "-tags":
			tags = s.Value
		case "GOEXPERIMENT":
			exp = s.Value
		}
	}
	if cgo == "1" || !strings.Contains(exp, "norandomizedheapbase64") {
		return "", "", "", fmt.Errorf("this perf binary was built with CGO_ENABLED=%s GOEXPERIMENT=%q; the gate needs %s (make perf-check builds it so)", cgo, exp, buildHint)
	}
	if goamd64 == "" && runtime.GOARCH == "amd64" {
		goamd64 = "v1"
	}
	return path, goamd64, tags, nil
}

// gateFeatures are the CPU features that choose code paths in the Go
// runtime, the standard library and Canopy's kernels.
var gateFeatures = []cpuid.FeatureID{cpuid.SSE3, cpuid.SSSE3, cpuid.SSE4, cpuid.SSE42, cpuid.POPCNT,
	cpuid.AVX, cpuid.AVX2, cpuid.FMA3, cpuid.BMI1, cpuid.BMI2, cpuid.ERMS, cpuid.FSRM, cpuid.ADX,
	cpuid.AESNI, cpuid.SHA, cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL}

// cpuBrand is the CPU's brand string (under valgrind: the CPU valgrind
// emulates, whatever the host).
func cpuBrand() string { return cpuid.CPU.BrandName }

// cpuFeatures lists the gateFeatures the CPU has.
func cpuFeatures() string {
	var out []string
	for _, f := range gateFeatures {
		if cpuid.CPU.Supports(f) {
			out = append(out, f.String())
		}
	}
	return strings.Join(out, " ")
}

// hostCPU is the model name of the machine's first CPU (/proc/cpuinfo).
func hostCPU() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return cpuid.CPU.BrandName
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return cpuid.CPU.BrandName
}
