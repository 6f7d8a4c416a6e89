package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

func cmdProfile(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("profile", stderr, "-out DIR [flags] [NAME...]")
	out := fs.String("out", "", "directory for NAME.cpu.pprof and NAME.heap.pprof (required, e.g. runs/perf-<rev>)")
	minTime := fs.Duration("mintime", time.Second, "repeat each workload for at least this long")
	kern := fs.String("kernels", "", "GEMM implementation to force (default: avx2 where available, as under the gate)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("-out DIR is required")
	}
	ws, err := selectWorkloads(fs.Args())
	if err != nil {
		return err
	}
	bin, _, _, err := selfBinary()
	if err != nil {
		return err
	}
	if *kern == "" {
		*kern = defaultKernels()
	}
	return profileAll(stdout, stderr, bin, ws, *kern, *out, *minTime)
}

// profileAll runs every workload natively in its own process (bin run
// -mintime), one after the other, writing NAME.cpu.pprof and
// NAME.heap.pprof into dir, and prints the top functions of each CPU
// profile.
func profileAll(stdout, stderr io.Writer, bin string, ws []*workload, kern, dir string, minTime time.Duration) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nprofiles (native, kernels %s, each workload repeated for %v): %s\n", kern, minTime, dir)
	fmt.Fprintf(stdout, "  read one with: go tool pprof -top %s\n", filepath.Join(dir, "NAME.cpu.pprof"))
	for _, w := range ws {
		if w.startupOnly {
			fmt.Fprintf(stdout, "  %-24s not profiled: it measures process start-up\n", w.name)
			continue
		}
		cpu := filepath.Join(dir, w.name+".cpu.pprof")
		heap := filepath.Join(dir, w.name+".heap.pprof")
		cmd := exec.Command(bin, "run", "-kernels", kern, "-mintime", minTime.String(),
			"-cpuprofile", cpu, "-memprofile", heap, w.name)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("profiling %s: %v\n%s", w.name, err, out.String())
		}
		rr, err := parseRunResult(out.String())
		if err != nil {
			return fmt.Errorf("profiling %s: %v", w.name, err)
		}
		if rr.Skip != "" {
			fmt.Fprintf(stdout, "  %-24s skipped: %s\n", w.name, rr.Skip)
			continue
		}
		top, total, err := topOfProfile(cpu, 4)
		if err != nil {
			return fmt.Errorf("%s: %v", cpu, err)
		}
		fmt.Fprintf(stdout, "  %-24s %5.2fs CPU  %s\n", w.name, total.Seconds(), strings.Join(top, "  "))
	}
	return nil
}

// topOfProfile returns the n functions with the most flat CPU time in the
// profile at path, as "12.3% name", and the profile's total CPU time.
func topOfProfile(path string, n int) ([]string, time.Duration, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, 0, err
	}
	vi := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			vi = i
		}
	}
	if vi < 0 {
		return nil, 0, fmt.Errorf("not a CPU profile")
	}
	flat := map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		v := s.Value[vi]
		total += v
		name := "?"
		if len(s.Location) > 0 && len(s.Location[0].Line) > 0 && s.Location[0].Line[0].Function != nil {
			name = s.Location[0].Line[0].Function.Name
		}
		flat[name] += v
	}
	type fv struct {
		name string
		v    int64
	}
	var fs []fv
	for k, v := range flat {
		fs = append(fs, fv{k, v})
	}
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].v != fs[j].v {
			return fs[i].v > fs[j].v
		}
		return fs[i].name < fs[j].name
	})
	var out []string
	for _, x := range fs[:min(n, len(fs))] {
		out = append(out, fmt.Sprintf("%4.1f%% %s", 100*float64(x.v)/float64(max(total, 1)), shortFunc(x.name)))
	}
	return out, time.Duration(total), nil
}

// shortFunc trims a function name for the one-line summary: no module
// path, no package path before the last slash.
func shortFunc(s string) string {
	s = shortName(s)
	if i := strings.LastIndex(s, "/"); i >= 0 && !strings.Contains(s[:i], "(") {
		s = s[i+1:]
	}
	return s
}
