// Command perf is Canopy's performance-regression gate and its tools.
//
// The gate runs a fixed, seeded set of small workloads that cover the hot
// paths (game playouts, the Connect Four solver, UCT and PUCT search, the
// batched engine, CPU network inference and training, self-play and shard
// writing), counts the instructions each executes under
// valgrind --tool=cachegrind, and compares the counts with a committed
// baseline (perf/baseline.json and, per workload, the functions that cost
// most in perf/baseline/NAME.txt). Instruction counts are deterministic:
// the same code on any x86-64 CPU gives the same count, where wall-clock
// time on a shared machine swings by tens of percent. See
// docs/PERFORMANCE.md for how to read a failure.
//
// Usage:
//
//	perf list                         the workloads
//	perf run [flags] NAME             run one workload natively (optionally with pprof profiles)
//	perf measure [-runs 3] [NAME...]  instruction counts under cachegrind, with run-to-run spread
//	perf check [flags] [NAME...]      compare with the baseline; exit 1 on a regression
//	perf baseline [NAME...]           measure and rewrite the baseline
//	perf profile -out DIR [NAME...]   native CPU and heap profiles of the workloads
//	perf ab -old REV [-new REV]       interleaved A/B benchmarks of two revisions, benchstat table
//	perf benchfmt [FILE]              `canopy bench ... --json` output in the Go benchmark format
//
// The Makefile targets perf-check, perf-baseline, perf-selftest and
// bench-compare wrap these. Under the gate every workload runs with
// GOMAXPROCS=1, the garbage collector off, asynchronous preemption off,
// one GEMM thread and the GEMM implementation recorded in the baseline
// (avx2: valgrind hides AVX-512), in a binary built with CGO_ENABLED=0 and
// GOAMD64=v1.
//
// Perf is a tool, not a library: nothing imports it.
package main
