//go:build !amd64

package solver

// prefetch is a no-op where no prefetch instruction is wired up.
func prefetch(*uint32) {}
