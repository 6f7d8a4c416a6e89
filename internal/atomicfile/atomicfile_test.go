package atomicfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestWriteFileReplacesAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := WriteFile(p, []byte{'n', 'e', 'w', byte('0' + i)}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	b, err := os.ReadFile(p)
	if err != nil || len(b) != 4 || string(b[:3]) != "new" {
		t.Fatalf("content %q, %v", b, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left behind: %v", ents)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm()&0o400 == 0 {
		t.Errorf("mode %v not readable", fi.Mode())
	}
}

func TestWriteFileMissingDir(t *testing.T) {
	if err := WriteFile(filepath.Join(t.TempDir(), "no", "such", "x"), nil); err == nil {
		t.Fatal("want an error for a missing directory")
	}
}

func TestWriteFileDirectory(t *testing.T) {
	dir := t.TempDir()
	err := WriteFile(dir, []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("writing over a directory: %v", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Errorf("the directory is gone: %v", err)
	}
}

func TestIsTempAndRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	// Names as WriteFile makes them, and look-alikes it never makes.
	temps := []string{".shard-000001.npz.tmp-123456", ".manifest.json.tmp-1"}
	keep := []string{"shard-000001.npz", ".lock", ".x.tmp-", ".x.tmp-12a", "x.tmp-12", ".tmp-12", "manifest.json"}
	for _, n := range append(slices.Clone(temps), keep...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(dir, ".d.tmp-9"), 0o755) // a directory: never removed
	for _, n := range temps {
		if !IsTemp(n) {
			t.Errorf("IsTemp(%q) = false", n)
		}
	}
	for _, n := range keep {
		if IsTemp(n) {
			t.Errorf("IsTemp(%q) = true", n)
		}
	}
	removed, err := RemoveTemps(dir)
	slices.Sort(removed)
	slices.Sort(temps)
	if err != nil || !slices.Equal(removed, temps) {
		t.Errorf("RemoveTemps: %v, %v; want %v", removed, err, temps)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != len(keep)+1 {
		t.Errorf("left %d entries, want %d: %v", len(ents), len(keep)+1, ents)
	}
	// A temporary file WriteFile makes matches.
	f, _ := os.CreateTemp(dir, tempPattern("out.json"))
	f.Close()
	if !IsTemp(filepath.Base(f.Name())) {
		t.Errorf("IsTemp(%q) = false", filepath.Base(f.Name()))
	}
}
