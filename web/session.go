package web

import (
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
)

// humanSeat is the seat spec of a person.
const humanSeat = "human"

// session is one game held by the server.
//
// The fields above mu are set at creation and never change. mu guards the
// rest; it is never held while an agent computes (see busy). Invariants
// under mu: state is the initial state with actions applied in order;
// after every change, chance nodes have been played out (state is never at
// a chance node); joint holds the choices made so far at the current
// simultaneous node (NoAction for players yet to choose) and is nil
// elsewhere.
type session struct {
	id     string
	game   games.Game
	specs  []string // per seat: agent spec or "human"
	seed   uint64
	env    agent.Env // what its agents (and analyses) are built with; env.Seed == seed
	client string    // the remote IP address that created it (Config.MaxClientGames)

	mu       sync.Mutex
	state    games.State
	actions  []games.Action // every applied action, chance included; joint actions one entry per player
	movers   []int          // per action: the player, games.ChancePlayer for chance
	agents   []agent.Agent  // per seat; nil for humans
	chance   *rand.Rand
	joint    []games.Action
	busy     bool      // an agent call is in flight on a clone; no change until it ends
	closed   bool      // deleted or expired: agents closed, or to close when busy ends
	lastUsed time.Time // for expiry
}

// newSession builds a game with one agent per non-human seat, with env's
// services, seeded from env.Seed. It closes what it built when a later
// seat fails.
func newSession(id string, g games.Game, specs []string, env agent.Env) (*session, error) {
	seed := env.Seed
	ss := &session{
		id: id, game: g, specs: specs, seed: seed, env: env,
		state:    g.NewInitialState(),
		agents:   make([]agent.Agent, len(specs)),
		chance:   games.NewRand(arena.DeriveSeed(seed, 1<<32)),
		lastUsed: time.Now(),
	}
	if ss.hidden() && len(ss.humans()) > 0 {
		// The seed is the client's to choose and is shown to every seat:
		// deals drawn from it could be computed in advance. A person
		// playing with hidden cards gets deals from a secret seed.
		var b [8]byte
		crand.Read(b[:]) // never fails (crypto/rand.Read's documented contract)
		ss.chance = games.NewRand(binary.LittleEndian.Uint64(b[:]))
	}
	for p, sp := range specs {
		if sp == humanSeat {
			continue
		}
		a, err := agent.New(g, sp, env.WithSeed(arena.DeriveSeed(seed, uint64(p))))
		if err != nil {
			arena.CloseAgents(ss.agents)
			return nil, errorf(http.StatusBadRequest, "seat %d (%q): %v", p, clip(sp), err)
		}
		ss.agents[p] = a
	}
	ss.settle()
	return ss, nil
}

// settle plays out chance nodes and sets up joint at simultaneous nodes.
// Called with mu held after every change of state.
func (ss *session) settle() {
	for steps := 0; ss.state.CurrentPlayer() == games.ChancePlayer && steps < ss.game.MaxGameLength(); steps++ {
		a := ss.state.(games.ChanceState).SampleChance(ss.chance)
		ss.state.Apply(a)
		ss.actions = append(ss.actions, a)
		ss.movers = append(ss.movers, games.ChancePlayer)
	}
	ss.joint = nil
	if ss.state.CurrentPlayer() == games.SimultaneousPlayer {
		ss.joint = make([]games.Action, ss.game.NumPlayers())
		for i := range ss.joint {
			ss.joint[i] = games.NoAction
		}
	}
}

// waiting returns the players whose choice the game waits for: the
// player to move, or at a simultaneous node those yet to choose. Called
// with mu held.
func (ss *session) waiting() []int {
	switch p := ss.state.CurrentPlayer(); {
	case p >= 0:
		return []int{p}
	case p == games.SimultaneousPlayer:
		var out []int
		for i, a := range ss.joint {
			if a == games.NoAction {
				out = append(out, i)
			}
		}
		return out
	}
	return nil
}

// legalFor writes player p's legal actions now into m. Called with mu held.
func (ss *session) legalFor(p int, m games.Mask) {
	if ss.state.CurrentPlayer() == games.SimultaneousPlayer {
		ss.state.(games.SimultaneousState).LegalFor(p, m)
		return
	}
	ss.state.Legal(m)
}

// play applies player p's legal action a (checked by the caller), or
// records it at a simultaneous node and applies the joint action once
// every player has chosen. Called with mu held.
func (ss *session) play(p int, a games.Action) {
	if ss.joint != nil {
		ss.joint[p] = a
		for _, x := range ss.joint {
			if x == games.NoAction {
				return
			}
		}
		for i, x := range ss.joint {
			ss.actions = append(ss.actions, x)
			ss.movers = append(ss.movers, i)
		}
		ss.state.(games.SimultaneousState).ApplyJoint(ss.joint)
	} else {
		ss.state.Apply(a)
		ss.actions = append(ss.actions, a)
		ss.movers = append(ss.movers, p)
	}
	ss.settle()
}

// hidden reports whether the game has hidden information (cards).
func (ss *session) hidden() bool {
	return ss.game.Type().Information != games.PerfectInformation
}

// private reports whether the session must keep hidden information from
// the page: the game hides cards, a person plays, and it is not over. Then
// a request may see only the cards of the seat at the screen (screenSeat),
// deals stay out of the history and the log, analyses see a
// determinization for that seat, and there is no undo. A game between
// agents only is watched, not played: everything may be shown. Called
// with mu held.
func (ss *session) private() bool {
	return ss.hidden() && !ss.state.IsTerminal() && len(ss.humans()) > 0
}

// screenSeat is the seat whose view a private session shows: the only
// person; with several people at one screen the one to choose (the first
// waiting), else the one who moved last (an agent is to move), else the
// first person. Called with mu held.
func (ss *session) screenSeat() int {
	h := ss.humans()
	if len(h) == 1 {
		return h[0]
	}
	for _, p := range ss.waiting() {
		if ss.specs[p] == humanSeat {
			return p
		}
	}
	for i := len(ss.movers) - 1; i >= 0; i-- {
		if p := ss.movers[i]; p >= 0 && ss.specs[p] == humanSeat {
			return p
		}
	}
	return h[0]
}

// views returns the views a request may ask for: the screen seat's in a
// private session, else every player's and -1 (everything). Called with
// mu held.
func (ss *session) views() []int {
	if ss.private() {
		return []int{ss.screenSeat()}
	}
	out := []int{-1}
	for p := range ss.game.NumPlayers() {
		out = append(out, p)
	}
	return out
}

// humans reports the human seats.
func (ss *session) humans() []int {
	var out []int
	for p, sp := range ss.specs {
		if sp == humanSeat {
			out = append(out, p)
		}
	}
	return out
}

// closeAgents closes the agents that hold resources, once. Called with mu
// held and busy false.
func (ss *session) closeAgents() {
	if ss.agents != nil {
		arena.CloseAgents(ss.agents)
		ss.agents = nil
	}
}

// shut marks the session closed and closes its agents now, or leaves
// that to the agent call in flight. Called with mu held.
func (ss *session) shut() {
	ss.closed = true
	if !ss.busy {
		ss.closeAgents()
	}
}

// store holds the sessions by id. It is safe for concurrent use; its mutex
// is never held while a session's is (sessions are looked up, then locked).
// Invariant under mu: perClient[c] is the number of games whose client is
// c (no zero entries).
type store struct {
	mu        sync.Mutex
	max       int // games held at once
	maxClient int // games one client holds at once
	games     map[string]*session
	perClient map[string]int
}

func newStore(max, maxClient int) *store {
	return &store{max: max, maxClient: maxClient, games: map[string]*session{}, perClient: map[string]int{}}
}

// reserve checks there is room for one more game of client. add may still
// fail when two creations race; reserve only saves building agents in vain.
func (st *store) reserve(client string) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.roomLocked(client)
}

func (st *store) roomLocked(client string) error {
	if len(st.games) >= st.max {
		return errorf(http.StatusTooManyRequests, "the server holds %d games, its limit; delete one or wait for idle games to expire", st.max)
	}
	if st.perClient[client] >= st.maxClient {
		return errorf(http.StatusTooManyRequests, "this client (%s) holds %d games, the limit per client (serve --max-games-per-client); end one or wait for idle games to expire", clip(client), st.maxClient)
	}
	return nil
}

// add stores ss, unless the store or ss's client is full.
func (st *store) add(ss *session) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.roomLocked(ss.client); err != nil {
		return err
	}
	st.games[ss.id] = ss
	st.perClient[ss.client]++
	return nil
}

// deleteLocked removes ss from the store. Called with st.mu held.
func (st *store) deleteLocked(ss *session) {
	delete(st.games, ss.id)
	if st.perClient[ss.client]--; st.perClient[ss.client] <= 0 {
		delete(st.perClient, ss.client)
	}
}

// get returns the session with id, or a 404 error.
func (st *store) get(id string) (*session, error) {
	st.mu.Lock()
	ss, ok := st.games[id]
	st.mu.Unlock()
	if !ok {
		return nil, errorf(http.StatusNotFound, "no game %q (it ended, expired or never existed)", clip(id))
	}
	return ss, nil
}

// remove deletes the session with id from the store and returns it.
func (st *store) remove(id string) (*session, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	ss, ok := st.games[id]
	if ok {
		st.deleteLocked(ss)
	}
	return ss, ok
}

// expire deletes the games not used since before, other than those with
// an agent call in flight, and returns how many it deleted.
func (st *store) expire(before time.Time) int {
	st.mu.Lock()
	all := make([]*session, 0, len(st.games))
	for _, ss := range st.games {
		all = append(all, ss)
	}
	st.mu.Unlock()
	n := 0
	for _, ss := range all {
		ss.mu.Lock()
		old := !ss.busy && !ss.closed && ss.lastUsed.Before(before)
		if old {
			ss.shut()
		}
		ss.mu.Unlock()
		if old {
			st.mu.Lock()
			if st.games[ss.id] == ss {
				st.deleteLocked(ss)
			}
			st.mu.Unlock()
			n++
		}
	}
	return n
}

// closeAll deletes every game.
func (st *store) closeAll() {
	st.mu.Lock()
	all := st.games
	st.games, st.perClient = map[string]*session{}, map[string]int{}
	st.mu.Unlock()
	for _, ss := range all {
		ss.mu.Lock()
		ss.shut()
		ss.mu.Unlock()
	}
}

// newID returns a random game id (16 hex digits).
func newID() string {
	var b [8]byte
	crand.Read(b[:]) // never fails (crypto/rand.Read's documented contract)
	return hex.EncodeToString(b[:])
}
