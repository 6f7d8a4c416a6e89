package web

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// The hidden-information tests: what a person's seat may learn through the
// API is what the game lets that player see. Each position of a game
// against agents is re-dealt (twin): the cards the person to look at the
// screen cannot see are dealt again, consistently with everything that
// player has seen (the game's information-state tensor, step by step), and
// every read endpoint must answer the twin exactly as the original, for
// every view= value. The endpoints that change the game answer with the
// state a plain GET then shows, so the GET check covers them.

// viewValues are the view= values every endpoint is asked with ("absent":
// no view parameter).
var viewValues = []string{"absent", "-1", "0", "1", "2", "junk", "1.5", ""}

// gameEndpoints lists, per route of a game, how the probe
// asks it (apiRoutes); a route with no entry fails TestHiddenCardsDoNotLeak, so a new
// endpoint cannot be forgotten here.
var gameEndpoints = map[string]string{
	"GET /api/games/{id}":              "read",
	"GET /api/games/{id}/log":          "read",
	"POST /api/games/{id}/analyze":     "analyze",
	"GET /api/games/{id}/analyze/live": "live",
	"POST /api/games/{id}/move":        "mutates: answers the state GET shows next",
	"POST /api/games/{id}/agent":       "mutates: answers the state GET shows next",
	"POST /api/games/{id}/undo":        "mutates: answers the state GET shows next",
	"DELETE /api/games/{id}":           "mutates: no body",
	"POST /api/games":                  "mutates: answers the state GET shows next",
}

// analyzers asked by the probe: the seat's own agent (""), a search that
// samples the hidden cards itself and one that takes the position as it
// is given (det=0: it would play with the cards face up).
var probeAnalyzers = []string{"", "mcts:sims=24,threads=1", "mcts:sims=24,threads=1,det=0"}

// infoOf writes player p's information state in s into buf (the
// observation where the game has no information-state tensor) and returns
// it; buf nil allocates.
func infoOf(s games.State, p int, buf []float32) []float32 {
	if is, ok := s.(games.InfoState); ok {
		if buf == nil {
			n := 1
			for _, d := range s.Game().(games.InfoStateGame).InformationStateShape() {
				n *= d
			}
			buf = make([]float32, n)
		}
		is.InformationState(p, buf)
		return buf
	}
	if buf == nil {
		buf = make([]float32, games.ObservationSize(s.Game()))
	}
	s.Observation(p, buf)
	return buf
}

// redeal returns another history of ss's game, move for move, in which
// viewer's information state equals the original one after every action
// but the full state differs: the chance outcomes (and the choices of other
// players) viewer has not seen are drawn again. ok is false when no such
// history was found (viewer has seen everything).
func redeal(ss *session, viewer int, rng *rand.Rand) (games.State, []games.Action, bool) {
	g := ss.game
	n := g.NumPlayers()
	m := games.NewMask(g.NumActions())
	// want[i]: viewer's information after the i-th step (an action, or a
	// joint action at a simultaneous node) of the original history.
	var want [][]float32
	var steps []int // the number of actions of each step
	o := g.NewInitialState()
	for i := 0; i < len(ss.actions); {
		k := 1
		if o.CurrentPlayer() == games.SimultaneousPlayer {
			k = n
			o.(games.SimultaneousState).ApplyJoint(ss.actions[i : i+n])
		} else {
			o.Apply(ss.actions[i])
		}
		want = append(want, infoOf(o, viewer, nil))
		steps = append(steps, k)
		i += k
	}
	var buf []float32
	for attempt := range 400 {
		change := 0.5
		if attempt >= 200 {
			change = 0.05
		}
		s := g.NewInitialState()
		acts := make([]games.Action, 0, len(ss.actions))
		failed := false
		for j, i := 0, 0; j < len(steps) && !failed; j, i = j+1, i+steps[j] {
			if steps[j] == n && s.CurrentPlayer() == games.SimultaneousPlayer {
				joint := ss.actions[i : i+n]
				for p, a := range joint {
					s.(games.SimultaneousState).LegalFor(p, m)
					failed = failed || !m.Has(a)
				}
				if !failed {
					s.(games.SimultaneousState).ApplyJoint(joint)
					acts = append(acts, joint...)
					buf = infoOf(s, viewer, buf)
					failed = !slices.Equal(buf, want[j])
				}
				continue
			}
			a, mover := ss.actions[i], ss.movers[i]
			s.Legal(m)
			tried := false
			if mover != viewer && rng.Float64() < change {
				var cands []games.Action
				for x := range m.All() {
					cands = append(cands, x)
				}
				c := cands[rng.IntN(len(cands))]
				t := s.Clone()
				t.Apply(c)
				if buf = infoOf(t, viewer, buf); slices.Equal(buf, want[j]) {
					s, a, tried = t, c, true
				}
			}
			if !tried {
				if !m.Has(a) {
					failed = true
					break
				}
				s.Apply(a)
				buf = infoOf(s, viewer, buf)
				failed = !slices.Equal(buf, want[j])
			}
			acts = append(acts, a)
		}
		if !failed && s.String() != o.String() {
			return s, acts, true
		}
	}
	return nil, nil, false
}

// install puts a copy of ss with the given history into the server under
// ss's id, with fresh agents (so that the seat's own analyzer starts from
// the same seed for the original and the twin): a game created as ss was,
// then given ss's id and history.
func install(t *testing.T, srv *Server, ss *session, state games.State, actions []games.Action) {
	t.Helper()
	cp, err := srv.create(createRequest{Game: ss.game.Spec(), Players: ss.specs, Seed: &ss.seed}, "leak-test")
	if err != nil {
		t.Fatal(err)
	}
	srv.games.remove(cp.id)
	cp.id, cp.client, cp.state = ss.id, ss.client, state.Clone()
	cp.actions, cp.movers = slices.Clone(actions), slices.Clone(ss.movers)
	cp.joint = nil
	if cp.state.CurrentPlayer() == games.SimultaneousPlayer {
		cp.joint = slices.Clone(ss.joint)
	}
	srv.games.mu.Lock()
	old := srv.games.games[ss.id]
	srv.games.games[ss.id] = cp
	srv.games.mu.Unlock()
	if old != nil && old != ss {
		old.mu.Lock()
		old.closeAgents()
		old.mu.Unlock()
	}
}

// timing matches the fields of analysis answers that measure time.
var timing = regexp.MustCompile(`"seconds":[-0-9.e+]+`)

// get answers a request as "status body" (time fields blanked).
func rawCall(t *testing.T, hs *httptest.Server, method, path, body string) string {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, hs.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The final snapshot and any error: the snapshots before them come
		// at times the clock decides.
		var last []string
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		ev := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev = line[7:]
			case strings.HasPrefix(line, "data: "):
				if ev == "error" || strings.Contains(line, `"final":true`) {
					last = append(last, ev+" "+timing.ReplaceAllString(line, `"seconds":0`))
				}
			}
		}
		return fmt.Sprintf("%d stream %s", resp.StatusCode, strings.Join(last, " | "))
	}
	data, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s", resp.StatusCode, timing.ReplaceAllString(string(data), `"seconds":0`))
}

// probe asks every read endpoint of game id with every view value and
// returns the answers by request; viewer is the seat at the screen.
func probe(t *testing.T, hs *httptest.Server, id string, np, viewer int) map[string]string {
	t.Helper()
	out := map[string]string{}
	base := "/api/games/" + id
	withView := func(path, v string) string {
		if v == "absent" {
			return path
		}
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		return path + sep + "view=" + neturl.QueryEscape(v)
	}
	for _, v := range viewValues {
		for _, p := range []string{base, base + "/log"} {
			out["GET "+withView(p, v)] = rawCall(t, hs, "GET", withView(p, v), "")
		}
	}
	players := []string{"null"}
	for p := range np {
		players = append(players, fmt.Sprint(p))
	}
	// Moves that are refused change nothing, and their messages (legal
	// moves, examples) must not show another seat's cards.
	// Real moves are sent for the other seats only (one of the viewer's
	// could be legal, and played).
	for _, p := range players {
		acts := []string{"", "junk"}
		if p != "null" && p != fmt.Sprint(viewer) {
			acts = append(acts, "2S@a1", "JS@b2", "tempura", "sashimi", "pudding", "chopsticks", "squid", "maki1")
		}
		for _, a := range acts {
			body := fmt.Sprintf(`{"action": %q, "player": %s}`, a, p)
			ans := rawCall(t, hs, "POST", base+"/move", body)
			if strings.HasPrefix(ans, "200 ") {
				t.Fatalf("move %s was played: %s", body, clipN(ans, 300))
			}
			out["POST "+base+"/move "+body] = ans
		}
	}
	// The analyses read no view: three values keep the test short (the
	// player to analyse, which they read, takes every value).
	for _, v := range []string{"absent", "-1", "junk"} {
		for _, an := range probeAnalyzers {
			for _, p := range players {
				body := fmt.Sprintf(`{"agent": %q, "player": %s}`, an, p)
				out["POST "+withView(base+"/analyze", v)+" "+body] = rawCall(t, hs, "POST", withView(base+"/analyze", v), body)
				q := neturl.Values{"agent": {an}}
				if p != "null" {
					q.Set("player", p)
				}
				live := withView(base+"/analyze/live?"+q.Encode(), v)
				out["GET "+live] = rawCall(t, hs, "GET", live, "")
			}
		}
	}
	return out
}

// screenSeat is the seat whose cards the server may show: the only person,
// or with several the person to move.
func screenSeat(ss *session) int {
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

// TestHiddenCardsDoNotLeak plays Sequence and Sushi Go against agents and,
// at each position, requires the same answers from every endpoint for the
// game and its re-dealt twin.
func TestHiddenCardsDoNotLeak(t *testing.T) {
	for _, r := range apiRoutes() {
		if strings.Contains(r.pattern, "/api/games") && gameEndpoints[r.pattern] == "" {
			t.Errorf("route %s: not probed for hidden cards (add it to gameEndpoints)", r.pattern)
		}
	}
	cases := []struct {
		game    string
		players []string
	}{
		{"sequence", []string{"mcts:sims=16,threads=1", "human"}},
		{"sequence:players=3", []string{"human", "random", "human"}}, // two people at one screen
		{"sushigo:players=3", []string{"human", "sushigo-greedy", "random"}},
		{"sushigo-seq:players=3", []string{"random", "human", "random"}},
		{"sushigo:players=3", []string{"human", "random", "human"}}, // two people choosing at once
	}
	for _, c := range cases {
		t.Run(c.game, func(t *testing.T) {
			srv, hs := testServer(t, Config{MaxGames: 4})
			st := create(t, hs, c.game, c.players...)
			rng := rand.New(rand.NewPCG(11, 12))
			twins := 0
			for step := 0; step < 8 && !st.Terminal; step++ {
				ss, err := srv.games.get(st.ID)
				if err != nil {
					t.Fatal(err)
				}
				ss.mu.Lock()
				viewer := screenSeat(ss)
				state, actions := ss.state.Clone(), slices.Clone(ss.actions)
				twin, twinActs, ok := redeal(ss, viewer, rng)
				ss.mu.Unlock()
				if ok {
					twins++
					install(t, srv, ss, state, actions)
					want := probe(t, hs, st.ID, len(c.players), viewer)
					install(t, srv, ss, twin, twinActs)
					got := probe(t, hs, st.ID, len(c.players), viewer)
					reqs := slices.Sorted(maps.Keys(want))
					for _, req := range reqs {
						if w, g := want[req], got[req]; g != w {
							i := 0
							for i < min(len(w), len(g)) && w[i] == g[i] {
								i++
							}
							from := max(0, i-200)
							t.Fatalf("move %d, seat %d at the screen: %s answers differently when the hidden cards are dealt again, from byte %d:\n...%s\n...%s", st.Move, viewer, req, i, clipN(w[from:], 600), clipN(g[from:], 600))
						}
					}
					install(t, srv, ss, state, actions)
				}
				// Play on: the person at the screen, else the agents.
				path := "/api/games/" + st.ID
				var moved string
				if len(st.Legal) > 0 {
					l := st.Legal[0]
					body, _ := json.Marshal(moveRequest{Action: l.Actions[step%len(l.Actions)].Text, Player: &l.Player})
					moved = rawCall(t, hs, "POST", path+"/move", string(body))
				} else {
					moved = rawCall(t, hs, "POST", path+"/agent", "")
				}
				// What a move answers is what GET shows next.
				if shown := rawCall(t, hs, "GET", path, ""); moved != shown {
					t.Fatalf("a move answers\n%s\nbut GET shows\n%s", moved, shown)
				}
				st = stateJSON{}
				if !strings.HasPrefix(moved, "200 ") || json.Unmarshal([]byte(moved[4:]), &st) != nil {
					t.Fatalf("move: %s", clipN(moved, 500))
				}
			}
			if twins < 3 {
				t.Fatalf("only %d positions could be re-dealt", twins)
			}
			t.Logf("%d positions re-dealt and probed", twins)
		})
	}
}

// TestDealsNotFromSeed: the seed is the client's to choose and shown to
// every seat, so a game in which a person plays with hidden cards must not
// deal from it (the deals could be computed before the first move); games
// between agents stay reproducible from it.
func TestDealsNotFromSeed(t *testing.T) {
	_, hs := testServer(t, Config{})
	hand := func(st stateJSON) string {
		for _, p := range st.Board.Players {
			if p.Player == st.View {
				return strings.Join(p.Hand, " ")
			}
		}
		t.Fatalf("no hand of player %d", st.View)
		return ""
	}
	a := create(t, hs, "sequence", "random", "human")
	b := create(t, hs, "sequence", "random", "human")
	if hand(a) == hand(b) {
		t.Errorf("two games with seed %d deal the person the same hand %s: the deals follow the seed", a.Seed, hand(a))
	}
	var x, y stateJSON
	call(t, hs, "GET", "/api/games/"+create(t, hs, "sequence", "random", "random").ID+"?view=1", nil, &x)
	call(t, hs, "GET", "/api/games/"+create(t, hs, "sequence", "random", "random").ID+"?view=1", nil, &y)
	if hand(x) != hand(y) {
		t.Errorf("two games between agents with one seed deal differently: %s, %s", hand(x), hand(y))
	}
}
