package rl

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4"
	_ "github.com/canopy-go/canopy/games/tictactoe"
	"github.com/canopy-go/canopy/nets"
)

func connect4Game(t testing.TB) games.Game {
	t.Helper()
	g, err := games.New("connect4")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// randomActions picks a legal action per environment with rng-free
// determinism (the k-th legal action, k from a counter).
func randomActions(e *VecEnv, acts []games.Action, k int) {
	for i := range acts {
		m := e.Legal(i)
		acts[i] = m.Nth((k + 3*i) % m.Count())
	}
}

// The environments keep the egocentric view and the legal batch in step
// with their games, alternate seats, and count every finished game once.
func TestEnvConsistency(t *testing.T) {
	g := connect4Game(t)
	e, err := NewEnv(g, EnvOptions{N: 5, Seat: SeatAlternate, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	obs := make([]float32, e.ObservationSize())
	m := games.NewMask(g.NumActions())
	acts := make([]games.Action, e.N())
	var rewardSum float64
	dones := 0
	seats := map[int]int{}
	for k := range 2000 {
		for i := range e.N() {
			s := e.State(i)
			if s.IsTerminal() || s.CurrentPlayer() != e.Seat(i) {
				t.Fatalf("step %d env %d: learner (seat %d) not to move in %s", k, i, e.Seat(i), s)
			}
			s.Observation(e.Seat(i), obs)
			if !slices.Equal(obs, e.Observations()[i*len(obs):(i+1)*len(obs)]) {
				t.Fatalf("step %d env %d: observation is not the learner's view", k, i)
			}
			s.Legal(m)
			for a := range g.NumActions() {
				want := float32(0)
				if m.Has(games.Action(a)) {
					want = 1
				}
				if e.LegalFloats()[i*g.NumActions()+a] != want || e.Legal(i).Has(games.Action(a)) != m.Has(games.Action(a)) {
					t.Fatalf("step %d env %d: legal action %d mismatch", k, i, a)
				}
			}
		}
		randomActions(e, acts, k)
		if err := e.Step(acts); err != nil {
			t.Fatal(err)
		}
		for i, d := range e.Dones() {
			if d {
				dones++
				rewardSum += float64(e.Rewards()[i])
				seats[e.Seat(i)]++
			} else if e.Rewards()[i] != 0 {
				t.Fatalf("reward %g on a non-final step", e.Rewards()[i])
			}
		}
	}
	st := e.Stats()
	if st.Episodes != int64(dones) || st.Wins+st.Draws+st.Losses != st.Episodes || st.Episodes < 100 {
		t.Fatalf("stats %v for %d dones", st, dones)
	}
	if d := st.ReturnSum - rewardSum; d*d > 1e-9 || st.ReturnSum != float64(st.Wins-st.Losses) {
		t.Fatalf("return sum %g, rewards %g, wins-losses %d", st.ReturnSum, rewardSum, st.Wins-st.Losses)
	}
	if seats[0] == 0 || seats[1] == 0 {
		t.Fatalf("seats not alternated: %v", seats)
	}
	if st.MeanLength() < 4 || st.MeanLength() > 21 {
		t.Fatalf("mean length %g learner steps", st.MeanLength())
	}
	e.ResetStats()
	if e.Stats().Episodes != 0 {
		t.Fatal("ResetStats kept episodes")
	}
}

func runEnv(t *testing.T, opt EnvOptions, steps int) (EpisodeStats, []float32) {
	t.Helper()
	e, err := NewEnv(connect4Game(t), opt)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	acts := make([]games.Action, e.N())
	for k := range steps {
		randomActions(e, acts, k)
		if err := e.Step(acts); err != nil {
			t.Fatal(err)
		}
	}
	return e.Stats(), slices.Clone(e.Observations())
}

// Each environment has its own random stream: the worker count does not
// change the games.
func TestEnvWorkersDeterministic(t *testing.T) {
	s1, o1 := runEnv(t, EnvOptions{N: 7, Seed: 9, Workers: 1}, 300)
	s2, o2 := runEnv(t, EnvOptions{N: 7, Seed: 9, Workers: 3}, 300)
	if s1 != s2 || !slices.Equal(o1, o2) {
		t.Fatalf("1 worker: %v; 3 workers: %v", s1, s2)
	}
	s3, _ := runEnv(t, EnvOptions{N: 7, Seed: 10, Workers: 1}, 300)
	if s3 == s1 {
		t.Fatal("another seed gave the same games")
	}
}

// Study 002's win-only reward: +1 for a win, 0 otherwise.
func TestEnvWinOnlyReward(t *testing.T) {
	st, _ := runEnv(t, EnvOptions{N: 4, Seed: 2, Reward: RewardWinOnly, Seat: 1}, 500)
	if st.ReturnSum != float64(st.Wins) || st.Losses == 0 {
		t.Fatalf("%v", st)
	}
}

func TestEnvAgentOpponent(t *testing.T) {
	g := connect4Game(t)
	one, err := agent.New(g, "onestep", agent.Env{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	vsOne, _ := runEnv(t, EnvOptions{N: 4, Seed: 3, Opponent: AgentOpponent(one), Workers: 2}, 400)
	vsRandom, _ := runEnv(t, EnvOptions{N: 4, Seed: 3}, 400)
	// A blind learner loses more often to onestep than to random.
	if vsOne.WinRate() >= vsRandom.WinRate() {
		t.Fatalf("vs onestep %v; vs random %v", vsOne, vsRandom)
	}
}

// Caller-owned buffers (EnvOptions.LegalMask, Rewards, Dones) receive
// what the VecEnv's own would hold, step after step.
func TestEnvCallerBuffers(t *testing.T) {
	g := connect4Game(t)
	const n = 6
	own, err := NewEnv(g, EnvOptions{N: n, Seed: 5, Seat: SeatAlternate})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	na := g.NumActions()
	legal, rewards, dones := make([]bool, n*na), make([]float32, n), make([]bool, n)
	ext, err := NewEnv(g, EnvOptions{N: n, Seed: 5, Seat: SeatAlternate, LegalMask: legal, Rewards: rewards, Dones: dones})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	if ext.LegalFloats() != nil {
		t.Error("LegalFloats is not nil with LegalMask set")
	}
	acts := make([]games.Action, n)
	ended := 0
	for k := range 200 {
		for i := range n * na {
			if legal[i] != (own.LegalFloats()[i] == 1) {
				t.Fatalf("step %d: LegalMask[%d] = %v, the float batch %g", k, i, legal[i], own.LegalFloats()[i])
			}
		}
		if !slices.Equal(rewards, own.Rewards()) || !slices.Equal(dones, own.Dones()) {
			t.Fatalf("step %d: rewards %v dones %v, want %v %v", k, rewards, dones, own.Rewards(), own.Dones())
		}
		if &ext.Rewards()[0] != &rewards[0] || &ext.Dones()[0] != &dones[0] {
			t.Fatal("Rewards or Dones is not the caller's buffer")
		}
		for _, d := range dones {
			if d {
				ended++
			}
		}
		randomActions(own, acts, k)
		if err := own.Step(acts); err != nil {
			t.Fatal(err)
		}
		if err := ext.Step(acts); err != nil {
			t.Fatal(err)
		}
	}
	if ended == 0 {
		t.Fatal("no game ended in 200 steps")
	}
	for _, opt := range []EnvOptions{{N: n, LegalMask: make([]bool, 3)}, {N: n, Rewards: make([]float32, 2)}, {N: n, Dones: make([]bool, n+1)}} {
		if _, err := NewEnv(g, opt); err == nil || !strings.Contains(err.Error(), "EnvOptions.") {
			t.Errorf("a buffer of the wrong size: error %v, want one naming the option", err)
		}
	}
}

func TestEnvAllocs(t *testing.T) {
	for _, workers := range []int{1, 2} {
		// Shaping and the legal-move plane allocate nothing either.
		e, err := NewEnv(connect4Game(t), EnvOptions{N: 16, Seed: 4, Workers: workers, Seat: SeatAlternate,
			Shaping: Study002Shaping(), Encoding: nets.Encoding{LegalPlane: true}})
		if err != nil {
			t.Fatal(err)
		}
		acts := make([]games.Action, e.N())
		k := 0
		allocs := testing.AllocsPerRun(200, func() {
			randomActions(e, acts, k)
			k++
			if err := e.Step(acts); err != nil {
				t.Fatal(err)
			}
		})
		e.Close()
		if allocs != 0 {
			t.Errorf("%d workers: Step allocates %g times per call", workers, allocs)
		}
	}
}

func TestEnvErrors(t *testing.T) {
	g := connect4Game(t)
	for _, tc := range []struct {
		opt  EnvOptions
		want string
	}{
		{EnvOptions{N: -1}, "environments"},
		{EnvOptions{Workers: -2}, "workers"},
		{EnvOptions{Seat: 2}, "seat"},
		{EnvOptions{Seat: -3}, "seat"},
		{EnvOptions{Reward: 9}, "reward"},
	} {
		if _, err := NewEnv(g, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one about %s", tc.opt, err, tc.want)
		}
	}
	if _, err := NewEnv(nil, EnvOptions{}); err == nil {
		t.Error("nil game accepted")
	}
	e, err := NewEnv(g, EnvOptions{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Step([]games.Action{0}); err == nil {
		t.Error("short action slice accepted")
	}
	if err := e.Step([]games.Action{0, 99}); err == nil || !strings.Contains(err.Error(), "environment 1") {
		t.Errorf("illegal action: %v", err)
	}
	bad := OpponentFunc(func(games.State, int, games.Mask, *rand.Rand) (games.Action, error) { return 42, nil })
	if _, err := NewEnv(g, EnvOptions{N: 2, Seat: 1, Opponent: bad}); err == nil || !strings.Contains(err.Error(), "opponent") {
		t.Errorf("illegal opponent action: %v", err)
	}
}
