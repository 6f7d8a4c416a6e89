package main

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// Tests for issue 46 ("Hardening III"): each reproduces a failure seen
// there. They run in-process under -short, in seconds.

// Item 3: devices grew without limit (4.8 GB in 8 s) and a FIFO blocked
// for ever; every reader of whole files now takes regular files only, or
// reads pipes without waiting for a writer and with a cap.
func TestUnboundedInputFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("uses /dev/zero and mkfifo")
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fifo, fifo+".npz"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		want int
		args []string
	}{
		{1, []string{"net", "info", "/dev/zero"}},
		{1, []string{"net", "info", "/dev/urandom"}},
		{1, []string{"net", "info", fifo}},
		{1, []string{"net", "eval", "--game", "tictactoe", "--net", fifo}},
		{2, []string{"move", "--game", "connect4", "--agent", "az:net=/dev/zero"}},
		{2, []string{"move", "--game", "connect4", "--agent", "az:net=" + fifo}},
		{1, []string{"solve", "--outcome", "--book", "/dev/zero"}},
		{1, []string{"solve", "--outcome", "--book", fifo}},
		{1, []string{"replay", "--log", "/dev/zero"}},
		{1, []string{"replay", "--log", fifo}},
		{1, []string{"train", "--game", "tictactoe", "--data", fifo + ".npz"}},
	} {
		checkBad(t, c.want, "", c.args...)
	}
}
