package rundir

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

	"github.com/canopy-go/canopy/internal/runlock"
)

// holdEnv names the directory a re-executed test binary opens (see
// TestMain); it then leaves a temporary file of an unfinished write, as
// a crash in the middle of atomicfile.WriteFile does, and waits to be
// killed.
const holdEnv = "RUNDIR_TEST_HOLD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(holdEnv); dir != "" {
		d, err := Open(dir)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		os.WriteFile(filepath.Join(dir, ".zero.json.tmp-123"), []byte("{half"), 0o644)
		fmt.Println("held")
		bufio.NewReader(os.Stdin).ReadString('\n')
		d.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A run killed with kill -9 while it holds its directory and is writing
// leaves a lock file and a temporary file: the next Open takes the
// directory over (no stale lock) and removes the temporary file, while
// the run was alive it kept the directory.
func TestOpenAfterKill9(t *testing.T) {
	switch runtime.GOOS {
	case "linux", "darwin", "freebsd", "netbsd", "openbsd", "dragonfly":
	default:
		t.Skipf("no flock on %s: the lock does not exclude", runtime.GOOS)
	}
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "held\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper: %q %v", line, err)
	}
	_, err = Open(dir)
	var busy *runlock.BusyError
	if !errors.As(err, &busy) || busy.PID != cmd.Process.Pid {
		t.Errorf("Open while another process holds the run: %v, want a BusyError naming pid %d", err, cmd.Process.Pid)
	}
	if _, err := os.Stat(filepath.Join(dir, ".zero.json.tmp-123")); err != nil {
		t.Fatalf("a refused Open must leave the holder's files alone: %v", err)
	}
	cmd.Process.Kill() // SIGKILL: no clean-up
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, runlock.Name)); err != nil {
		t.Fatalf("the killed run's lock file: %v (the test needs it left behind)", err)
	}
	d, err := Open(dir)
	if err != nil {
		t.Fatalf("Open after kill -9: %v", err)
	}
	defer d.Close()
	if len(d.Removed) != 1 || d.Removed[0] != ".zero.json.tmp-123" {
		t.Errorf("Removed = %q, want the killed write's temporary file", d.Removed)
	}
	if _, err := os.Stat(filepath.Join(dir, ".zero.json.tmp-123")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file still there: %v", err)
	}
}

// Two Opens exclude each other, Close hands the directory on.
func TestOpenClose(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" {
		if _, err := Open(dir); err == nil {
			t.Error("a second Open of a held directory must fail")
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d.Close()
	var none *Dir
	none.Close()
	d, err = Open(dir)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	d.Close()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := Open(file); err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("Open of a file: %v", err)
	}
}

// The settings file's format, byte for byte (zero.json and ppo.json have
// always been written so: existing runs must read back and compare equal).
func TestWriteReadJSON(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	v := struct {
		Game string   `json:"game"`
		Sims int      `json:"sims"`
		List []string `json:"list"`
	}{"connect4", 32, []string{"a"}}
	if err := WriteJSON(d.Join("sub", "run.json"), v); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "sub", "run.json"))
	want := "{\n  \"game\": \"connect4\",\n  \"sims\": 32,\n  \"list\": [\n    \"a\"\n  ]\n}\n"
	if string(got) != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}
	var back struct {
		Game string `json:"game"`
		Sims int    `json:"sims"`
	}
	if ok, err := ReadJSON(d.Join("sub", "run.json"), &back); !ok || err != nil || back.Game != "connect4" || back.Sims != 32 {
		t.Errorf("ReadJSON: %v %v %+v", ok, err, back)
	}
	if ok, err := ReadJSON(d.Join("missing.json"), &back); ok || err != nil {
		t.Errorf("missing file: %v %v, want false, nil", ok, err)
	}
	d.WriteFile("bad.json", []byte("{"))
	if _, err := ReadJSON(d.Join("bad.json"), &back); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("bad file: %v, want an error naming it", err)
	}
}
