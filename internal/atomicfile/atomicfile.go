// Package atomicfile writes files so that readers, and a crash at any
// moment, see either the old content or the complete new content, never a
// partial file: write a temporary file in the target's directory, fsync
// it, rename it over the target, then fsync the directory.
//
// Every output Canopy promises to write atomically (game logs, weights,
// self-play shards and manifests, the CUDA kernel cache) goes through
// WriteFile. It is safe for concurrent use; concurrent writers of the same
// path leave one of their contents (the last rename wins).
//
// Only regular files are replaced. A symbolic link is followed to the file
// it names (the link stays a link); a device or FIFO (/dev/null,
// /dev/stdout, a named pipe) is written through, never replaced by a
// regular file, since it cannot be replaced atomically anyway.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxLinks bounds how many symbolic links WriteFile follows (Linux's
// limit for path resolution is 40).
const maxLinks = 40

// WriteFile writes data to path.
//
// path's final component is resolved first: symbolic links are followed
// to the file they name, which need not exist yet. A regular or missing
// target is then replaced atomically: the temporary file (named as
// IsTemp recognises) is created in the target's directory and removed on
// every error path; the new file has mode 0644 (before umask). An
// existing target that is a character or block device or a FIFO is
// opened for writing (a FIFO waits for a reader, as a shell's > does)
// and data is written through, without atomicity; a directory, a socket
// or any other kind of file is an error.
func WriteFile(path string, data []byte) error {
	real, fi, err := resolve(path)
	if err != nil {
		return err
	}
	if fi != nil && !fi.Mode().IsRegular() {
		return writeThrough(path, real, fi.Mode(), data)
	}
	dir := filepath.Dir(real)
	f, err := os.CreateTemp(dir, tempPattern(filepath.Base(real)))
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
	if err := os.Rename(tmp, real); err != nil {
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

// resolve follows symbolic links from path and returns the final path and
// its Lstat info, nil when it does not exist.
func resolve(path string) (string, fs.FileInfo, error) {
	p := path
	for range maxLinks {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil, nil
		}
		if err != nil {
			return "", nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, fi, nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return "", nil, err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = target
	}
	return "", nil, fmt.Errorf("cannot write %s: more than %d levels of symbolic links (a loop?)", path, maxLinks)
}

// writeThrough writes data into the existing non-regular file real (path
// names it, maybe through links).
func writeThrough(path, real string, mode fs.FileMode, data []byte) error {
	name := path
	if real != path {
		name = fmt.Sprintf("%s (-> %s)", path, real)
	}
	switch {
	case mode.IsDir():
		return fmt.Errorf("cannot write %s: it is a directory; name a file inside it", name)
	case mode&(fs.ModeDevice|fs.ModeNamedPipe) == 0:
		return fmt.Errorf("cannot write %s: it is a %s, not a regular file, device or FIFO", name, kind(mode))
	}
	f, err := os.OpenFile(real, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	return errors.Join(werr, f.Close())
}

func kind(mode fs.FileMode) string {
	if mode&fs.ModeSocket != 0 {
		return "socket"
	}
	return "special file (" + mode.Type().String() + ")"
}

// tempSuffix separates a temporary file's target name from the random
// digits os.CreateTemp puts in place of the pattern's "*".
const tempSuffix = ".tmp-"

// tempPattern is the os.CreateTemp pattern of base's temporary files:
// "." + base + ".tmp-" + digits.
func tempPattern(base string) string { return "." + base + tempSuffix + "*" }

// IsTemp reports whether the base name name has the form of WriteFile's
// temporary files: a dot, the target's name, ".tmp-", then digits.
func IsTemp(name string) bool {
	i := strings.LastIndex(name, tempSuffix)
	if !strings.HasPrefix(name, ".") || i < 2 {
		return false
	}
	digits := name[i+len(tempSuffix):]
	return digits != "" && strings.Trim(digits, "0123456789") == ""
}

// RemoveTemps removes from dir (not its subdirectories) the regular files
// that IsTemp recognises: the temporary files of writes a crash cut
// short. It returns their names. Call it only while no WriteFile into
// dir can be running (a run directory's owner holding its lock): a live
// write's temporary file would be removed under it. Errors removing one
// file do not stop the others; they are joined.
func RemoveTemps(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range ents {
		if !e.Type().IsRegular() || !IsTemp(e.Name()) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, e.Name())
	}
	return removed, errors.Join(errs...)
}
