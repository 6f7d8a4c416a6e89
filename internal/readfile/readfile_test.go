package readfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// result runs f with a time bound: readers must never block.
func result(t *testing.T, f func() ([]byte, error)) ([]byte, error) {
	t.Helper()
	type res struct {
		b   []byte
		err error
	}
	ch := make(chan res, 1)
	go func() { b, err := f(); ch <- res{b, err} }()
	select {
	case r := <-ch:
		return r.b, r.err
	case <-time.After(10 * time.Second):
		t.Fatal("still reading after 10 s")
		return nil, nil
	}
}

func TestRegular(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := Regular(p, 5); err != nil || string(b) != "hello" {
		t.Errorf("Regular: %q, %v", b, err)
	}
	if _, err := Regular(p, 4); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), p) {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := Regular(dir, 1<<20); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: %v", err)
	}
	if _, err := Regular(filepath.Join(dir, "missing"), 1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

// Devices and FIFOs, which grew without limit or blocked for ever
// (issue 46 item 3), are refused at once by Regular; Capped stops at the
// limit and does not wait for a FIFO's writer.
func TestSpecialFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("uses /dev/zero and mkfifo")
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/zero", "/dev/urandom", fifo} {
		if _, err := result(t, func() ([]byte, error) { return Regular(p, 1<<20) }); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), p) {
			t.Errorf("Regular(%s): %v", p, err)
		}
	}
	for _, p := range []string{"/dev/zero", "/dev/urandom"} {
		if _, err := result(t, func() ([]byte, error) { return Capped(p, 1<<20) }); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "1 MiB") {
			t.Errorf("Capped(%s): %v", p, err)
		}
	}
	if b, err := result(t, func() ([]byte, error) { return Capped(fifo, 1<<20) }); err != nil || len(b) != 0 {
		t.Errorf("Capped(FIFO without writer): %q, %v; want empty", b, err)
	}
}
