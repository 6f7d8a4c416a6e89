package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// BaselineFormat tags perf/baseline.json files.
const BaselineFormat = "canopy-perf-baseline/1"

// topN is how many functions per workload the baseline keeps.
const topN = 100

// Baseline is perf/baseline.json: the instruction count of every workload
// and what it was measured with. The per-function counts are in
// FuncDir/NAME.txt beside it.
type Baseline struct {
	Format string `json:"format"`
	// Go, GOAMD64, Tags: the toolchain and build of the measured binary;
	// a different Go version compiles different code, so check warns.
	Go      string `json:"go"`
	GOAMD64 string `json:"goamd64"`
	// Kernels is the GEMM implementation forced for every workload.
	Kernels string `json:"kernels"`
	// Valgrind is `valgrind --version`; GuestCPU and Features are the
	// CPU that valgrind presented to the program (fixed per valgrind
	// version, not the host's model) and its code-path features.
	Valgrind string `json:"valgrind"`
	GuestCPU string `json:"guest_cpu"`
	Features string `json:"features"`
	// Host is the model name of the machine the baseline was made on,
	// and Commit the revision (for the record: counts do not depend on
	// the host).
	Host      string                   `json:"host"`
	Commit    string                   `json:"commit"`
	Created   string                   `json:"created"`
	Workloads map[string]BaselineEntry `json:"workloads"`
}

// BaselineEntry is one workload in the baseline.
type BaselineEntry struct {
	Instructions int64  `json:"instructions"`
	Result       string `json:"result"` // the workload's result text
}

func readBaseline(path string) (*Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no baseline at %s: make one with make perf-baseline", path)
		}
		return nil, err
	}
	var b Baseline
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if b.Format != BaselineFormat {
		return nil, fmt.Errorf("%s: format %q, want %q (remake it with make perf-baseline)", path, b.Format, BaselineFormat)
	}
	if b.Workloads == nil {
		b.Workloads = map[string]BaselineEntry{}
	}
	return &b, nil
}

// funcFile is the per-function file of workload name.
func funcFile(dir, name string) string { return filepath.Join(dir, name+".txt") }

// writeFuncs writes the top functions of p for workload name.
func writeFuncs(path, name string, p *cgProfile) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# perf baseline of %s: the %d functions with the most instructions (self, Ir) under cachegrind\n", name, topN)
	fmt.Fprintf(&b, "# total %d, counted by the gate %d\n", p.Total, p.Counted())
	for _, f := range p.topFuncs(topN) {
		fmt.Fprintf(&b, "%d %s\n", f.Count, f.Name)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// readFuncs reads a file written by writeFuncs.
func readFuncs(path string) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for ln := 1; sc.Scan(); ln++ {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		c, name, ok := strings.Cut(line, " ")
		v, err := strconv.ParseInt(c, 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("%s:%d: want <count> <function>", path, ln)
		}
		out[name] = v
	}
	return out, sc.Err()
}

// gateFlags are the flags measure, check and baseline share.
type gateFlags struct {
	baseline string
	funcDir  string
	outDir   string
	jobs     int
	kernels  string
}

func (g *gateFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&g.baseline, "baseline", "perf/baseline.json", "baseline file")
	fs.StringVar(&g.funcDir, "funcs", "", "directory of the per-function baseline files (default: baseline beside the baseline file)")
	fs.StringVar(&g.outDir, "out", "", "keep the cachegrind output files here (default: a temporary directory)")
	fs.IntVar(&g.jobs, "j", min(runtime.NumCPU(), 2), "workloads measured at once")
	fs.StringVar(&g.kernels, "kernels", "", "GEMM implementation to force (default: the baseline's, else avx2 where available)")
}

// kernelsFor is the GEMM implementation to force: the -kernels flag, else
// the baseline's (b may be nil), else avx2 where available.
func (g *gateFlags) kernelsFor(b *Baseline) string {
	switch {
	case g.kernels != "":
		return g.kernels
	case b != nil && b.Kernels != "":
		return b.Kernels
	}
	return defaultKernels()
}

func (g *gateFlags) funcsDir() string {
	if g.funcDir != "" {
		return g.funcDir
	}
	return filepath.Join(filepath.Dir(g.baseline), "baseline")
}

// outputDir returns the directory for cachegrind files and a cleanup.
func (g *gateFlags) outputDir() (string, func(), error) {
	if g.outDir != "" {
		return g.outDir, func() {}, os.MkdirAll(g.outDir, 0o755)
	}
	d, err := os.MkdirTemp("", "canopy-perf-cg-")
	return d, func() { os.RemoveAll(d) }, err
}

// gateSetup checks valgrind and the binary and returns what a gate
// command needs.
type gateSetup struct {
	bin, goamd64, tags, valgrind string
}

func newGateSetup() (*gateSetup, error) {
	vg, err := valgrindVersion()
	if err != nil {
		return nil, err
	}
	bin, goamd64, tags, err := selfBinary()
	if err != nil {
		return nil, err
	}
	return &gateSetup{bin: bin, goamd64: goamd64, tags: tags, valgrind: vg}, nil
}

func cmdMeasure(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("measure", stderr, "[flags] [NAME...]")
	var gf gateFlags
	gf.register(fs)
	runs := fs.Int("runs", 3, "runs per workload (the spread shows whether the counts are deterministic)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *runs < 1 {
		return usagef("-runs %d: want at least 1", *runs)
	}
	ws, err := selectWorkloads(fs.Args())
	if err != nil {
		return err
	}
	gs, err := newGateSetup()
	if err != nil {
		return err
	}
	b, _ := readBaseline(gf.baseline) // only for its kernels; none is fine
	kern := gf.kernelsFor(b)
	dir, cleanup, err := gf.outputDir()
	if err != nil {
		return err
	}
	defer cleanup()
	start := time.Now()
	res, err := measureAll(gs.bin, ws, kern, dir, *runs, gf.jobs, nil)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "workload\t")
	for r := range *runs {
		fmt.Fprintf(tw, "run %d\t", r+1)
	}
	fmt.Fprintln(tw, "spread\tspread with noise funcs\tresult\t")
	for i, w := range ws {
		fmt.Fprintf(tw, "%s\t", w.name)
		if res[i][0].Skip != "" {
			fmt.Fprintf(tw, "skipped: %s\t\n", res[i][0].Skip)
			continue
		}
		lo, hi := int64(math.MaxInt64), int64(0)
		rlo, rhi := int64(math.MaxInt64), int64(0)
		for _, m := range res[i] {
			c := m.Counted()
			fmt.Fprintf(tw, "%d\t", c)
			lo, hi = min(lo, c), max(hi, c)
			rlo, rhi = min(rlo, m.Total), max(rhi, m.Total)
		}
		fmt.Fprintf(tw, "%.3f%%\t%.3f%%\t%s\t\n", 100*float64(hi-lo)/float64(lo), 100*float64(rhi-rlo)/float64(rlo), res[i][0].Result)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "(%s; kernels %s; guest CPU %q; %.0f s)\n", gs.valgrind, kern, res[0][0].CPU, time.Since(start).Seconds())
	return nil
}

func cmdBaseline(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("baseline", stderr, "[flags] [NAME...]")
	var gf gateFlags
	gf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ws, err := selectWorkloads(fs.Args())
	if err != nil {
		return err
	}
	gs, err := newGateSetup()
	if err != nil {
		return err
	}
	if gs.tags != "" {
		return fmt.Errorf("this binary was built with -tags %q: a baseline must come from a plain build", gs.tags)
	}
	// Updating some workloads keeps the others, measured the same way.
	b := &Baseline{Workloads: map[string]BaselineEntry{}}
	kern := gf.kernelsFor(nil)
	if len(fs.Args()) > 0 {
		if b, err = readBaseline(gf.baseline); err != nil {
			return fmt.Errorf("updating some workloads needs the existing baseline: %v", err)
		}
		kern = gf.kernelsFor(b)
	}
	dir, cleanup, err := gf.outputDir()
	if err != nil {
		return err
	}
	defer cleanup()
	res, err := measureAll(gs.bin, ws, kern, dir, 1, gf.jobs, func(name string, _ int, m *measurement) {
		fmt.Fprintf(stderr, "  %-24s %14d\n", name, m.Counted())
	})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(gf.funcsDir(), 0o755); err != nil {
		return err
	}
	for i, w := range ws {
		if m := res[i][0]; m.Skip != "" {
			return fmt.Errorf("%s was skipped (%s): a baseline needs every workload; put the reference data in place", w.name, m.Skip)
		}
	}
	first := res[0][0]
	if len(fs.Args()) > 0 && (b.Go != first.Go || b.GOAMD64 != gs.goamd64 || b.Valgrind != gs.valgrind || b.GuestCPU != first.CPU) {
		return fmt.Errorf("the baseline was made with %s, GOAMD64=%s, %s on %q; this run uses %s, GOAMD64=%s, %s on %q: remake the whole baseline (make perf-baseline), not some workloads",
			b.Go, b.GOAMD64, b.Valgrind, b.GuestCPU, first.Go, gs.goamd64, gs.valgrind, first.CPU)
	}
	for i, w := range ws {
		m := res[i][0]
		b.Workloads[w.name] = BaselineEntry{Instructions: m.Counted(), Result: m.Result}
		if err := writeFuncs(funcFile(gf.funcsDir(), w.name), w.name, &m.cgProfile); err != nil {
			return err
		}
	}
	b.Format, b.Go, b.GOAMD64, b.Kernels = BaselineFormat, first.Go, gs.goamd64, first.Kernels
	b.Valgrind, b.GuestCPU, b.Features = gs.valgrind, first.CPU, first.Features
	b.Host, b.Commit, b.Created = hostCPU(), gitCommit(), time.Now().UTC().Format(time.RFC3339)
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(gf.baseline, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s and %s/*.txt (%d workloads; %s, kernels %s, %s)\n", gf.baseline, gf.funcsDir(), len(ws), b.Go, b.Kernels, b.Valgrind)
	fmt.Fprintln(stdout, "commit them with a message that says why the baseline changed")
	return nil
}

// gitCommit is the short hash of HEAD with "-dirty" for local changes, or
// "unknown".
func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		c += "-dirty"
	}
	return c
}

// row is one workload's line of the check table.
type row struct {
	name       string
	base, now  int64
	change     float64 // percent
	status     string  // "ok", "REGRESSED", "improved", "new", "skipped", "missing"
	result     string
	baseResult string
	funcs      map[string]int64
}

func cmdCheck(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("check", stderr, "[flags] [NAME...]")
	var gf gateFlags
	gf.register(fs)
	threshold := fs.Float64("threshold", 3, "fail when a workload's count is more than this many percent above its baseline")
	profiles := fs.String("profiles", "", "also write native CPU and heap profiles of the workloads here and print their top functions")
	expect := fs.String("expect", "", "self-test: comma-separated workloads that must be reported as regressed (and no others); exit 0 when exactly they are")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ws, err := selectWorkloads(fs.Args())
	if err != nil {
		return err
	}
	expected := map[string]bool{}
	for _, n := range strings.Split(*expect, ",") {
		if n == "" {
			continue
		}
		if lookupWorkload(n) == nil {
			return usagef("-expect: unknown workload %q", n)
		}
		expected[n] = true
	}
	b, err := readBaseline(gf.baseline)
	if err != nil {
		return err
	}
	gs, err := newGateSetup()
	if err != nil {
		return err
	}
	kern := gf.kernelsFor(b)
	dir, cleanup, err := gf.outputDir()
	if err != nil {
		return err
	}
	defer cleanup()
	start := time.Now()
	fmt.Fprintf(stdout, "perf check: %d workloads under cachegrind (%s), kernels %s, threshold +%.1f%%\n", len(ws), gs.valgrind, kern, *threshold)
	res, err := measureAll(gs.bin, ws, kern, dir, 1, gf.jobs, nil)
	if err != nil {
		return err
	}
	var first *measurement
	for i := range ws {
		if res[i][0].Skip == "" {
			first = res[i][0]
			break
		}
	}
	if first != nil {
		warnEnv(stdout, b, gs, first, kern)
	}
	rows := compare(ws, res, b, *threshold)
	printTable(stdout, rows, *threshold)
	printFuncDiffs(stdout, rows, gf.funcsDir())
	fmt.Fprintf(stdout, "cachegrind: %.0f s\n", time.Since(start).Seconds())
	if *profiles != "" {
		if err := profileAll(stdout, stderr, gs.bin, ws, kern, *profiles, time.Second); err != nil {
			return err
		}
	}
	var regressed []string
	for _, r := range rows {
		if r.status == "REGRESSED" {
			regressed = append(regressed, r.name)
		}
	}
	if len(expected) > 0 {
		return checkExpected(stdout, regressed, expected)
	}
	if len(regressed) > 0 {
		fmt.Fprintf(stdout, "\nFAIL: %s more than %.1f%% above the baseline. Find the cause in the functions above and the profiles;\n"+
			"if the extra work is intended, run make perf-baseline and commit the new baseline saying why.\n", strings.Join(regressed, ", "), *threshold)
		return fmt.Errorf("%w: %s", errRegression, strings.Join(regressed, ", "))
	}
	fmt.Fprintln(stdout, "\nperf check: ok")
	return nil
}

// checkExpected is the self-test's verdict: exactly the expected
// workloads regressed.
func checkExpected(w io.Writer, regressed []string, expected map[string]bool) error {
	var missing, extra []string
	got := map[string]bool{}
	for _, n := range regressed {
		got[n] = true
		if !expected[n] {
			extra = append(extra, n)
		}
	}
	for n := range expected {
		if !got[n] {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 || len(extra) > 0 {
		return fmt.Errorf("self-test failed: not reported as regressed: %v; reported but not expected: %v", missing, extra)
	}
	fmt.Fprintf(w, "\nperf self-test: ok: the gate reported the injected regression in %s and nothing else\n", strings.Join(regressed, ", "))
	return nil
}

// warnEnv prints what differs between the baseline's environment and
// this run's: a different Go version or GOAMD64 level compiles different
// code, and a different valgrind may present a different CPU, so counts
// may move for reasons that are not the change under test.
func warnEnv(w io.Writer, b *Baseline, gs *gateSetup, m *measurement, kern string) {
	warn := func(what, base, now string) {
		if base != now {
			fmt.Fprintf(w, "WARNING: %s differs from the baseline's (baseline %q, now %q): counts may differ for that reason alone; remake the baseline on the new toolchain (make perf-baseline) in a commit of its own\n", what, base, now)
		}
	}
	warn("Go version", b.Go, m.Go)
	warn("GOAMD64", b.GOAMD64, gs.goamd64)
	warn("valgrind version", b.Valgrind, gs.valgrind)
	warn("CPU presented by valgrind", b.GuestCPU, m.CPU)
	warn("CPU features seen under valgrind", b.Features, m.Features)
	warn("GEMM kernels", b.Kernels, kern)
	if gs.tags != "" {
		fmt.Fprintf(w, "NOTE: this binary was built with -tags %q\n", gs.tags)
	}
}

// compare builds the check table.
func compare(ws []*workload, res [][]*measurement, b *Baseline, threshold float64) []row {
	var rows []row
	for i, w := range ws {
		m := res[i][0]
		r := row{name: w.name, now: m.Counted(), result: m.Result, funcs: m.Funcs}
		e, ok := b.Workloads[w.name]
		switch {
		case m.Skip != "":
			r.status, r.base = "skipped", e.Instructions
			r.result = m.Skip
		case !ok:
			r.status = "new"
		default:
			r.base, r.baseResult = e.Instructions, e.Result
			r.change = 100 * float64(r.now-e.Instructions) / float64(e.Instructions)
			switch {
			case r.change > threshold:
				r.status = "REGRESSED"
			case r.change < -threshold:
				r.status = "improved"
			default:
				r.status = "ok"
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// printTable prints workload, baseline, now and change.
func printTable(w io.Writer, rows []row, threshold float64) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tbaseline\tnow\tchange\t\t")
	for _, r := range rows {
		switch r.status {
		case "new":
			fmt.Fprintf(tw, "%s\t-\t%d\t\tnew (not in the baseline)\t\n", r.name, r.now)
		case "skipped":
			fmt.Fprintf(tw, "%s\t%d\t-\t\tskipped: %s\t\n", r.name, r.base, r.result)
		default:
			fmt.Fprintf(tw, "%s\t%d\t%d\t%+.2f%%\t%s\t\n", r.name, r.base, r.now, r.change, r.status)
		}
	}
	tw.Flush()
	for _, r := range rows {
		if r.baseResult != "" && r.result != r.baseResult {
			fmt.Fprintf(w, "note: %s now computes %q (baseline %q): it does different work, so its counts compare different computations\n", r.name, r.result, r.baseResult)
		}
	}
	fmt.Fprintf(w, "(instructions under cachegrind; a change above +%.1f%% fails, one below -%.1f%% is reported as an improvement)\n", threshold, threshold)
}

// printFuncDiffs prints, for every regressed or improved workload, the
// functions whose counts changed most against the baseline's
// per-function file.
func printFuncDiffs(w io.Writer, rows []row, funcDir string) {
	for _, r := range rows {
		if r.status != "REGRESSED" && r.status != "improved" {
			continue
		}
		base, err := readFuncs(funcFile(funcDir, r.name))
		if err != nil {
			fmt.Fprintf(w, "\n%s: no per-function baseline (%v)\n", r.name, err)
			continue
		}
		fmt.Fprintf(w, "\n%s: functions whose counts changed most (%s)\n", r.name, r.status)
		for _, line := range funcDiff(base, r.funcs, 10, r.status == "REGRESSED", r.base/5000) {
			fmt.Fprintln(w, line)
		}
	}
}

// funcDiff returns the n lines of the per-function diff with the largest
// growth (grew) or shrinkage, leaving out changes of less than minDelta
// instructions (the run-to-run noise of the runtime). base holds only the
// baseline's top functions: a function missing from it cost at most the
// smallest count listed, so its change is shown as a bound (<= and >=).
func funcDiff(base, now map[string]int64, n int, grew bool, minDelta int64) []string {
	floor := int64(math.MaxInt64)
	for _, c := range base {
		floor = min(floor, c)
	}
	if len(base) < topN {
		floor = 0 // the file lists every function with a count
	}
	type d struct {
		name      string
		b, c      int64
		bounded   bool
		delta     int64
		sortDelta int64
	}
	var ds []d
	seen := map[string]bool{}
	add := func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		b, inBase := base[name]
		c := now[name]
		x := d{name: name, b: b, c: c, delta: c - b}
		if !inBase {
			x.bounded, x.b = true, floor
			x.delta = max(c-floor, 0)
		}
		x.sortDelta = x.delta
		if !grew {
			x.sortDelta = -x.delta
		}
		ds = append(ds, x)
	}
	for name := range base {
		add(name)
	}
	// Functions outside the baseline's list matter only if they are now
	// among the costliest.
	for _, f := range (&cgProfile{Funcs: now}).topFuncs(topN) {
		add(f.Name)
	}
	sort.Slice(ds, func(i, j int) bool {
		if ds[i].sortDelta != ds[j].sortDelta {
			return ds[i].sortDelta > ds[j].sortDelta
		}
		return ds[i].name < ds[j].name
	})
	var lines []string
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  baseline\tnow\tchange\t\tfunction")
	for _, x := range ds[:min(n, len(ds))] {
		if x.sortDelta <= max(minDelta, 0) {
			break
		}
		bs, sign := strconv.FormatInt(x.b, 10), ""
		if x.bounded {
			bs, sign = "<="+bs, ">="
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s%+d\t\t%s\n", bs, x.c, sign, x.delta, shortName(x.name))
	}
	tw.Flush()
	for _, l := range strings.Split(strings.TrimRight(sb.String(), "\n"), "\n") {
		lines = append(lines, l)
	}
	return lines
}

// shortName drops the module path from a function name.
func shortName(s string) string {
	return strings.ReplaceAll(s, "github.com/canopy-go/canopy/", "")
}
