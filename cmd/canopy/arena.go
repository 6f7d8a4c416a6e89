package main

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/spec"
)

func init() {
	register(&command{
		Name:    "arena",
		Summary: "all-play-all tournament with pairwise table and Elo, Bradley-Terry, ILSR and Plackett-Luce ratings",
		Usage:   "--game G --agents A,B[,C...] [--games N] [--parallel P] [--seed S] [--bootstrap B] [--logs DIR [--resume|--report]] [--json|--csv]",
		Help: `Plays an all-play-all tournament between the listed agents (separate them
with ',' or ';'; options of an agent spec stay with it, e.g.
"onestep;mcts:sims=100,c=1.4"). Two-player games: N games per pairing with
seats alternating. Games for 3 or more players: N games per table, one
table for every set of NumPlayers agents, seats rotated cyclically so every
agent sits in every seat equally often when N is a multiple of the player
count.

Reports the pairwise table (row agent against column agent: wins-draws-
losses and score with a 95% Wilson interval, draws count half), game length
per agent, the columns the search studies report per agent (sole wins:
games with a return strictly above every other seat's; shared: tied for
first; pairwise: comparisons with every other seat won-drawn-lost and the
mean share won per game, draws half; mean ordinal: finishing position,
1 = first, tied seats sharing the mean of their positions, so that with
two players it is 2 - pairwise score; 95% Wilson intervals, for shares on
their sum over games; ms/move: mean wall-clock time of the agent's
decisions, which counts waiting for the CPU, so measure with --parallel 1
on an idle machine), the pairwise score by seat, and three ratings:
  Elo   maximum-likelihood Elo from the pairwise results, mean 0, with 95%
        bootstrap intervals (B resamples of the games; 0 for none), widened
        to the Laplace interval where that is wider (a record of all wins
        gives every resample the same record);
  BT    Bayesian Bradley-Terry / Plackett-Luce log-strengths (natural log,
        Gaussian prior sd 2), MAP with 95% Laplace intervals of the centred
        log-strengths;
  ILSR  Plackett-Luce log-strengths by Iterative Luce Spectral Ranking;
and for games of 3 or more players a fourth:
  Plackett-Luce  ratings on the Elo scale (mean 0) from whole finishing
        orders, ties by the Davidson-Luce model (their prevalence printed
        below the table), Gaussian prior sd 1000 Elo, 95% Laplace
        intervals; a rating the data bound on one side only is flagged.
Results depend only on --seed, not on --parallel (times per move aside).
--csv prints one long table (columns: table,agent,opponent,games,wins,
draws,losses,value,lo,hi).

--logs DIR writes every finished game, as it finishes, to DIR/game-NNNNNN.json
(N: the game's number in the schedule; the JSON game log that replay, plot
logs and serve read), so a running arena can be watched (serve --logs DIR)
and its games plotted (plot logs, e.g. study 000's Sequence heatmaps). DIR
is locked while the arena runs. It must not hold logs already, unless
--resume is given: then the run continues an earlier, interrupted run of
the same command (same --game, --agents, --games and --seed; each log is
checked against them and replayed), counts the games logged there and
plays only the rest. Every game's seeds depend only on --seed and its
number, so a resumed run gives the result of an uninterrupted one (but
for the measured times per move). With two agents the first N games of
a longer run are those of an N-game run, so --resume with a larger
--games extends a finished run. --report (with --logs) prints the result
of the games logged so far, checked the same way, and plays none; it
takes no lock, so it can watch a running arena.

Limits: at most 10000000 games in all, 100000 bootstrap resamples, and 1e10
resampled games (resamples x games).
Interrupted (Ctrl-C), it prints the table and ratings of the games
finished so far, marked partial, and exits with status 1; with --logs,
rerun it with --resume to finish the tournament.`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			game, agents, logs, netBackend := new(string), new(string), new(string), new(string)
			n, parallel, boot, seed := new(int), new(int), new(int), new(uint64)
			asJSON, asCSV, quiet, resume, report := new(bool), new(bool), new(bool), new(bool), new(bool)
			prof := &profiler{}
			append(spec.Table{
				gameOption(game, "", ""),
				agentsOption(agents, "", "2 or more"),
				spec.Int("games", n, 100, 1, maxGames, "games per pairing (per table for 3+ player games)"),
				parallelOption(parallel),
				seedOption(seed, ""),
				backendOption(netBackend, agentBackendNote),
				spec.Int("bootstrap", boot, arena.DefaultBootstrap, 0, maxBootstrap, "bootstrap resamples for the Elo intervals (0: none)"),
				jsonOption(asJSON, ""),
				spec.Bool("csv", asCSV, false, "print as CSV"),
				quietOption(quiet),
				spec.String("logs", logs, "", "directory to write each finished game's JSON log to"),
				spec.Bool("resume", resume, false, "with --logs: count the games logged there by an earlier run of the same command and play only the rest"),
				spec.Bool("report", report, false, "with --logs: print the result of the games logged there so far, playing none (also while another arena writes them)"),
			}, prof.options()...).Flags(fs)
			return func(e *env, args []string) error {
				aenv, err := agentEnv(*netBackend, e.Stderr)
				if err != nil {
					return err
				}
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if *asJSON && *asCSV {
					return usagef("--json and --csv exclude each other")
				}
				g, err := newGame(*game)
				if err != nil {
					return err
				}
				specs := splitAgents(*agents)
				if len(specs) < 2 {
					return usagef("--agents: list at least 2 agents separated by ',' or ';' (got %d)", len(specs))
				}
				if len(specs) < g.NumPlayers() {
					return usagef("--agents: %s is a %d-player game; list at least %d agents (got %d)", g.Spec(), g.NumPlayers(), g.NumPlayers(), len(specs))
				}
				total := tournamentGames(g.NumPlayers(), len(specs), *n)
				if total > maxGames {
					return usagef("--games %d with %d agents makes %.3g games in all; the limit is %d (fewer games or agents)", *n, len(specs), total, maxGames)
				}
				// Each bootstrap resample draws every game again.
				if work := float64(*boot) * total; work > maxBootstrapDraws {
					return usagef("--bootstrap %d over %.3g games draws %.3g games; the limit is %.0g: use --bootstrap %d or less", *boot, total, work, float64(maxBootstrapDraws), int(maxBootstrapDraws/total))
				}
				if err := checkAgentMemory(g, specs, gamesAtOnce(*parallel, *n)); err != nil {
					return err
				}
				for i, sp := range specs {
					a, err := agent.New(g, sp, aenv.WithSeed(*seed))
					if err != nil {
						return usagef("--agents: agent %d (%q): %v", i+1, sp, err)
					}
					arena.CloseAgents([]agent.Agent{a})
				}
				sched, err := arena.Schedule(g.NumPlayers(), len(specs), *n)
				if err != nil {
					return usageError{err.Error()}
				}
				b := *boot
				if b == 0 {
					b = -1 // TournamentConfig: negative means none
				}
				if *resume && *logs == "" {
					return usagef("--resume continues from the game logs of an earlier run: give their directory with --logs")
				}
				if err := prof.check(); err != nil {
					return err
				}
				if *report {
					return reportArenaLogs(e, *logs, g, specs, sched, *seed, *n, *boot, *asJSON, *asCSV)
				}
				var (
					onGame func(int, *arena.Record, uint64) error
					played map[int]arena.GameResult
				)
				if *logs != "" {
					ld, err := arena.OpenLogDir(*logs, g)
					if err != nil {
						return fmt.Errorf("--logs: %w", err)
					}
					defer ld.Close()
					onGame = ld.Write
					if played, err = readArenaLogs(*logs, g, specs, sched, *seed, *resume); err != nil {
						return err
					}
					if len(played) > 0 && !*quiet {
						fmt.Fprintf(e.Stderr, "resuming: %d of %d games already played in %s\n", len(played), len(sched), *logs)
					}
				}
				ctx, stop := signalContext()
				defer stop()
				if err := prof.start(); err != nil {
					return err
				}
				pr := newProgress(e.Stderr, "games", len(sched), *quiet)
				pr.before = len(played)
				res, runErr := arena.Tournament(ctx, g, arena.TournamentConfig{
					Agents: specs, Env: aenv, Games: *n, Seed: *seed, Parallel: *parallel, Bootstrap: b,
					Progress: func(done int) { pr.update(done, "") },
					OnGame:   onGame, Played: played,
				})
				// The profiles cover the games (written when interrupted too).
				profErr := prof.stop()
				if res == nil {
					if ctx.Err() != nil {
						return interrupted(ctx, "no game had finished; nothing to report")
					}
					return runErr
				}
				pool, _ := agent.Lookup[*engine.Pool](aenv)
				for _, u := range pool.Usage() {
					if u.Evals == 0 || *quiet {
						continue // validation only
					}
					fmt.Fprintf(e.Stderr, "network %s on %s: %d evals in %.1f s (%.0f evals/s), mean batch %.1f, backend busy %.0f%%\n",
						u.Net, u.Backend, u.Evals, u.Wall.Seconds(), u.EvalsPerSec(), u.MeanBatch, 100*u.Busy.Seconds()/max(u.Wall.Seconds(), 1e-9))
				}
				switch {
				case *asJSON:
					err = writeJSON(e.Stdout, res)
				case *asCSV:
					err = writeArenaCSV(e.Stdout, res)
				default:
					err = writeArenaText(e.Stdout, res, len(sched))
				}
				if err != nil {
					return err
				}
				if err := partialError(ctx, runErr, res.TotalGames, len(sched)); err != nil {
					return err
				}
				return profErr
			}
		},
	})
}

// maxBootstrap bounds --bootstrap (each resample refits the ratings).
const maxBootstrap = 100_000

// maxBootstrapDraws bounds --bootstrap times the games: each resample
// draws every game again.
const maxBootstrapDraws = 1e10

// tournamentGames is the number of games of a tournament between k agents
// in an n-player game with games per table (see arena.Schedule), in
// float64 so that absurd values do not overflow.
func tournamentGames(n, k, games int) float64 {
	tables := 1.0 // C(k, n)
	for i := range n {
		tables = tables * float64(k-i) / float64(i+1)
	}
	return math.Round(tables) * float64(games)
}

// writeArenaText prints the tables and ratings; a partial result (Ctrl-C,
// --report) says so in its first line, with the scheduled number of games.
func writeArenaText(w io.Writer, res *arena.TournamentResult, scheduled int) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if res.Partial {
		fmt.Fprintf(tw, "PARTIAL\t%d of %d games finished\n", res.TotalGames, scheduled)
	}
	fmt.Fprintf(tw, "game\t%s\n", res.Game)
	fmt.Fprintf(tw, "games\t%d (%d per table, seed %d)\n", res.TotalGames, res.GamesPerTable, res.Seed)
	for i, a := range res.Agents {
		fmt.Fprintf(tw, "#%d\t%s\n", i+1, a)
	}
	fmt.Fprintln(tw, "\nPairwise: row against column, wins-draws-losses and score [95% Wilson], draws count half")
	fmt.Fprint(tw, "\t")
	for j := range res.Agents {
		fmt.Fprintf(tw, "#%d\t", j+1)
	}
	fmt.Fprintln(tw)
	for i, row := range res.Pairwise {
		fmt.Fprintf(tw, "#%d\t", i+1)
		for j, p := range row {
			switch {
			case i == j:
				fmt.Fprint(tw, "-\t")
			case p.Score == nil:
				fmt.Fprint(tw, "never met\t")
			default:
				fmt.Fprintf(tw, "%d-%d-%d %s\t", p.Wins, p.Draws, p.Losses, p.Score)
			}
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintln(tw, "\nGame length (player decisions)")
	for i, l := range res.Length {
		fmt.Fprintf(tw, "#%d\t%d games\t%s\n", i+1, l.N, l)
	}
	fmt.Fprintln(tw, "\nPer agent: sole wins [95% Wilson], shared wins, pairwise won-drawn-lost and score [95%], mean ordinal (1 = first, ties share) [95%], time per move")
	fmt.Fprintln(tw, "\tgames\tsole wins\tshared\tpairwise\tmean ordinal\tms/move")
	for i, a := range res.PerAgent {
		fmt.Fprintf(tw, "#%d\t%d\t%d %s\t%d\t%d-%d-%d %s\t%.3f [%.3f, %.3f]\t%s\n", i+1, a.Games, a.SoleWins, a.SoleWinRate,
			a.SharedWins, a.PairWins, a.PairDraws, a.PairLosses, a.PairScore, a.MeanOrdinal.Value, a.MeanOrdinal.Lo, a.MeanOrdinal.Hi, msPerMove(a))
	}
	fmt.Fprintln(tw, "\nBy seat (0 moves first): games and pairwise score [95%]")
	for i, a := range res.PerAgent {
		fmt.Fprintf(tw, "#%d", i+1)
		for s, st := range a.Seats {
			fmt.Fprintf(tw, "\tseat %d: %d games %s", s, st.Games, st.PairScore)
		}
		fmt.Fprintln(tw)
	}
	elo := "Elo (mean 0)"
	if res.Bootstrap > 0 {
		elo = fmt.Sprintf("Elo [95%% bootstrap, B=%d]", res.Bootstrap)
	}
	// Plackett-Luce over whole finishing orders, for games of 3 or more
	// seats (with two it is Bradley-Terry, beside Elo already).
	pl := res.PlackettLuce
	if seats(res) <= 2 {
		pl = nil
	}
	fmt.Fprintf(tw, "\nRatings\t%s\tBT log-strength [95%% Laplace]\tILSR log-strength", elo)
	if pl != nil {
		fmt.Fprint(tw, "\tPlackett-Luce Elo [95% Laplace]")
	}
	fmt.Fprintln(tw)
	flagged := false
	for i := range res.Agents {
		e, bt := res.Elo[i], res.BradleyTerry[i]
		if res.Bootstrap > 0 {
			fmt.Fprintf(tw, "#%d\t%+.0f [%+.0f, %+.0f]", i+1, e.Value, e.Lo, e.Hi)
		} else {
			fmt.Fprintf(tw, "#%d\t%+.0f", i+1, e.Value)
		}
		fmt.Fprintf(tw, "\t%+.3f [%+.3f, %+.3f]\t%+.3f", bt.Value, bt.Lo, bt.Hi, res.ILSR[i])
		if pl != nil {
			r := pl.Ratings[i]
			fmt.Fprintf(tw, "\t%+.0f [%+.0f, %+.0f]", r.Value, r.Lo, r.Hi)
			if r.Flag != "" {
				fmt.Fprintf(tw, " (%s*)", r.Flag)
				flagged = true
			}
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case seats(res) <= 2:
	case pl == nil && res.PlackettLuceError != "":
		fmt.Fprintf(w, "Plackett-Luce: not fitted: %s\n", res.PlackettLuceError)
	case pl != nil:
		fmt.Fprintln(w, "Plackett-Luce: finishing orders with Davidson-Luce ties, mean 0, Gaussian prior sd 1000 Elo.")
		for _, d := range pl.Ties {
			note := ""
			if d.Flag {
				note = " (every chance of such a tie ended in one: bounded by the prior only)"
			}
			fmt.Fprintf(w, "  ties of %d: prevalence %.3g [%.3g, %.3g]%s\n", d.Players, d.Delta, d.Lo, d.Hi, note)
		}
		if flagged {
			fmt.Fprintln(w, "  *: the games bound this rating on one side only: no agent outside its group ever finished ahead")
			fmt.Fprintln(w, "     of or tied with one in it (top), none in it ever did so against one outside (bottom), or both,")
			fmt.Fprintln(w, "     against different agents (middle); the prior bounds the other side, so the interval is wide")
			fmt.Fprintln(w, "     (a group: the agents that finished ahead of each other, directly or through others, both ways)")
		}
	}
	return nil
}

// seats is the largest number of seats of the result's games.
func seats(res *arena.TournamentResult) int {
	n := 0
	for _, a := range res.PerAgent {
		n = max(n, len(a.Seats))
	}
	return n
}

// msPerMove formats an agent's mean time per move in milliseconds, "-"
// when no time was recorded.
func msPerMove(a arena.AgentSummary) string {
	if a.Moves == 0 {
		return "-"
	}
	ms := 1000 * a.MoveTime
	if ms < 1 {
		return fmt.Sprintf("%.4f (%d moves)", ms, a.Moves)
	}
	return fmt.Sprintf("%.1f (%d moves)", ms, a.Moves)
}

// writeArenaCSV prints the results as one long table: rows "pair"
// (agent against opponent), "length" (value = mean, lo = min, hi = max),
// per agent "sole" (wins = sole wins, draws = shared wins, losses = the
// other games; value = sole win rate), "pairscore" (wins, draws, losses =
// pairwise comparisons; value = mean share won), "ordinal" (mean
// finishing position) and "move_ms" (games = decisions, value = mean
// milliseconds per decision), then "elo", "bt", "ilsr" (value with
// interval; ILSR has none) and "pl" (Plackett-Luce, Elo scale), and
// "pl_ties" (games = tie size, value = its prevalence δ).
func writeArenaCSV(w io.Writer, res *arena.TournamentResult) error {
	cw := csv.NewWriter(w)
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 8, 64) }
	cw.Write([]string{"table", "agent", "opponent", "games", "wins", "draws", "losses", "value", "lo", "hi"})
	for i, row := range res.Pairwise {
		for j, p := range row {
			if i == j || p.Score == nil {
				continue
			}
			cw.Write([]string{"pair", res.Agents[i], res.Agents[j], strconv.Itoa(p.Games), strconv.Itoa(p.Wins),
				strconv.Itoa(p.Draws), strconv.Itoa(p.Losses), f(p.Score.Value), f(p.Score.Lo), f(p.Score.Hi)})
		}
	}
	for i, l := range res.Length {
		cw.Write([]string{"length", res.Agents[i], "", strconv.Itoa(l.N), "", "", "", f(l.Mean), f(l.Min), f(l.Max)})
	}
	for _, a := range res.PerAgent {
		n := strconv.Itoa(a.Games)
		cw.Write([]string{"sole", a.Agent, "", n, strconv.Itoa(a.SoleWins), strconv.Itoa(a.SharedWins),
			strconv.Itoa(a.Games - a.SoleWins - a.SharedWins), f(a.SoleWinRate.Value), f(a.SoleWinRate.Lo), f(a.SoleWinRate.Hi)})
		cw.Write([]string{"pairscore", a.Agent, "", n, strconv.Itoa(a.PairWins), strconv.Itoa(a.PairDraws),
			strconv.Itoa(a.PairLosses), f(a.PairScore.Value), f(a.PairScore.Lo), f(a.PairScore.Hi)})
		cw.Write([]string{"ordinal", a.Agent, "", n, "", "", "", f(a.MeanOrdinal.Value), f(a.MeanOrdinal.Lo), f(a.MeanOrdinal.Hi)})
		cw.Write([]string{"move_ms", a.Agent, "", strconv.Itoa(a.Moves), "", "", "", f(1000 * a.MoveTime), "", ""})
	}
	for i, a := range res.Agents {
		e, bt := res.Elo[i], res.BradleyTerry[i]
		cw.Write([]string{"elo", a, "", "", "", "", "", f(e.Value), f(e.Lo), f(e.Hi)})
		cw.Write([]string{"bt", a, "", "", "", "", "", f(bt.Value), f(bt.Lo), f(bt.Hi)})
		cw.Write([]string{"ilsr", a, "", "", "", "", "", f(res.ILSR[i]), "", ""})
		if pl := res.PlackettLuce; pl != nil {
			r := pl.Ratings[i]
			cw.Write([]string{"pl", a, "", "", "", "", "", f(r.Value), f(r.Lo), f(r.Hi)})
		}
	}
	if pl := res.PlackettLuce; pl != nil {
		for _, d := range pl.Ties {
			cw.Write([]string{"pl_ties", "", "", strconv.Itoa(d.Players), "", "", "", f(d.Delta), f(d.Lo), f(d.Hi)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// readArenaLogs reads the game logs an earlier run of this tournament
// left in dir (arena.ReadLogDir), for --resume, or refuses a directory
// that holds any without it, so that a second run cannot mix its games
// with another's. Errors start with the flag; logs of another
// tournament are usage errors.
func readArenaLogs(dir string, g games.Game, specs []string, sched [][]int, seed uint64, resume bool) (map[int]arena.GameResult, error) {
	if !resume {
		names, err := arena.LogFiles(dir)
		if err != nil || len(names) == 0 {
			return nil, err
		}
		return nil, usagef("--logs %s already holds %d game logs (%s, ...): add --resume to continue that run, or choose another directory", dir, len(names), filepath.Base(names[0]))
	}
	played, err := arena.ReadLogDir(dir, g, specs, sched, seed)
	if err != nil {
		return nil, logsError("--resume", err)
	}
	return played, nil
}

// logsError prefixes arena.ReadLogDir's error with the flag that read the
// logs; a log of another tournament is a usage error.
func logsError(flag string, err error) error {
	if errors.Is(err, arena.ErrOtherTournament) {
		return usagef("%s: %v", flag, err)
	}
	return fmt.Errorf("%s: %v", flag, err)
}

// reportArenaLogs is arena --report: the result of the games logged in
// dir (checked as for --resume), marked partial when some of the
// schedule's games are missing; it plays none and takes no lock (the
// logs are written atomically, so a running arena's are safe to read).
func reportArenaLogs(e *env, dir string, g games.Game, specs []string, sched [][]int, seed uint64, perTable, boot int, asJSON, asCSV bool) error {
	if dir == "" {
		return usagef("--report prints the result of the games logged by an arena: give their directory with --logs")
	}
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("--report: %v", err)
	}
	played, err := arena.ReadLogDir(dir, g, specs, sched, seed)
	if err != nil {
		return logsError("--report", err)
	}
	if len(played) == 0 {
		return fmt.Errorf("--report: %s holds no game logs (game-NNNNNN.json) yet", dir)
	}
	idx := slices.Sorted(maps.Keys(played))
	results := make([]arena.GameResult, len(idx))
	for k, i := range idx {
		results[k] = played[i]
	}
	res, err := arena.Rate(g.Spec(), specs, results, arena.RateOptions{Bootstrap: boot, Seed: seed, GamesPerTable: perTable})
	if err != nil {
		return err
	}
	res.Partial = len(played) < len(sched)
	switch {
	case asJSON:
		return writeJSON(e.Stdout, res)
	case asCSV:
		return writeArenaCSV(e.Stdout, res)
	}
	return writeArenaText(e.Stdout, res, len(sched))
}
