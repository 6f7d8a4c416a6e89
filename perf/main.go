package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/canopy-go/canopy/kernels"
)

// errUsage marks a command-line mistake (exit status 2).
var errUsage = errors.New("usage")

// errRegression is returned by check when a workload is over its
// threshold (exit status 1, after the report).
var errRegression = errors.New("performance regression")

func usagef(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// commands maps a subcommand to its implementation.
var commands = map[string]func(args []string, stdout, stderr io.Writer) error{
	"list":     cmdList,
	"run":      cmdRun,
	"measure":  cmdMeasure,
	"check":    cmdCheck,
	"baseline": cmdBaseline,
	"profile":  cmdProfile,
	"ab":       cmdAB,
	"benchfmt": cmdBenchfmt,
}

const usage = `usage: perf COMMAND [flags] [args]

commands:
  list                      the gate's workloads
  run [flags] NAME          run one workload natively (pprof profiles with -cpuprofile/-memprofile)
  measure [flags] [NAME...] instruction counts under cachegrind (-runs 3 shows the spread)
  check [flags] [NAME...]   compare counts with perf/baseline.json; exit 1 on a regression
  baseline [flags] [NAME...] measure and rewrite the baseline (a deliberate step: say why in the commit)
  profile -out DIR [NAME...] CPU and heap profiles of the workloads, run natively
  ab -old REV [-new REV]    build two revisions, run their benchmarks interleaved, print benchstat's table
  benchfmt [FILE]           convert 'canopy bench ... --json' output to the Go benchmark format

Run 'perf COMMAND -h' for a command's flags; docs/PERFORMANCE.md explains the gate.
`

func main() {
	os.Exit(mainErr(os.Args[1:], os.Stdout, os.Stderr))
}

// mainErr runs the command line args and returns the exit status.
func mainErr(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	f, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "perf: unknown command %q\n%s", args[0], usage)
		return 2
	}
	err := f(args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "perf %s: %v\n", args[0], strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
		return 2
	case errors.Is(err, errRegression):
		fmt.Fprintf(stderr, "perf %s: %v\n", args[0], err)
		return 1
	default:
		fmt.Fprintf(stderr, "perf %s: %v\n", args[0], err)
		return 1
	}
}

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name string, stderr io.Writer, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("perf "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: perf %s %s\n\nflags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, turning flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	return nil
}

// selectWorkloads returns the named workloads, or all of them for no
// names.
func selectWorkloads(names []string) ([]*workload, error) {
	if len(names) == 0 {
		return workloads, nil
	}
	var out []*workload
	for _, arg := range names {
		for _, n := range strings.Split(arg, ",") {
			if n == "" {
				continue
			}
			w := lookupWorkload(n)
			if w == nil {
				return nil, usagef("unknown workload %q (perf list shows them)", n)
			}
			out = append(out, w)
		}
	}
	return out, nil
}

func cmdList(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("list", stderr, "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, w := range workloads {
		needs := ""
		if w.data != "" {
			needs = " (reads shared/data/" + w.data + ")"
		}
		fmt.Fprintf(tw, "%s\t%s%s\n", w.name, w.doc, needs)
	}
	return tw.Flush()
}

// findDataDir returns shared/data beside the module root above the
// working directory, or "" when there is none.
func findDataDir() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			data := filepath.Join(filepath.Dir(dir), "shared", "data")
			if fi, err := os.Stat(data); err == nil && fi.IsDir() {
				return data
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// onCI reports whether the CI environment variable is set: missing
// reference data is then an error, not a skip (as in internal/refdata).
func onCI() bool { return os.Getenv("CI") != "" }

// defaultKernels is the GEMM implementation the gate pins: avx2 where the
// CPU (as valgrind presents it) has it, else generic.
func defaultKernels() string {
	for _, k := range kernels.Available() {
		if k == "avx2" {
			return k
		}
	}
	return "generic"
}

// resultPrefix starts the last line `perf run` prints, parsed by the
// gate: the workload's result and the environment it saw.
const resultPrefix = "perf-result "

func cmdRun(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", stderr, "[flags] NAME")
	kern := fs.String("kernels", "", "GEMM implementation to force (generic, avx2, avx512; default: avx2 where available, else generic)")
	dataDir := fs.String("data", "", "reference data directory (default: shared/data beside the module root)")
	cpuProfile := fs.String("cpuprofile", "", "write a pprof CPU profile of the workload's runs to this file")
	memProfile := fs.String("memprofile", "", "write a pprof allocation profile of the workload's runs to this file")
	minTime := fs.Duration("mintime", 0, "repeat the workload until this much time has passed (for profiles)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("name one workload (perf list shows them)")
	}
	w := lookupWorkload(fs.Arg(0))
	if w == nil {
		return usagef("unknown workload %q (perf list shows them)", fs.Arg(0))
	}
	if *kern == "" {
		*kern = defaultKernels()
	}
	if _, err := kernels.Use(*kern); err != nil {
		return err
	}
	kernels.SetThreads(1)
	if *dataDir == "" {
		*dataDir = findDataDir()
	}
	tmp, err := os.MkdirTemp("", "canopy-perf-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if *memProfile != "" {
		runtime.MemProfileRate = 4096
	}
	run, err := w.setup(&runEnv{dataDir: *dataDir, tmpDir: tmp})
	if errors.Is(err, errNoData) {
		if onCI() {
			return fmt.Errorf("%s: %v (CI is set: the workload must not be skipped)", w.name, err)
		}
		fmt.Fprintf(stdout, "%sskip %s\n", resultPrefix, strings.ReplaceAll(err.Error(), "\n", " "))
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %v", w.name, err)
	}
	var cpuFile *os.File
	if *cpuProfile != "" {
		if cpuFile, err = createFile(*cpuProfile); err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(cpuFile); err != nil {
			cpuFile.Close()
			return err
		}
	}
	start := time.Now()
	var res string
	reps := 0
	for {
		if res, err = run(); err != nil {
			break
		}
		reps++
		if time.Since(start) >= *minTime {
			break
		}
	}
	elapsed := time.Since(start)
	if cpuFile != nil {
		pprof.StopCPUProfile()
		if cerr := cpuFile.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %v", w.name, err)
	}
	if *memProfile != "" {
		if err := writeAllocProfile(*memProfile); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "%sok reps=%d seconds=%.3f kernels=%s go=%s cpu=%q features=%q result=%q\n",
		resultPrefix, reps, elapsed.Seconds(), kernels.Current(), runtime.Version(), cpuBrand(), cpuFeatures(), res)
	return nil
}

// createFile creates path and its directory.
func createFile(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return os.Create(path)
}

// writeAllocProfile writes the allocation profile (every allocation since
// the start, sampled) to path.
func writeAllocProfile(path string) error {
	f, err := createFile(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
