// Package pyapi is Canopy's library interface for Python, in pure Go: the
// logic behind the `canopy` Python package, which reaches it through a
// thin cgo shim (python/libcanopy, built with -buildmode=c-shared). It is
// testable without cgo: everything here takes Go slices and returns Go
// errors.
//
// # Objects and handles
//
// A Library holds the open objects (vectorised environments, searches,
// self-play runs, networks) in a table of integer handles; C and Python
// only ever see the integers, never a Go pointer. Every call names its
// handle; a closed or unknown handle is an error, never a crash. Live
// counts the open handles (the Python tests check that nothing leaks).
//
// # Memory
//
// Arrays cross without copies: Python allocates every array the library
// writes or reads (numpy's own memory, not Go's), passes their addresses
// when it opens an object, and keeps them alive for the object's
// lifetime. Go keeps them as slices over that memory and writes into them
// only during a call from Python (Step, Wait, Exchange), so an array that
// outlives close() stays valid (it is numpy's) and Go never writes into
// freed memory. Buffers are checked against the sizes the object needs
// (ValueError naming the buffer).
//
// # Python evaluators: inverted control
//
// Search and self-play take the user's Python evaluator without calling
// Python from Go: Go runs the trees on its own goroutines through an
// engine whose backend hands each batch to the session (session.go) and
// waits; Python's loop calls Wait, which returns when a batch is ready
// (its observations and legal masks copied into Python's arrays), runs
// the evaluator and calls Submit with its outputs in Python's arrays.
// Cancel (the evaluator raised, or close()) cancels the run's context;
// the backend then fails the outstanding batch and the run drains.
//
// Overlap: while Python evaluates batch k, Go should be backing up the
// other batches and have batch k+1 ready. A session's engine runs
// GOMAXPROCS-1 workers by default (python/libcanopy adds a P), so that
// Python's calls into Go and the batcher consumers they wake never wait
// for a worker to be preempted; and when the trees keep two batches of
// leaves in flight it runs two batcher consumers (consumersFor), the
// second forming batch k+1, waiting up to a millisecond for it to fill,
// while Python holds k. BenchmarkSearchSession and python/bench's
// bench_search.py --sleep-ms measure it.
//
// # Errors
//
// Every error the library returns to Python is an *Error whose Kind names
// the Python exception (ValueError, KeyError, RuntimeError), with a
// message that names the argument and the fix.
//
// Not for: Go programs (use the packages it wraps: rl, search/engine,
// selfplay, nets); thread-safety across Python threads on one object (the
// Python package serialises calls per object).
package pyapi
