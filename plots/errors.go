package plots

import (
	"bytes"
	"fmt"
)

// InputError is a missing field, bad value or syntax error in an input
// file: File (as given), Line (1-based; 0 when the whole file is meant)
// and what is wrong.
type InputError struct {
	File string
	Line int
	Err  error
}

func (e *InputError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

func (e *InputError) Unwrap() error { return e.Err }

// inputErrorf returns an *InputError.
func inputErrorf(file string, line int, format string, args ...any) error {
	return &InputError{File: file, Line: line, Err: fmt.Errorf(format, args...)}
}

// lineAt returns the 1-based line of byte offset off in data.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte{'\n'})
}
