// Package runlock gives one process at a time the use of a run directory
// (self-play, training, the AlphaZero loop): two writers interleaving
// their shards and manifests would corrupt it.
//
// The lock is an advisory flock(2) on the file Name inside the directory,
// held through an open file description: it is exclusive even between two
// Acquire calls of one process, and the operating system drops it when
// the process exits in any way, kill -9 included, so a crash never leaves
// a stale lock behind. The lock file itself stays (removing it would let
// a third process lock a fresh file while a second still holds the old
// one); it records the holder's pid and start time for the message a
// second process prints.
//
// Only processes that use this package are kept out. On platforms
// without flock (see flock_other.go) Acquire succeeds without excluding
// anyone.
package runlock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Name is the lock file's name inside a run directory.
const Name = ".lock"

// Lock is a held lock on a run directory. Its zero value and nil are not
// held; Release is safe on both.
type Lock struct {
	f *os.File
}

// BusyError reports a run directory locked by another process (or by
// another Acquire in this one).
type BusyError struct {
	Dir     string
	PID     int       // holder's process id; 0 when unknown
	Started time.Time // when the holder took the lock; zero when unknown
}

func (e *BusyError) Error() string {
	who := "pid unknown"
	if e.PID > 0 {
		who = "pid " + strconv.Itoa(e.PID)
		if !e.Started.IsZero() {
			who += ", started " + e.Started.Local().Format("2006-01-02 15:04:05")
		}
	}
	return fmt.Sprintf("%s is in use by another canopy process (%s); wait for it to finish or use another --out", e.Dir, who)
}

// Acquire creates dir (and its parents) when missing and takes its lock
// without waiting. When another holder has it, the error is a *BusyError
// naming the holder. The lock lasts until Release or the end of the
// process.
//
// A directory where the lock file cannot be created (read-only, or not
// ours) is locked through the existing lock file opened read-only, or
// through the directory itself: nothing can write such a directory's
// files anyway, and readers still exclude each other.
func Acquire(dir string) (*Lock, error) {
	if dir == "" {
		return nil, errors.New("no run directory given (pass --out DIR)")
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("%s is a file, not a directory; choose another --out", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the run directory %s: %v", dir, bare(err))
	}
	path := filepath.Join(dir, Name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	writable := err == nil
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		if f, err = os.Open(path); errors.Is(err, fs.ErrNotExist) {
			f, err = os.Open(dir)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot lock %s: %v", dir, bare(err))
	}
	busy, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot lock %s: %v", dir, bare(err))
	}
	if busy {
		f.Close()
		e := &BusyError{Dir: dir}
		if b, err := os.ReadFile(path); err == nil {
			e.PID, e.Started = parseOwner(string(b))
		}
		return nil, e
	}
	if writable {
		// Best effort: the record only improves a second process's
		// message; the lock does not depend on it.
		if f.Truncate(0) == nil {
			fmt.Fprintf(f, "pid %d\nstarted %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
		}
	}
	return &Lock{f: f}, nil
}

// Release drops the lock. Later calls, and calls on nil, do nothing.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// parseOwner reads the lock file's "pid N" and "started T" lines; a
// missing or malformed line leaves its value zero.
func parseOwner(s string) (pid int, started time.Time) {
	for line := range strings.Lines(s) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch k {
		case "pid":
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				pid = n
			}
		case "started":
			if t, err := time.Parse(time.RFC3339, v); err == nil {
				started = t
			}
		}
	}
	return pid, started
}

// bare drops the operation and path an *fs.PathError repeats: the
// messages above name the directory already.
func bare(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}
