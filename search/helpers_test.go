package search

import (
	"os"
	"path/filepath"
	"testing"
)

// dataDir returns <repo>/../shared/data, found by walking up from the
// test's working directory to the module root; it skips the test when the
// directory is absent.
func dataDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			d := filepath.Join(dir, "..", "shared", "data")
			if _, err := os.Stat(d); err != nil {
				t.Skipf("reference data %s absent: %v", d, err)
			}
			return d
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("module root not found; reference data absent")
		}
		dir = parent
	}
}
