package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/canopy-go/canopy/internal/atomicfile"
	"github.com/canopy-go/canopy/internal/runlock"
)

// Dir is a run directory held by this process: its lock is taken, and
// the temporary files of interrupted writes directly inside it are
// removed. Its methods are safe for concurrent use (they only write
// files atomically); Close releases the lock.
type Dir struct {
	path string
	lock *runlock.Lock
	// Removed are the names of the temporary files Open removed.
	Removed []string
}

// Open creates path (and its parents) when missing, takes its lock
// without waiting (a *runlock.BusyError, naming the holder, when another
// process or another Open in this one holds it) and removes the
// temporary files that writes cut short by a crash left directly in it
// (subdirectories are left alone: path may hold other runs). The lock
// lasts until Close or the end of the process; a holder killed with
// kill -9 leaves nothing that keeps the next Open out.
func Open(path string) (*Dir, error) {
	lock, err := runlock.Acquire(path)
	if err != nil {
		return nil, err
	}
	removed, err := atomicfile.RemoveTemps(path)
	if err != nil {
		lock.Release()
		return nil, fmt.Errorf("%s: removing temporary files of interrupted writes: %v", path, err)
	}
	return &Dir{path: path, lock: lock, Removed: removed}, nil
}

// Join is the path of name (slash-separated parts) inside the directory.
func (d *Dir) Join(name ...string) string {
	return filepath.Join(append([]string{d.path}, name...)...)
}

// WriteFile replaces the file name inside the directory with data,
// atomically, creating its parent directories.
func (d *Dir) WriteFile(name string, data []byte) error {
	p := d.Join(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(p, data)
}

// Close releases the lock. Later calls, and calls on nil, do nothing.
func (d *Dir) Close() error {
	if d == nil {
		return nil
	}
	return d.lock.Release()
}

// WriteJSON writes v to path as a run's settings files are written:
// indented by two spaces, with a final newline, replaced atomically; the
// parent directories are created. The caller holds the run directory.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(data, '\n'))
}

// ReadJSON reads the JSON file at path into v; ok is false, with no
// error, when the file does not exist. A file that does not parse is an
// error naming it.
func ReadJSON(path string, v any) (ok bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return true, fmt.Errorf("%s: %v", path, err)
	}
	return true, nil
}
