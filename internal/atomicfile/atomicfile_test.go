package atomicfile

import (
	"os"
	"path/filepath"
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
