// Package arena plays games between agents and summarises the results:
// single games with full records (PlayGame), batches of games with seats
// rotated and statistics with confidence intervals (Stats), and, for
// tournaments, pairwise tables and ratings.
//
// Everything is reproducible from a seed: game i of a run uses seeds derived
// from (seed, i) only, so results do not depend on scheduling when games run
// in parallel.
package arena
