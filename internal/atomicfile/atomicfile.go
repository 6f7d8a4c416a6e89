// Package atomicfile writes files so that readers, and a crash at any
// moment, see either the old content or the complete new content, never a
// partial file: write a temporary file in the target's directory, fsync
// it, rename it over the target, then fsync the directory.
//
// Every output Canopy promises to write atomically (game logs, weights,
// self-play shards and manifests, the CUDA kernel cache) goes through
// WriteFile. It is safe for concurrent use; concurrent writers of the same
// path leave one of their contents (the last rename wins).
package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
)

// WriteFile replaces path with data atomically. The temporary file is
// removed on every error path. The new file has mode 0644 (before umask).
func WriteFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cherr := f.Chmod(0o644)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, cherr, serr, cerr); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	// Persist the rename itself; best effort (not every file system
	// supports syncing a directory).
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
