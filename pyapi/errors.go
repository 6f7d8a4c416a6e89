package pyapi

import (
	"errors"
	"fmt"
)

// Error is an error with the Python exception it becomes.
type Error struct {
	Kind string // "ValueError", "KeyError", "RuntimeError", "TypeError"
	Msg  string
}

func (e *Error) Error() string { return e.Kind + ": " + e.Msg }

func valueErrorf(format string, args ...any) error {
	return &Error{Kind: "ValueError", Msg: fmt.Sprintf(format, args...)}
}

func runtimeErrorf(format string, args ...any) error {
	return &Error{Kind: "RuntimeError", Msg: fmt.Sprintf(format, args...)}
}

// asError gives err a Python kind: an *Error keeps its own, anything else
// is a ValueError when it came from bad input (wrapped by the caller) or
// a RuntimeError.
func asError(err error, kind string) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Kind: kind, Msg: err.Error()}
}

// message is err's text without its Python kind.
func message(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Msg
	}
	return err.Error()
}
