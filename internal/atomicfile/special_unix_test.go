//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package atomicfile

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A symbolic link stays a link: the file it names gets the new content.
func TestWriteFileFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "sub", "real.json")
	os.Mkdir(filepath.Dir(real), 0o755)
	if err := os.WriteFile(real, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(filepath.Join("sub", "real.json"), link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	// A chain: link2 -> link.json -> sub/real.json.
	link2 := filepath.Join(dir, "link2.json")
	os.Symlink(link, link2)
	for i, p := range []string{link, link2} {
		data := []byte{'n', 'e', 'w', byte('0' + i)}
		if err := WriteFile(p, data); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%s is no longer a symbolic link: %v %v", p, fi.Mode(), err)
		}
		if b, _ := os.ReadFile(real); string(b) != string(data) {
			t.Errorf("target holds %q, want %q", b, data)
		}
	}
	// A dangling link: the file it names is created.
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "sub", "new.json"), dangling)
	if err := WriteFile(dangling, []byte("fresh")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sub", "new.json")); string(b) != "fresh" {
		t.Errorf("dangling link's target holds %q", b)
	}
	// A loop is an error, not a hang.
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.Symlink(b, a)
	os.Symlink(a, b)
	if err := WriteFile(a, []byte("x")); err == nil {
		t.Error("a symbolic link loop was accepted")
	}
	for _, d := range []string{dir, filepath.Dir(real)} {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if IsTemp(e.Name()) {
				t.Errorf("temporary file %s left in %s", e.Name(), d)
			}
		}
	}
}

// A FIFO is written through (a reader gets the data) and stays a FIFO.
func TestWriteFileFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(p)
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- string(b)
	}()
	if err := WriteFile(p, []byte("through the pipe")); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "through the pipe" {
			t.Errorf("reader got %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader got nothing")
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}
}
