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
)

// benchstatPkg is the benchstat that ab runs (go run PKG@VERSION: nothing
// is added to go.mod). golang.org/x/perf has no tagged releases; this is
// its pseudo-version of 2026-09-08.
const benchstatPkg = "golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"

// abSide is one revision of an A/B comparison.
type abSide struct {
	label string // "old" or "new"
	rev   string // as given; "" for the working tree
	dir   string // source tree
	bin   string // directory of its built binaries
	pkgs  map[string]string
	out   *os.File
}

func cmdAB(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("ab", stderr, "-old REV [-new REV] [flags]")
	oldRev := fs.String("old", "", "the baseline revision (required)")
	newRev := fs.String("new", "", "the revision to compare (default: the working tree as it is)")
	pkgs := fs.String("pkgs", "./...", "packages whose benchmarks run (space- or comma-separated patterns)")
	benchRe := fs.String("bench", ".", "benchmarks to run (go test -bench regexp)")
	benchTime := fs.String("benchtime", "1s", "go test -benchtime of each run")
	rounds := fs.Int("rounds", 5, "rounds: each runs every benchmark once per revision, alternating which goes first")
	canopyArgs := fs.String("canopy", "", "instead of go test benchmarks, run `canopy bench ARGS --json` (e.g. \"games --game connect4 --seconds 1\") from each revision")
	outDir := fs.String("out", "", "directory for old.txt, new.txt and benchstat.txt (default runs/ab-<time>)")
	keep := fs.Bool("keep", false, "keep the temporary worktrees and binaries")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *oldRev == "" {
		return usagef("-old REV is required (make bench-compare OLD=<rev> NEW=<rev>)")
	}
	if *rounds < 1 {
		return usagef("-rounds %d: want at least 1", *rounds)
	}
	root, err := gitOutput("", "rev-parse", "--show-toplevel")
	if err != nil {
		return fmt.Errorf("not inside a git repository: %v", err)
	}
	if *outDir == "" {
		*outDir = filepath.Join(root, "runs", "ab-"+time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "canopy-ab-")
	if err != nil {
		return err
	}
	if !*keep {
		defer os.RemoveAll(tmp)
	}
	// Tests find the reference data beside the module root: give the
	// worktrees the repository's.
	if shared := filepath.Join(filepath.Dir(root), "shared"); dirExists(shared) {
		if err := os.Symlink(shared, filepath.Join(tmp, "shared")); err != nil {
			return err
		}
	}
	sides := []*abSide{{label: "old", rev: *oldRev}, {label: "new", rev: *newRev}}
	for _, s := range sides {
		s.bin = filepath.Join(tmp, "bin-"+s.label)
		if err := os.MkdirAll(s.bin, 0o755); err != nil {
			return err
		}
		if s.rev == "" {
			s.dir = root
			continue
		}
		commit, err := gitOutput(root, "rev-parse", "--verify", s.rev+"^{commit}")
		if err != nil {
			return fmt.Errorf("-%s %s: not a revision: %v", s.label, s.rev, err)
		}
		s.dir = filepath.Join(tmp, s.label)
		if _, err := gitOutput(root, "worktree", "add", "--detach", s.dir, commit); err != nil {
			return fmt.Errorf("git worktree add %s: %v", s.dir, err)
		}
		if !*keep {
			defer gitOutput(root, "worktree", "remove", "--force", s.dir)
		}
	}
	for _, s := range sides {
		fmt.Fprintf(stderr, "ab: building %s (%s)\n", s.label, describeRev(s.rev))
		if *canopyArgs != "" {
			if err := runIn(s.dir, nil, "go", "build", "-o", filepath.Join(s.bin, "canopy"), "./cmd/canopy"); err != nil {
				return fmt.Errorf("building canopy at %s: %v", describeRev(s.rev), err)
			}
			continue
		}
		if s.pkgs, err = buildTestBinaries(s, strings.FieldsFunc(*pkgs, func(r rune) bool { return r == ' ' || r == ',' })); err != nil {
			return err
		}
	}
	var common []string // packages with benchmarks in both revisions
	if *canopyArgs == "" {
		for p := range sides[0].pkgs {
			if _, ok := sides[1].pkgs[p]; ok {
				common = append(common, p)
			}
		}
		if len(common) == 0 {
			return fmt.Errorf("no package matching %q has benchmarks in both revisions", *pkgs)
		}
		sort.Strings(common)
	}
	for _, s := range sides {
		if s.out, err = os.Create(filepath.Join(*outDir, s.label+".txt")); err != nil {
			return err
		}
		defer s.out.Close()
	}
	for r := range *rounds {
		order := sides
		if r%2 == 1 {
			order = []*abSide{sides[1], sides[0]}
		}
		for _, s := range order {
			fmt.Fprintf(stderr, "ab: round %d/%d: %s\n", r+1, *rounds, s.label)
			if *canopyArgs != "" {
				if err := runCanopyBench(s, strings.Fields(*canopyArgs)); err != nil {
					return err
				}
				continue
			}
			for _, p := range common {
				cmd := exec.Command(filepath.Join(s.bin, testBinName(p)), "-test.run", "^$", "-test.bench", *benchRe,
					"-test.benchtime", *benchTime, "-test.count", "1", "-test.benchmem")
				cmd.Dir = s.pkgs[p]
				cmd.Stdout, cmd.Stderr = s.out, stderr
				if err := cmd.Run(); err != nil {
					return fmt.Errorf("%s benchmarks of %s: %v", s.label, p, err)
				}
			}
		}
	}
	for _, s := range sides {
		if err := s.out.Sync(); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "ab: benchstat (%s)\n", benchstatPkg)
	cmd := exec.Command("go", "run", benchstatPkg, "old="+sides[0].out.Name(), "new="+sides[1].out.Name())
	cmd.Dir = tmp
	var table bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(stdout, &table), stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("benchstat: %v (the raw results are in %s)", err, *outDir)
	}
	if err := os.WriteFile(filepath.Join(*outDir, "benchstat.txt"), table.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nold = %s, new = %s; %d rounds; results in %s\n", describeRev(sides[0].rev), describeRev(sides[1].rev), *rounds, *outDir)
	return nil
}

// describeRev names a side's revision.
func describeRev(rev string) string {
	if rev == "" {
		return "the working tree"
	}
	return rev
}

// buildTestBinaries compiles the test binary of every package matching
// patterns in s.dir and returns the packages that have benchmarks, with
// their source directories.
func buildTestBinaries(s *abSide, patterns []string) (map[string]string, error) {
	out, err := outputIn(s.dir, "go", append([]string{"list", "-f", "{{.ImportPath}} {{.Dir}} {{len .TestGoFiles}} {{len .XTestGoFiles}}"}, patterns...)...)
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %v", s.dir, err)
	}
	pkgs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || (f[2] == "0" && f[3] == "0") {
			continue
		}
		bin := filepath.Join(s.bin, testBinName(f[0]))
		if err := runIn(s.dir, []string{"CGO_ENABLED=0"}, "go", "test", "-c", "-o", bin, f[0]); err != nil {
			return nil, fmt.Errorf("building the tests of %s at %s: %v", f[0], describeRev(s.rev), err)
		}
		list, err := outputIn(f[1], bin, "-test.list", "^Benchmark")
		if err != nil {
			return nil, fmt.Errorf("%s -test.list: %v", bin, err)
		}
		if strings.Contains(list, "Benchmark") {
			pkgs[f[0]] = f[1]
		}
	}
	return pkgs, nil
}

// testBinName is the file name of a package's test binary.
func testBinName(importPath string) string {
	return strings.ReplaceAll(importPath, "/", "_") + ".test"
}

// runCanopyBench runs s's canopy bench once and appends the result in the
// Go benchmark format.
func runCanopyBench(s *abSide, args []string) error {
	cmd := exec.Command(filepath.Join(s.bin, "canopy"), append(append([]string{"bench"}, args...), "--json", "--quiet")...)
	cmd.Dir = s.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: canopy bench %s: %v\n%s", s.label, strings.Join(args, " "), err, errb.String())
	}
	return benchToGoFormat(s.out, out.Bytes())
}

// gitOutput runs git in dir and returns its trimmed output.
func gitOutput(dir string, args ...string) (string, error) {
	out, err := outputIn(dir, "git", args...)
	return strings.TrimSpace(out), err
}

// outputIn runs a command in dir and returns its standard output; the
// error carries its standard error.
func outputIn(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%v: %s", err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// runIn runs a command in dir with extra environment, its output going
// into the error.
func runIn(dir string, env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
