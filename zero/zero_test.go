package zero

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4"
	"github.com/canopy-go/canopy/games/connect4/solver"
	_ "github.com/canopy-go/canopy/games/sequence"
	_ "github.com/canopy-go/canopy/games/tictactoe"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/spec"
	"github.com/canopy-go/canopy/train"
)

// tiny is a run small enough for a unit test.
func tiny() Config {
	c := DefaultConfig("tictactoe")
	c.Iterations, c.Games, c.Trees = 2, 12, 6
	c.SelfPlay.Sims = 12
	c.Train.Steps, c.Train.Batch, c.Train.MetricsEvery = 12, 16, 4
	c.EvalGames, c.EvalSims = 4, 8
	c.Baselines = []string{"random"}
	c.Backend = "cpu"
	return c
}

func checkpointBytes(t *testing.T, dir string, i int) []byte {
	t.Helper()
	raw, _ := train.CheckpointPaths(filepath.Join(dir, checkpointsDir), i)
	b, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// An interrupted run, continued, ends exactly where an uninterrupted run
// ends: the same networks (byte for byte) and the same evaluation games,
// wherever the interruption fell (self-play, training, evaluation).
func TestResumeIsExact(t *testing.T) {
	want := t.TempDir()
	if err := Run(context.Background(), want, tiny(), Options{}); err != nil {
		t.Fatal(err)
	}
	for k, phase := range []string{"self-play: 3/", "training: step 4", "evaluation: iter-0002 vs iter-0001, 1/", "evaluation: iter-0002 vs random, 2/"} {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			stopped := false
			opt := Options{Status: func(line string) {
				if strings.Contains(line, "iteration 2 "+phase) {
					stopped = true
					cancel()
				}
			}}
			err := Run(ctx, dir, tiny(), opt)
			if !stopped {
				t.Fatalf("the run never reported %q (err %v)", phase, err)
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted run: %v, want context.Canceled", err)
			}
			if n, _ := Finished(dir); n != 1 {
				t.Fatalf("%d iterations finished at the interruption, want 1", n)
			}
			if err := Run(context.Background(), dir, tiny(), Options{}); err != nil {
				t.Fatal(err)
			}
			for i := 0; i <= 2; i++ {
				if !bytes.Equal(checkpointBytes(t, dir, i), checkpointBytes(t, want, i)) {
					t.Errorf("iteration %d's network differs from the uninterrupted run's", i)
				}
			}
			a, _ := os.ReadFile(filepath.Join(dir, itersDir, "iter-0002.json"))
			b, _ := os.ReadFile(filepath.Join(want, itersDir, "iter-0002.json"))
			var ra, rb Record
			readJSON(filepath.Join(dir, itersDir, "iter-0002.json"), &ra)
			readJSON(filepath.Join(want, itersDir, "iter-0002.json"), &rb)
			if len(a) == 0 || len(b) == 0 || !sameMatches(ra.Eval.Matches, rb.Eval.Matches) {
				t.Errorf("evaluation games differ:\n%+v\n%+v", ra.Eval.Matches, rb.Eval.Matches)
			}
		})
	}
}

func sameMatches(a, b []Match) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i].Seats, ",") != strings.Join(b[i].Seats, ",") || len(a[i].Returns) != len(b[i].Returns) {
			return false
		}
		for k := range a[i].Returns {
			if a[i].Returns[k] != b[i].Returns[k] {
				return false
			}
		}
	}
	return true
}

// A finished run writes its metrics (one line per iteration), plots and
// records; continuing with more iterations extends it; other settings are
// refused with the setting named.
func TestRunOutputsAndContinuation(t *testing.T) {
	dir := t.TempDir()
	c := tiny()
	c.Iterations = 1
	if err := Run(context.Background(), dir, c, Options{}); err != nil {
		t.Fatal(err)
	}
	c.Iterations = 2
	var log bytes.Buffer
	if err := Run(context.Background(), dir, c, Options{Log: &log}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log.String(), "iteration 1/2:") {
		t.Errorf("the finished iteration 1 was redone:\n%s", log.String())
	}
	m, err := os.ReadFile(filepath.Join(dir, MetricsName))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(m), "\n"); n != 2 {
		t.Errorf("metrics.jsonl has %d lines, want 2", n)
	}
	for _, f := range []string{"loss.svg", "loss.png", "elo.svg", "elo.png"} {
		if fi, err := os.Stat(filepath.Join(dir, plotsDir, f)); err != nil || fi.Size() < 500 {
			t.Errorf("plot %s: %v", f, err)
		}
	}
	var rec Record
	if ok, err := readJSON(filepath.Join(dir, itersDir, "iter-0002.json"), &rec); !ok || err != nil {
		t.Fatalf("record of iteration 2: %v", err)
	}
	if len(rec.Eval.Scores) != 2 || rec.Eval.Scores[0].Opponent != "iter-0001" || rec.Eval.Scores[1].Opponent != "random" || rec.Eval.Scores[0].Games != 4 {
		t.Errorf("scores %+v: want 4 games against iter-0001 and random", rec.Eval.Scores)
	}
	// The held-out loss is measured on iteration 2's own positions only.
	if h := rec.Train.HeldOut; h == nil || !(h.Policy > 0) || !(h.Value >= 0) ||
		rec.Train.HeldOutPositions != min(rec.SelfPlay.Positions, HeldOutLimit) {
		t.Errorf("held-out loss %+v over %d positions (self-play %d positions in all)", h, rec.Train.HeldOutPositions, rec.SelfPlay.Positions)
	}
	if want := float64(c.Train.Steps*c.Train.Batch) / float64(rec.SelfPlay.Positions); rec.Train.ReplayRatio != want {
		t.Errorf("replay ratio %v, want %d steps x %d / %d new positions = %v", rec.Train.ReplayRatio, c.Train.Steps, c.Train.Batch, rec.SelfPlay.Positions, want)
	}
	c.SelfPlay.Sims = 13
	err = Run(context.Background(), dir, c, Options{})
	if want := fmt.Sprintf("these settings differ from the run's: --sims 13 (run: %d);", tiny().SelfPlay.Sims); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("changed sims: %v, want an error naming the setting", err)
	}
}

func TestBadConfig(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"games = 0":              func(c *Config) { c.Games = 0 },
		"gate = 2":               func(c *Config) { c.Gate = 2 },
		"unknown game":           func(c *Config) { c.Game = "nope" },
		"sims=0":                 func(c *Config) { c.SelfPlay.Sims = 0 },
		"eval-policy-games = -1": func(c *Config) { c.EvalPolicyGames = -1 },
	} {
		c := tiny()
		mod(&c)
		err := Run(context.Background(), t.TempDir(), c, Options{})
		if err == nil || !strings.Contains(err.Error(), strings.Fields(name)[0]) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := Run(context.Background(), filepath.Join(t.TempDir(), "a,b"), tiny(), Options{}); err == nil {
		t.Error("a run directory with a comma was accepted")
	}
}

// firstLegal plays the lowest legal action.
type firstLegal struct{}

func (firstLegal) Act(_ context.Context, s games.State, _ int) (games.Action, error) {
	m := games.NewMask(s.Game().NumActions())
	s.Legal(m)
	return m.First(), nil
}
func (firstLegal) Close() error { return nil }

// closer adds a no-op Close to an agent.
type closer struct{ agent.Agent }

func (closer) Close() error { return nil }

// The solver-set score is right at both ends: the perfect solver plays an
// optimal move everywhere, and a mover that always plays the first legal
// column scores what its moves are worth by the labels.
func TestOptimalShare(t *testing.T) {
	g := games.MustNew("connect4")
	labels, err := solver.Labels()
	if err != nil {
		t.Fatal(err)
	}
	labels = labels[len(labels)-12:] // the deepest: fast to solve
	perfectOK, err := optimalMoves(context.Background(), g, asLabelled(labels), func() (actor, error) {
		return closer{solver.NewAgent(1)}, nil
	})
	perfect := share(perfectOK)
	if err != nil || perfect != 1 {
		t.Errorf("solver agent: %v optimal (err %v), want 1", perfect, err)
	}
	firstOK, err := optimalMoves(context.Background(), g, asLabelled(labels), func() (actor, error) { return firstLegal{}, nil })
	first := share(firstOK)
	want := 0
	for _, l := range labels {
		for c := range 7 {
			if l.Scores[c] != solver.Illegal {
				if l.Optimal(c) {
					want++
				}
				break
			}
		}
	}
	if err != nil || first != float64(want)/float64(len(labels)) {
		t.Errorf("first-legal-column mover: %v (err %v), want %v", first, err, float64(want)/float64(len(labels)))
	}
}

// asLabelled is the solver's labelled positions as a Reference's.
func asLabelled(labels []solver.Labelled) []Labelled {
	out := make([]Labelled, len(labels))
	for i, l := range labels {
		out[i] = l
	}
	return out
}

// share is the fraction of true entries.
func share(ok []bool) float64 {
	n := 0
	for _, b := range ok {
		if b {
			n++
		}
	}
	return float64(n) / float64(len(ok))
}

// The report's groups split the positions twice, by ply range and by
// value, and each group's shares are those of its own positions. The
// "network" is right exactly on the drawn positions and the "search" on
// those of plies 8-13, so the shares differ from group to group.
func TestSolverGroups(t *testing.T) {
	labels, err := solver.Labels()
	if err != nil {
		t.Fatal(err)
	}
	pol, srch := make([]bool, len(labels)), make([]bool, len(labels))
	for i, l := range labels {
		pol[i] = l.Best() == 0
		srch[i] = len(l.Moves) <= 13
	}
	groups := solverGroups(asLabelled(labels), pol, srch)
	byPly, byValue := 0, 0
	for _, gr := range groups {
		var inPol, inSrch []bool
		var random float64
		for i, l := range labels {
			var lo, hi int
			n, _ := fmt.Sscanf(gr.Name, "plies %d-%d", &lo, &hi)
			in := n == 2 && len(l.Moves) >= lo && len(l.Moves) <= hi ||
				gr.Name == "won" && l.Best() > 0 || gr.Name == "drawn" && l.Best() == 0 || gr.Name == "lost" && l.Best() < 0
			if in {
				inPol, inSrch = append(inPol, pol[i]), append(inSrch, srch[i])
				random += l.RandomShare()
			}
		}
		if len(inPol) != gr.Positions || gr.Positions == 0 {
			t.Fatalf("group %q: %d positions, want %d (and not 0)", gr.Name, gr.Positions, len(inPol))
		}
		random /= float64(len(inPol))
		if strings.HasPrefix(gr.Name, "plies") {
			byPly += gr.Positions
		} else {
			byValue += gr.Positions
		}
		if gr.Policy != share(inPol) || gr.Search != share(inSrch) || math.Abs(gr.Random-random) > 1e-12 {
			t.Errorf("group %q: alone %v, search %v, random %v; want %v, %v, %v", gr.Name, gr.Policy, gr.Search, gr.Random, share(inPol), share(inSrch), random)
		}
	}
	if byPly != len(labels) || byValue != len(labels) {
		t.Errorf("ply groups hold %d positions and value groups %d, want %d each", byPly, byValue, len(labels))
	}
	if len(groups) < 5 || groups[0].Name != "plies 8-13" || groups[0].Search != 1 || groups[1].Search != 0 {
		t.Errorf("groups %+v: want plies 8-13 first (the set starts at ply 8) with search 1, then 0", groups)
	}
}

// A run stored before the blend's cut options existed (its zero.json has
// no "cut" or "cutscale") loads with their defaults and resumes with the
// default flags.
func TestLoadConfigUpgradesOlderRuns(t *testing.T) {
	dir := t.TempDir()
	c := DefaultConfig("connect4")
	c.Iterations = 2
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	sp := m["selfplay"].(map[string]any)
	if _, ok := sp["cut"]; !ok {
		t.Fatal(`the stored selfplay settings have no "cut": the test no longer tests an upgrade`)
	}
	delete(sp, "cut")
	delete(sp, "cutscale")
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ConfigName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, ok, err := LoadConfig(dir)
	if err != nil || !ok {
		t.Fatalf("LoadConfig: ok %v, err %v", ok, err)
	}
	if err := sameRun(got, c); err != nil {
		t.Errorf("an older run does not resume with the default settings: %v", err)
	}
}

// Evaluation's az agents search as self-play does: in a hidden-information
// game the same determinizations and rollout blend (and cut), with
// evaluation's own budget; in a run at the defaults the spec is unchanged.
func TestEvalSearchesAsSelfPlay(t *testing.T) {
	c := DefaultConfig("sequence:jacks=false")
	sp := &c.SelfPlay
	sp.Det, sp.Blend, sp.Turns, sp.Cut, sp.C = 4, 0.5, 6, "heuristic", 2
	g := games.MustNew(c.Game)
	extra := evalSearch(g, sp)
	s, err := spec.Parse("az:sims=64" + extra)
	if err != nil {
		t.Fatalf("az spec %q: %v", extra, err)
	}
	got := engine.DefaultSettings()
	if err := got.Table().Parse(s); err != nil {
		t.Fatalf("az spec %q: %v", extra, err)
	}
	if got.Det != 4 || got.Blend != 0.5 || got.Turns != 6 || got.Cut != "heuristic" || got.C != 2 || got.Sims != 64 {
		t.Errorf("evaluation az from %q: %+v, want self-play's det, blend, turns, cut and c", extra, got)
	}
	if d := DefaultConfig("connect4"); evalSearch(games.MustNew("connect4"), &d.SelfPlay) != "" {
		t.Errorf("connect4 at the defaults: %q, want no extra options", evalSearch(games.MustNew("connect4"), &d.SelfPlay))
	}
	c.EvalSims = 3
	if err := c.Check(); err == nil || !strings.Contains(err.Error(), "eval-sims") {
		t.Errorf("eval-sims 3 below det 4: err %v, want one naming eval-sims", err)
	}
}

// The training line names the windows its two losses are means of, and a
// run of one window shows one loss, not "X -> X".
func TestLossTrend(t *testing.T) {
	first := nets.Loss{Total: 2, Policy: 1.5, Value: 0.4, L2: 0.1}
	final := nets.Loss{Total: 1, Policy: 0.8, Value: 0.1, L2: 0.1}
	for _, c := range []struct {
		steps, every int
		want         string
	}{
		{10, 20, "mean of all 10 steps: " + first.String()},
		{20, 20, "mean of all 20 steps: " + first.String()},
		{80, 20, "mean of steps 1-20: " + first.String() + " -> of steps 61-80: " + final.String()},
		{70, 20, "mean of steps 1-20: " + first.String() + " -> of steps 61-70: " + final.String()},
		{5, 0, "mean of all 5 steps: " + first.String()},
	} {
		res := train.Result{Steps: c.steps, FirstLoss: first, FinalLoss: final}
		if got := lossTrend(res, c.every); got != c.want {
			t.Errorf("lossTrend(steps %d, every %d) = %q, want %q", c.steps, c.every, got, c.want)
		}
	}
}

// --eval-policy-games plays the iteration's network alone (the policy
// agent on the network evaluation uses) against each baseline: its
// score is recorded apart from the searching network's, its games stay
// out of the matches that make the Elo, and the scores chart is drawn.
func TestEvalAlone(t *testing.T) {
	dir := t.TempDir()
	c := tiny()
	c.Iterations, c.EvalPolicyGames = 1, 6
	var log bytes.Buffer
	if err := Run(context.Background(), dir, c, Options{Log: &log}); err != nil {
		t.Fatal(err)
	}
	var rec Record
	if ok, err := readJSON(filepath.Join(dir, itersDir, "iter-0001.json"), &rec); !ok || err != nil {
		t.Fatalf("record of iteration 1: %v", err)
	}
	if len(rec.Eval.Alone) != 1 || rec.Eval.Alone[0].Opponent != "random" || rec.Eval.Alone[0].Games != 6 {
		t.Fatalf("alone scores %+v: want 6 games against random", rec.Eval.Alone)
	}
	if n := len(rec.Eval.Matches); n != 2*c.EvalGames {
		t.Errorf("%d matches, want the %d games of the searching network only", n, 2*c.EvalGames)
	}
	// The same games played directly: the policy agent on the Polyak
	// average of iteration 1, the evaluation's seed for alone games.
	_, avg := train.CheckpointPaths(filepath.Join(dir, checkpointsDir), 1)
	res, err := arena.Tournament(context.Background(), games.MustNew("tictactoe"), arena.TournamentConfig{
		Agents: []string{"policy:net=" + avg, "random"}, Games: 6, Parallel: 6,
		Seed: games.DeriveSeed(c.Seed, 1<<21+1), Bootstrap: -1})
	if err != nil {
		t.Fatal(err)
	}
	if want := res.Pairwise[0][1].Score.Value; rec.Eval.Alone[0].Score != want {
		t.Errorf("alone score %v, want the policy agent's %v in the same games", rec.Eval.Alone[0].Score, want)
	}
	if !strings.Contains(log.String(), "iter-0001 alone (no search) vs random: ") {
		t.Errorf("log does not report the alone score:\n%s", log.String())
	}
	if fi, err := os.Stat(filepath.Join(dir, plotsDir, "scores.svg")); err != nil || fi.Size() < 500 {
		t.Errorf("scores chart: %v", err)
	}
	// Without search games (--eval-games 0) the network alone still plays.
	c.EvalGames = 0
	dir = t.TempDir()
	if err := Run(context.Background(), dir, c, Options{}); err != nil {
		t.Fatal(err)
	}
	rec = Record{}
	if ok, err := readJSON(filepath.Join(dir, itersDir, "iter-0001.json"), &rec); !ok || err != nil {
		t.Fatalf("record of iteration 1 (eval-games 0): %v", err)
	}
	if len(rec.Eval.Alone) != 1 || rec.Eval.Alone[0].Games != 6 || len(rec.Eval.Scores) != 0 {
		t.Errorf("eval-games 0: alone %+v, scores %+v; want 6 alone games and no search games", rec.Eval.Alone, rec.Eval.Scores)
	}
}

// --eval-policy-games may be added to a run that exists: later iterations
// play the network alone too, the setting is stored, and the networks are
// the ones the run would have made without it.
func TestEvalAloneAddedOnResume(t *testing.T) {
	plain, added := t.TempDir(), t.TempDir()
	c := tiny()
	if err := Run(context.Background(), plain, c, Options{}); err != nil {
		t.Fatal(err)
	}
	c.Iterations = 1
	if err := Run(context.Background(), added, c, Options{}); err != nil {
		t.Fatal(err)
	}
	c.Iterations, c.EvalPolicyGames = 2, 4
	if err := Run(context.Background(), added, c, Options{}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{0, 1} {
		var rec Record
		if ok, err := readJSON(filepath.Join(added, itersDir, iterName(i+1)+".json"), &rec); !ok || err != nil {
			t.Fatalf("record of iteration %d: %v", i+1, err)
		}
		if len(rec.Eval.Alone) != want {
			t.Errorf("iteration %d: %d alone scores, want %d", i+1, len(rec.Eval.Alone), want)
		}
	}
	stored, ok, err := LoadConfig(added)
	if !ok || err != nil || stored.EvalPolicyGames != 4 {
		t.Errorf("stored eval-policy-games %d (%v, %v), want 4", stored.EvalPolicyGames, ok, err)
	}
	if !bytes.Equal(checkpointBytes(t, plain, 2), checkpointBytes(t, added, 2)) {
		t.Error("iteration 2's network differs from the run without alone games")
	}
	c.EvalPolicyGames = -1
	if err := Run(context.Background(), added, c, Options{}); err == nil || !strings.Contains(err.Error(), "eval-policy-games") {
		t.Errorf("eval-policy-games -1 on a resumed run: %v, want an error naming it", err)
	}
}

// A shard of the replay window that training cannot read stops the run
// on every rerun, naming the fix; Options.SkipBad (zero --skip-bad)
// trains without it, says so, and records it.
func TestSkipBadShard(t *testing.T) {
	dir := t.TempDir()
	c := tiny()
	c.Iterations = 1
	c.EvalGames, c.Baselines = 0, nil
	if err := Run(context.Background(), dir, c, Options{}); err != nil {
		t.Fatal(err)
	}
	shards, err := filepath.Glob(filepath.Join(dir, selfplayDir, iterName(1), "shard-*.npz"))
	if err != nil || len(shards) == 0 {
		t.Fatalf("no shards of iteration 1 (%v)", err)
	}
	data, err := os.ReadFile(shards[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shards[0], data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	c.Iterations = 2
	for range 2 {
		err := Run(context.Background(), dir, c, Options{})
		if err == nil || !strings.Contains(err.Error(), "--skip-bad") || !strings.Contains(err.Error(), shards[0]) {
			t.Fatalf("a truncated shard in the window: %v; want an error naming it and --skip-bad", err)
		}
	}
	var log bytes.Buffer
	if err := Run(context.Background(), dir, c, Options{Log: &log, SkipBad: true}); err != nil {
		t.Fatalf("with SkipBad: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "skipping shard "+shards[0]) {
		t.Errorf("the log does not say which shard was skipped:\n%s", log.String())
	}
	var rec Record
	if ok, err := readJSON(filepath.Join(dir, itersDir, iterName(2)+".json"), &rec); !ok || err != nil {
		t.Fatalf("iteration 2's record: %v %v", ok, err)
	}
	if sk := rec.Train.SkippedShards; len(sk) != 1 || !strings.Contains(sk[0], shards[0]) {
		t.Errorf("iteration 2's record names %q as skipped, want %s", sk, shards[0])
	}
}

// A resumed run's changed settings are named by their flags, nested ones
// (self-play's, training's) and renamed ones (--window) included; only
// --iterations and --eval-policy-games may change.
func TestSameRunNamesFlags(t *testing.T) {
	old := tiny()
	c := old
	c.Iterations, c.EvalPolicyGames = 9, 3
	if err := sameRun(old, c); err != nil {
		t.Errorf("iterations and eval-policy-games: %v, want no difference", err)
	}
	c.SelfPlay.Sims, c.Train.LR, c.WindowPositions = 16, 0.5, 7000
	want := fmt.Sprintf("these settings differ from the run's: --sims 16 (run: 12), --lr 0.5 (run: %v), --window 7000 (run: 0)", old.Train.LR)
	if err := sameRun(old, c); err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// TestNetCacheChangesNothing: self-play behind a network cache writes the
// same networks as without, byte for byte (a cached output is the
// network's own), and a run may be resumed with another cache size.
func TestNetCacheChangesNothing(t *testing.T) {
	want := t.TempDir()
	if err := Run(context.Background(), want, tiny(), Options{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := tiny()
	c.Iterations = 1
	var log bytes.Buffer
	if err := Run(context.Background(), dir, c, Options{NetCache: 1 << 12, Log: &log}); err != nil {
		t.Fatal(err)
	}
	// The cache answered some lookups, so the comparison below tests it.
	if m := regexp.MustCompile(`network cache: ([0-9.]+)% of`).FindStringSubmatch(log.String()); m == nil || m[1] == "0.0" {
		t.Fatalf("no cache hits reported:\n%s", log.String())
	}
	if err := Run(context.Background(), dir, tiny(), Options{NetCache: 1 << 6}); err != nil {
		t.Fatalf("resumed with another cache size: %v", err)
	}
	for i := 1; i <= 2; i++ {
		if !bytes.Equal(checkpointBytes(t, dir, i), checkpointBytes(t, want, i)) {
			t.Errorf("iteration %d: the network of the run with a cache differs", i)
		}
	}
}
