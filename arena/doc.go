// Package arena plays games between agents and summarises the results:
// single games with full records (PlayGame), batches of games with seats
// rotated and statistics with confidence intervals (Stats), and, for
// tournaments, pairwise tables, ratings and per agent the columns the
// search studies report (Summaries: sole and shared wins, pairwise score,
// mean ordinal with ties shared, wall-clock time per move, by seat).
// Ratings: Elo from the pairwise results, Bayesian Bradley-Terry and ILSR
// (ratings.go), and Plackett-Luce over whole finishing orders with
// Davidson-Luce ties (plackettluce.go), the one to read for games of more
// than two players.
//
// A tournament's game logs (WriteLog, one JSON file per finished game)
// live in a LogDir (logdir.go): one writer at a time, every log written
// atomically as its game ends, and ReadLogDir reads them back as the
// results of the games a resumed tournament need not play again
// (TournamentConfig.Played), refusing logs of another tournament
// (ErrOtherTournament).
//
// Everything is reproducible from a seed: game i of a run uses seeds derived
// from (seed, i) only, so results do not depend on scheduling when games run
// in parallel; only the measured times per move do. Stats and Tournament
// build their own agents for every game and may run concurrently;
// PlayGame and PlayFrom use the agents they are given, which must not be
// shared with another game in progress.
package arena
