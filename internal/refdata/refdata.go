// Package refdata locates the project's outside reference data (perft
// counts, solver positions, rules examples, board files) for tests. The
// data lives in shared/data beside the repository: <repo>/../shared/data.
//
// Locally a test whose data is absent is skipped with a message; under CI
// (the CI environment variable is set) it fails instead, so a misplaced
// data folder can never turn reference checks into silent skips.
package refdata

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the absolute path of shared/data, found by walking up from
// the test's working directory to the module root (the directory holding
// go.mod) and looking beside it.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			data := filepath.Join(filepath.Dir(dir), "shared", "data")
			if _, err := os.Stat(data); err != nil {
				missing(t, "reference data folder "+data+" not found (expected beside the repository)")
			}
			return data
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			missing(t, "module root (go.mod) not found above the test directory")
		}
		dir = parent
	}
}

// Path returns the path of a file under shared/data, e.g.
// Path(t, "connect4/solver_L2_R1.txt"), checking that it exists.
func Path(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(Dir(t), filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		missing(t, "reference file "+p+" not found")
	}
	return p
}

func missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (CI is set: reference checks must not be skipped)")
	}
	t.Skip(msg + "; skipping")
}
