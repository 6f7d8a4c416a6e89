package readfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is wrapped by Regular's error for a path that names a
// directory, device, FIFO, socket or other non-regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the error for a file larger than the limit.
var ErrTooLarge = errors.New("file too large")

// Regular returns the content of the regular file at path (symbolic
// links are followed). A path naming anything else, or a file of more
// than limit bytes, is an error naming path and saying which, before
// anything is read or allocated. Other errors are os.Open's and read
// errors, as *fs.PathError.
func Regular(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(path, fi, limit); err != nil {
		return nil, err
	}
	// Non-blocking, in case path was replaced by a FIFO since Stat.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkRegular(path, fi, limit); err != nil {
		return nil, err
	}
	buf := make([]byte, 0, fi.Size()+1)
	return readAll(f, buf, path, limit)
}

// Capped returns the content of the file at path, which may be a pipe
// or a device, and fails, naming the limit, when it holds more than
// limit bytes. A FIFO is opened without waiting for a writer: with none,
// it reads as empty.
func Capped(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, errorf(ErrNotRegular, "%s is a directory, not a file", path)
	}
	return readAll(f, nil, path, limit)
}

// readAll reads f (named path) into buf, failing past limit bytes.
func readAll(f *os.File, buf []byte, path string, limit int64) ([]byte, error) {
	w := sliceWriter{buf}
	n, err := io.Copy(&w, io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, errorf(ErrTooLarge, "%s holds more than %s", path, size(limit))
	}
	return w.b, nil
}

type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// checkRegular refuses a non-regular file and one larger than limit.
func checkRegular(path string, fi fs.FileInfo, limit int64) error {
	m := fi.Mode()
	if !m.IsRegular() {
		return errorf(ErrNotRegular, "%s is %s, not a regular file", path, kind(m))
	}
	if fi.Size() > limit {
		return errorf(ErrTooLarge, "%s holds %s, more than the %s allowed", path, size(fi.Size()), size(limit))
	}
	return nil
}

// kind names a non-regular file mode for messages.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file (" + m.Type().String() + ")"
}

// size formats a byte count in binary units ("64 MiB", "1.5 GiB", "10 B").
func size(b int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	f, u := float64(b), 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d %s", int64(f), units[u])
	}
	return fmt.Sprintf("%.1f %s", f, units[u])
}

// fileError is an error whose message is complete in itself and which
// matches its kind (ErrNotRegular, ErrTooLarge) under errors.Is.
type fileError struct {
	msg  string
	kind error
}

func (e *fileError) Error() string { return e.msg }
func (e *fileError) Unwrap() error { return e.kind }

func errorf(kind error, format string, args ...any) error {
	return &fileError{fmt.Sprintf(format, args...), kind}
}
