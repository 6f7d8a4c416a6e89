package runlock

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// helperEnv names the directory a re-executed test binary locks (see
// TestMain) before it waits for its standard input to close.
const helperEnv = "RUNLOCK_TEST_HOLD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		l, err := Acquire(dir)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		bufio.NewReader(os.Stdin).ReadString('\n')
		l.Release()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func flockPlatform(t *testing.T) {
	switch runtime.GOOS {
	case "linux", "darwin", "freebsd", "netbsd", "openbsd", "dragonfly":
	default:
		t.Skipf("no flock on %s: the lock does not exclude", runtime.GOOS)
	}
}

// Two Acquires in one process exclude each other (flock is per open file
// description), and Release hands the directory on.
func TestAcquireTwiceInOneProcess(t *testing.T) {
	flockPlatform(t)
	dir := filepath.Join(t.TempDir(), "runs", "x") // created by Acquire
	a, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(dir)
	var busy *BusyError
	if !errors.As(err, &busy) || busy.PID != os.Getpid() || time.Since(busy.Started) > time.Minute {
		t.Fatalf("second Acquire: %v (%+v), want a BusyError naming pid %d", err, busy, os.Getpid())
	}
	msg := err.Error()
	if want := fmt.Sprintf("%s is in use by another canopy process (pid %d, started ", dir, os.Getpid()); !strings.HasPrefix(msg, want) ||
		!strings.HasSuffix(msg, "wait for it to finish or use another --out") || strings.Contains(msg, "\n") {
		t.Errorf("message %q", msg)
	}
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
	b, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	b.Release()
	var none *Lock
	if none.Release() != nil {
		t.Error("Release on nil")
	}
}

// A lock held by another process keeps this one out, and its death (kill
// -9: no chance to clean up) frees the directory.
func TestAcquireAcrossProcesses(t *testing.T) {
	flockPlatform(t)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper: %q %v", line, err)
	}
	_, err = Acquire(dir)
	var busy *BusyError
	if !errors.As(err, &busy) || busy.PID != cmd.Process.Pid {
		t.Errorf("Acquire while another process holds the lock: %v, want a BusyError naming pid %d", err, cmd.Process.Pid)
	}
	cmd.Process.Kill()
	cmd.Wait()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after the holder died: %v", err)
	}
	l.Release()
}

func TestAcquireBadDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, tc := range []struct{ dir, want string }{
		{"", "no run directory"},
		{file, "is a file, not a directory"},
		{filepath.Join(file, "sub"), "cannot create the run directory"},
	} {
		l, err := Acquire(tc.dir)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			l.Release()
			t.Errorf("Acquire(%q): %v, want an error containing %q", tc.dir, err, tc.want)
		}
	}
}

// A directory the lock file cannot be created in is still locked (through
// the directory itself), and a second Acquire is kept out.
func TestAcquireReadOnlyDir(t *testing.T) {
	flockPlatform(t)
	if os.Geteuid() == 0 {
		t.Skip("running as root: permissions do not stop writes")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	a, err := Acquire(dir)
	if err != nil {
		t.Fatalf("read-only directory: %v", err)
	}
	defer a.Release()
	if _, err := Acquire(dir); !errors.As(err, new(*BusyError)) {
		t.Errorf("second Acquire of a read-only directory: %v, want a BusyError", err)
	}
}

func TestParseOwner(t *testing.T) {
	pid, at := parseOwner("pid 42\nstarted 2026-01-02T03:04:05Z\n")
	if pid != 42 || !at.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("parsed %d %v", pid, at)
	}
	for _, s := range []string{"", "pid -3\n", "pid x\nstarted yesterday\n", "\x00\xff"} {
		if pid, at := parseOwner(s); pid != 0 || !at.IsZero() {
			t.Errorf("parseOwner(%q) = %d, %v", s, pid, at)
		}
	}
	if msg := (&BusyError{Dir: "d"}).Error(); !strings.Contains(msg, "pid unknown") {
		t.Errorf("unknown holder: %q", msg)
	}
}
