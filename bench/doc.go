// Package bench measures Canopy's building blocks outside `go test`: game
// kernels (moves/s, playouts/s) and, in later layers, search and network
// throughput, with pprof profiles written to a run directory. The `canopy
// bench` command is a thin front end over it; the Go benchmarks in each
// package measure the same operations for CI and benchstat.
//
// Figures depend on the machine: docs/BENCHMARKS.md records them with the
// machine and the exact command.
package bench
