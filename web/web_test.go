package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/all"
	_ "github.com/canopy-go/canopy/search"        // mcts
	_ "github.com/canopy-go/canopy/search/engine" // az, policy
	"github.com/canopy-go/canopy/spec"
)

// testServer returns a server with cfg (defaults filled in) behind httptest,
// and fails the test if any handler panicked by the end.
func testServer(t testing.TB, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	if cfg.Logf == nil {
		cfg.Logf = t.Logf
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		s.Close()
		if n := s.Panics(); n != 0 {
			t.Errorf("%d handler panic(s) recovered", n)
		}
	})
	return s, hs
}

// call sends a request with a JSON body (nil: none) and decodes the JSON
// answer into out (when non-nil). It returns the status and, for errors,
// the message.
func call(t testing.TB, hs *httptest.Server, method, path string, body any, out any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		switch b := body.(type) {
		case string:
			rd = strings.NewReader(b)
		default:
			data, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			rd = strings.NewReader(string(data))
		}
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
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 400 {
		var e struct{ Error string }
		if err := json.Unmarshal(data, &e); err != nil || e.Error == "" {
			t.Errorf("%s %s: status %d without a JSON error: %q", method, path, resp.StatusCode, data)
		}
		if strings.ContainsAny(e.Error, "\n\r") {
			t.Errorf("%s %s: error of more than one line: %q", method, path, e.Error)
		}
		return resp.StatusCode, e.Error
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v in %q", method, path, err, data)
		}
	}
	return resp.StatusCode, ""
}

func create(t testing.TB, hs *httptest.Server, game string, players ...string) stateJSON {
	t.Helper()
	var st stateJSON
	seed := uint64(7)
	if code, msg := call(t, hs, "POST", "/api/games", createRequest{Game: game, Players: players, Seed: &seed}, &st); code != http.StatusCreated {
		t.Fatalf("create %s %v: %d %s", game, players, code, msg)
	}
	return st
}

// TestConnect4AgainstMCTS plays a whole game by API: the person always
// takes the first legal column, mcts:sims=50 answers.
func TestConnect4AgainstMCTS(t *testing.T) {
	_, hs := testServer(t, Config{})
	st := create(t, hs, "connect4", "human", "mcts:sims=50")
	if st.Board == nil || st.Board.Kind != "connect4" || st.Board.Rows != 6 || st.Board.Cols != 7 {
		t.Fatalf("board %+v, want a 6x7 connect4 board", st.Board)
	}
	for moves := 0; !st.Terminal; moves++ {
		if moves > 42 {
			t.Fatal("game longer than 42 moves")
		}
		if len(st.Legal) != 1 || st.Legal[0].Player != 0 || st.ToMove != 0 {
			t.Fatalf("person to move: legal %+v, to_move %d", st.Legal, st.ToMove)
		}
		a := st.Legal[0].Actions[0].Text
		path := "/api/games/" + st.ID
		if code, msg := call(t, hs, "POST", path+"/move", moveRequest{Action: a}, &st); code != 200 {
			t.Fatalf("move %s: %d %s", a, code, msg)
		}
		if st.Terminal {
			break
		}
		// Not the person's turn now: a move is refused.
		if code, _ := call(t, hs, "POST", path+"/move", moveRequest{Action: a}, nil); code != http.StatusConflict {
			t.Errorf("move out of turn: status %d, want 409", code)
		}
		if code, msg := call(t, hs, "POST", path+"/agent", nil, &st); code != 200 {
			t.Fatalf("agent move: %d %s", code, msg)
		}
	}
	if len(st.Returns) != 2 || !strings.HasPrefix(st.Result, "game over") {
		t.Errorf("final state: returns %v, result %q", st.Returns, st.Result)
	}
	if code, _ := call(t, hs, "POST", "/api/games/"+st.ID+"/agent", nil, nil); code != http.StatusConflict {
		t.Errorf("agent move after the end: status %d, want 409", code)
	}
	// The game's log replays to the same end.
	var rep replayJSON
	resp, err := hs.Client().Get(hs.URL + "/api/games/" + st.ID + "/log")
	if err != nil {
		t.Fatal(err)
	}
	logData, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if code, msg := call(t, hs, "POST", "/api/replay", string(logData), &rep); code != 200 {
		t.Fatalf("replay of the game's own log: %d %s", code, msg)
	}
	if got, want := len(rep.Frames), len(st.History)+1; got != want {
		t.Errorf("replay: %d frames, want %d", got, want)
	}
	if last := rep.Frames[len(rep.Frames)-1]; !last.Terminal || last.Result != st.Result {
		t.Errorf("replay ends with %q, the game with %q", last.Result, st.Result)
	}
	// Deleting ends the game.
	if code, _ := call(t, hs, "DELETE", "/api/games/"+st.ID, nil, nil); code != http.StatusNoContent {
		t.Errorf("delete: %d", code)
	}
	if code, _ := call(t, hs, "GET", "/api/games/"+st.ID, nil, nil); code != http.StatusNotFound {
		t.Errorf("get after delete: %d, want 404", code)
	}
}

func TestBadRequests(t *testing.T) {
	_, hs := testServer(t, Config{MaxSims: 1000})
	st := create(t, hs, "connect4", "human", "random")
	game := "/api/games/" + st.ID
	tests := []struct {
		method, path string
		body         any
		code         int
		want         string // in the error message
	}{
		{"POST", "/api/games", createRequest{Game: "chess", Players: []string{"human", "human"}}, 400, "unknown game \"chess\""},
		{"POST", "/api/games", createRequest{Game: "hex:size=99", Players: []string{"human", "human"}}, 400, "size"},
		{"POST", "/api/games", createRequest{Game: "connect4", Players: []string{"human"}}, 400, "2 players"},
		{"POST", "/api/games", createRequest{Game: "connect4", Players: []string{"human", "nosuch"}}, 400, "unknown agent \"nosuch\""},
		{"POST", "/api/games", createRequest{Game: "connect4", Players: []string{"human", "mcts:bogus=1"}}, 400, "bogus"},
		{"POST", "/api/games", createRequest{Game: "connect4", Players: []string{"human", "mcts:sims=2000"}}, 400, "over this server's limit"},
		{"POST", "/api/games", createRequest{Game: "connect4", Players: []string{"human", "mcts:time=1h"}}, 400, "over this server's limit"},
		{"POST", "/api/games", createRequest{Game: "connect4", Players: []string{"human", "az:net=/etc/passwd"}}, 400, "only inside the run directories"},
		{"POST", "/api/games", createRequest{Game: "connect4", Players: []string{"human", "mcts:eval=../x.safetensors"}}, 400, "only inside the run directories"},
		{"POST", "/api/games", createRequest{Game: "tictactoe", Players: []string{"human", "solver"}}, 400, "only plays connect4"},
		{"POST", "/api/games", `{"game": "connect4", "players": ["human", "human"], "extra": 1}`, 400, "unknown field"},
		{"POST", "/api/games", `{"game": `, 400, "request body"},
		{"POST", "/api/games", `{} {}`, 400, "more than one"},
		{"POST", "/api/games", `{"game": "` + strings.Repeat("x", 100<<10) + `"}`, 413, "over"},
		{"POST", game + "/move", moveRequest{Action: "9"}, 400, "bad move \"9\""},
		{"POST", game + "/move", moveRequest{Action: ""}, 400, "give a move"},
		{"POST", game + "/move", `{"action": 4}`, 400, "request body"},
		{"POST", game + "/move", moveRequest{Action: "1", Player: ptr(1)}, 409, "agent random"},
		{"POST", game + "/move", moveRequest{Action: "1", Player: ptr(5)}, 400, "want 0..1"},
		{"POST", game + "/agent", nil, 409, "no agent is to move"},
		{"POST", game + "/analyze", nil, 400, "name an analyzer"},
		{"POST", game + "/analyze", analyzeRequest{Agent: "random"}, 400, "cannot analyse"},
		{"POST", game + "/analyze", analyzeRequest{Agent: "mcts:sims=5000"}, 400, "over this server's limit"},
		{"POST", game + "/undo", nil, 409, "nothing to undo"},
		{"GET", "/api/games/0000000000000000", nil, 404, "no game"},
		{"GET", game + "?view=7", nil, 400, "view=7"},
		{"GET", "/api/nosuch", nil, 404, "no API endpoint"},
		{"GET", "/api/logs/x.json", nil, 404, "--logs"},
		{"GET", "/api/runs/nosuch/metrics", nil, 404, "no run"},
		{"POST", "/api/replay", `{"game": "connect4", "moves": [{"player": 0, "action": "8"}]}`, 400, "bad move"},
		{"POST", "/api/replay", `{"game": "connect4", "moves": [{"player": 1, "action": "4"}]}`, 400, "player 0's turn"},
	}
	for _, tt := range tests {
		code, msg := call(t, hs, tt.method, tt.path, tt.body, nil)
		if code != tt.code || !strings.Contains(msg, tt.want) {
			body := fmt.Sprint(tt.body)
			t.Errorf("%s %s %.80s: %d %q, want %d with %q", tt.method, tt.path, body, code, msg, tt.code, tt.want)
		}
	}
	// The illegal move names the legal ones; a full column is illegal.
	game = "/api/games/" + create(t, hs, "connect4", "human", "human").ID
	for range 6 {
		if code, msg := call(t, hs, "POST", game+"/move", moveRequest{Action: "1"}, nil); code != 200 {
			t.Fatalf("move 1: %d %s", code, msg)
		}
	}
	code, msg := call(t, hs, "POST", game+"/move", moveRequest{Action: "1"}, nil)
	if code != 400 || !strings.Contains(msg, "illegal move 1") || !strings.Contains(msg, "legal: 2 3 4 5 6 7") {
		t.Errorf("full column: %d %q, want 400 naming the legal moves", code, msg)
	}
}

func ptr[T any](v T) *T { return &v }

// TestCrossSite checks the same-origin rules: a foreign Origin is refused
// and POST bodies must be JSON.
func TestCrossSite(t *testing.T) {
	_, hs := testServer(t, Config{})
	req, _ := http.NewRequest("POST", hs.URL+"/api/games", strings.NewReader(`{"game":"connect4","players":["human","human"]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "http://evil.example")
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign origin: %d, want 403", resp.StatusCode)
	}
	resp, err = hs.Client().Post(hs.URL+"/api/games", "text/plain", strings.NewReader(`{"game":"connect4","players":["human","human"]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain body: %d, want 415", resp.StatusCode)
	}
	req, _ = http.NewRequest("GET", hs.URL+"/api/catalog", nil)
	req.Header.Set("Origin", hs.URL)
	resp, err = hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("same origin: %d, want 200", resp.StatusCode)
	}
}

// TestAnalysis checks that mcts:sims=50's rows cover the legal moves and
// their visits sum to the simulations, for the seat's agent and for an
// analyzer named in the request.
func TestAnalysis(t *testing.T) {
	_, hs := testServer(t, Config{})
	st := create(t, hs, "connect4", "mcts:sims=50", "human")
	for _, req := range []analyzeRequest{{}, {Agent: "mcts:sims=50"}} {
		var an analysisJSON
		if code, msg := call(t, hs, "POST", "/api/games/"+st.ID+"/analyze", req, &an); code != 200 {
			t.Fatalf("analyze %+v: %d %s", req, code, msg)
		}
		if len(an.Rows) != 7 {
			t.Errorf("analyze %+v: %d rows, want 7", req, len(an.Rows))
		}
		sum := 0
		for _, r := range an.Rows {
			sum += r.Visits
			if r.Text != fmt.Sprint(r.Action+1) {
				t.Errorf("row %+v: text should be the column", r)
			}
		}
		if sum != 50 || an.Visits != 50 {
			t.Errorf("analyze %+v: visits sum to %d (field %d), want 50", req, sum, an.Visits)
		}
	}
	// The solver analyses too (a position near the end is fast).
	st2 := create(t, hs, "connect4", "human", "human")
	for _, a := range []string{"4", "4", "4", "4", "4", "4", "3", "3", "3", "3", "3", "3", "5", "5", "5", "5", "5"} {
		if code, msg := call(t, hs, "POST", "/api/games/"+st2.ID+"/move", moveRequest{Action: a}, nil); code != 200 {
			t.Fatalf("move %s: %d %s", a, code, msg)
		}
	}
	var an analysisJSON
	if code, msg := call(t, hs, "POST", "/api/games/"+st2.ID+"/analyze", analyzeRequest{Agent: "solver"}, &an); code != 200 {
		t.Fatalf("solver analysis: %d %s", code, msg)
	}
	if len(an.Rows) == 0 {
		t.Error("solver analysis: no rows")
	}
}

// TestEveryGamePlayable creates every registered game between random
// agents (one person seat) and plays it out by API, through the generic
// view where the game has no board of its own.
func TestEveryGamePlayable(t *testing.T) {
	_, hs := testServer(t, Config{MaxGames: 64})
	var cat catalogJSON
	call(t, hs, "GET", "/api/catalog", nil, &cat)
	if len(cat.Games) < 9 {
		t.Fatalf("catalog lists %d games", len(cat.Games))
	}
	for _, g := range cat.Games {
		t.Run(g.Name, func(t *testing.T) {
			var st0 stateJSON
			code, msg := call(t, hs, "POST", "/api/games", createRequest{Game: g.Name, Players: []string{"human", "human"}, Seed: ptr(uint64(1))}, &st0)
			if code != http.StatusCreated {
				// More than two players: fill the seats.
				n := 0
				fmt.Sscanf(msg, "players: "+g.Name+" has %d players", &n)
				if n == 0 {
					if i := strings.Index(msg, " has "); i >= 0 {
						fmt.Sscanf(msg[i:], " has %d players", &n)
					}
				}
				if n == 0 {
					t.Fatalf("create: %d %s", code, msg)
				}
				players := []string{"human"}
				for len(players) < n {
					players = append(players, "random")
				}
				st0 = create(t, hs, g.Name, players...)
			}
			st := st0
			for steps := 0; !st.Terminal; steps++ {
				if steps > 5000 {
					t.Fatal("game did not end")
				}
				path := "/api/games/" + st.ID
				if len(st.Legal) > 0 {
					l := st.Legal[steps%len(st.Legal)]
					a := l.Actions[steps%len(l.Actions)]
					if code, msg := call(t, hs, "POST", path+"/move", moveRequest{Action: a.Text, Player: &l.Player}, &st); code != 200 {
						t.Fatalf("move %q of player %d: %d %s", a.Text, l.Player, code, msg)
					}
					continue
				}
				if code, msg := call(t, hs, "POST", path+"/agent", nil, &st); code != 200 {
					t.Fatalf("agent: %d %s", code, msg)
				}
			}
			if st.Text == "" {
				t.Error("no text view")
			}
			call(t, hs, "DELETE", "/api/games/"+st.ID, nil, nil)
		})
	}
}

// TestUndo takes back a person's move and the agent's reply.
func TestUndo(t *testing.T) {
	_, hs := testServer(t, Config{})
	st := create(t, hs, "tictactoe", "human", "random")
	path := "/api/games/" + st.ID
	call(t, hs, "POST", path+"/move", moveRequest{Action: "5"}, &st)
	call(t, hs, "POST", path+"/agent", nil, &st)
	if st.Move != 2 || !st.CanUndo {
		t.Fatalf("after two moves: move %d, can_undo %v", st.Move, st.CanUndo)
	}
	if code, msg := call(t, hs, "POST", path+"/undo", nil, &st); code != 200 {
		t.Fatalf("undo: %d %s", code, msg)
	}
	if st.Move != 0 || st.CanUndo || len(st.History) != 0 || st.Board.Cells[1][1] != -1 {
		t.Errorf("after undo: move %d, can_undo %v, history %v", st.Move, st.CanUndo, st.History)
	}
}

// TestLimits: the game limit, expiry of idle games (closing their agents)
// and the agent timeout.
func TestLimits(t *testing.T) {
	s, hs := testServer(t, Config{MaxGames: 2, MaxClientGames: 2, MoveTimeout: 200 * time.Millisecond, MaxTime: time.Hour})
	a := create(t, hs, "tictactoe", "human", "human")
	create(t, hs, "tictactoe", "human", "human")
	code, msg := call(t, hs, "POST", "/api/games", createRequest{Game: "tictactoe", Players: []string{"human", "human"}}, nil)
	if code != http.StatusTooManyRequests || !strings.Contains(msg, "limit") {
		t.Errorf("third game: %d %q, want 429", code, msg)
	}
	call(t, hs, "DELETE", "/api/games/"+a.ID, nil, nil)
	b := create(t, hs, "connect4", "human", "mcts:time=10s,sims=0")
	if n := s.games.expire(time.Now().Add(-time.Hour)); n != 0 {
		t.Errorf("expired %d fresh games", n)
	}
	// A time budget over the move timeout is cut by the deadline: the
	// agent still moves, within about the timeout.
	call(t, hs, "POST", "/api/games/"+b.ID+"/move", moveRequest{Action: "4"}, nil)
	start := time.Now()
	var st stateJSON
	if code, msg := call(t, hs, "POST", "/api/games/"+b.ID+"/agent", nil, &st); code != 200 && code != http.StatusGatewayTimeout {
		t.Errorf("agent under a deadline: %d %s", code, msg)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("agent call took %v with a 200ms timeout", d)
	}
	if n := s.games.expire(time.Now().Add(time.Hour)); n != 2 {
		t.Errorf("expired %d games, want 2", n)
	}
	if n := s.games.len(); n != 0 {
		t.Errorf("%d games left after expiry", n)
	}
	if code, _ := call(t, hs, "GET", "/api/games/"+b.ID, nil, nil); code != http.StatusNotFound {
		t.Errorf("expired game: %d, want 404", code)
	}
}

// slowAgent ignores its context and takes slowFor to move, like the
// solver early in a game.
type slowAgent struct{ agent.Agent }

const slowFor = overrunGrace + time.Second

func (a slowAgent) Act(ctx context.Context, s games.State, p int) (games.Action, error) {
	time.Sleep(slowFor)
	return a.Agent.Act(ctx, s, p)
}

func init() {
	agent.Register(agent.Registration{
		Name:    "slowtest",
		Summary: "test agent: random, after sleeping through its deadline",
		New: func(g games.Game, _ *spec.Spec, env agent.Env) (agent.Agent, error) {
			seed := env.Seed
			return slowAgent{agent.NewRandom(g, seed)}, nil
		},
	})
}

// TestOverrun: an agent that overruns its deadline gets a 504; the game
// stays busy until the agent returns, and then plays on.
func TestOverrun(t *testing.T) {
	_, hs := testServer(t, Config{MoveTimeout: 50 * time.Millisecond})
	st := create(t, hs, "tictactoe", "slowtest", "human")
	path := "/api/games/" + st.ID
	start := time.Now()
	code, msg := call(t, hs, "POST", path+"/agent", nil, nil)
	if code != http.StatusGatewayTimeout || !strings.Contains(msg, "still working") {
		t.Fatalf("overrun: %d %q, want 504", code, msg)
	}
	if d := time.Since(start); d >= slowFor {
		t.Errorf("the request waited %v, the agent's whole time", d)
	}
	call(t, hs, "GET", path, nil, &st)
	if !st.Busy {
		t.Error("game not busy while the agent works")
	}
	if code, _ := call(t, hs, "POST", path+"/agent", nil, nil); code != http.StatusConflict {
		t.Errorf("second call while busy: %d, want 409", code)
	}
	time.Sleep(time.Until(start.Add(slowFor + 200*time.Millisecond)))
	call(t, hs, "GET", path, nil, &st)
	if st.Busy || st.Move != 0 {
		t.Errorf("after the agent returned: busy %v, move %d (its late move is dropped)", st.Busy, st.Move)
	}
}

// countingAgent counts its Close calls, for TestAgentsClosed.
type countingAgent struct {
	agent.Agent
	c *closeCount
}

type closeCount struct{ n int }

func (a *countingAgent) Close() error { a.c.n++; return nil }

// TestAgentsClosed checks that deleting a game closes its agents once, and
// that a busy game's agents are closed when the call returns.
func TestAgentsClosed(t *testing.T) {
	s, _ := testServer(t, Config{})
	ss, err := s.create(createRequest{Game: "tictactoe", Players: []string{"human", "random"}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	cc := &closeCount{}
	ss.agents[1] = &countingAgent{ss.agents[1], cc}
	ss.mu.Lock()
	ss.busy = true // as during an agent call
	ss.shut()
	if cc.n != 0 {
		t.Error("agents closed while busy")
	}
	ss.busy = false
	ss.closeAgents()
	ss.closeAgents()
	ss.mu.Unlock()
	if cc.n != 1 {
		t.Errorf("closed %d times, want 1", cc.n)
	}
}

// TestRuns serves a run directory and refuses every way out of it.
func TestRuns(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "myrun")
	must(t, os.MkdirAll(filepath.Join(run, "plots"), 0o755))
	must(t, os.WriteFile(filepath.Join(run, "metrics.jsonl"), []byte(`{"iteration":1,"train":{"final_loss":{"Total":2.5}},"eval":{"scores":[{"opponent":"random","score":0.9}]}}
{"iteration":2,"train":{"final_loss":{"Total":2.1}},"new":true}
not json
`), 0o644))
	must(t, os.WriteFile(filepath.Join(run, "plots", "loss.svg"), []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "secret.svg"), []byte(`secret`), 0o644))
	must(t, os.WriteFile(filepath.Join(run, "secret.txt"), []byte(`secret`), 0o644))
	must(t, os.Symlink(filepath.Join(dir, "secret.svg"), filepath.Join(run, "plots", "escape.svg")))
	must(t, os.Symlink(dir, filepath.Join(run, "plots", "up")))

	_, hs := testServer(t, Config{Runs: []string{run}})
	var runs []runJSON
	call(t, hs, "GET", "/api/runs", nil, &runs)
	if len(runs) != 1 || runs[0].Name != "myrun" || len(runs[0].Plots) != 1 || runs[0].Plots[0] != "loss.svg" {
		t.Fatalf("runs %+v, want myrun with loss.svg only", runs)
	}
	var m metricsJSON
	if code, msg := call(t, hs, "GET", "/api/runs/myrun/metrics", nil, &m); code != 200 {
		t.Fatalf("metrics: %d %s", code, msg)
	}
	if len(m.Rows) != 2 || len(m.Rows[0]) != len(m.Columns) {
		t.Fatalf("metrics: %d rows, columns %v", len(m.Rows), m.Columns)
	}
	want := map[string]bool{"iteration": true, "train.final_loss.Total": true, "eval.scores.0.score": true, "new": true}
	for _, c := range m.Columns {
		delete(want, c)
	}
	if len(want) > 0 {
		t.Errorf("metrics columns %v miss %v", m.Columns, want)
	}
	resp, err := hs.Client().Get(hs.URL + "/runs/myrun/plots/loss.svg")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(string(body), "<svg") {
		t.Errorf("loss.svg: %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	for _, p := range []string{
		"/runs/myrun/plots/escape.svg",                // symlink out of the run
		"/runs/myrun/plots/..%2F..%2Fsecret.svg",      // encoded ..
		"/runs/myrun/plots/..%2Fsecret.txt",           // not a plot, and up
		"/runs/myrun/plots/up%2Fsecret.svg",           // through a symlinked dir
		"/runs/myrun/plots/%2E%2E",                    // ..
		"/runs/myrun/plots/..%5C..%5Csecret.svg",      // backslashes
		"/runs/myrun/plots/loss.svg%00.svg",           // NUL
		"/runs/myrun/plots/nosuch.svg",                // missing
		"/runs/myrun/plots/" + url(dir+"/secret.svg"), // absolute
		"/runs/..%2F/plots/secret.svg",                // bad run
		"/runs/myrun/../secret.svg",                   // cleaned by the mux: not a plot route
		"/runs/myrun/plots/../../secret.svg",
	} {
		resp, err := hs.Client().Get(hs.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 || strings.Contains(string(body), "secret") && !strings.Contains(string(body), "error") {
			t.Errorf("GET %s: %d %q, want refused", p, resp.StatusCode, body)
		}
	}
	// An agent may load a network from inside a run, not from outside.
	s2, _ := testServer(t, Config{Runs: []string{run}})
	if err := s2.checkAgentSpec("az:net=" + filepath.Join(run, "metrics.jsonl")); err != nil {
		t.Errorf("file inside the run refused: %v", err)
	}
	if err := s2.checkAgentSpec("az:net=" + filepath.Join(run, "plots", "escape.svg")); err == nil {
		t.Error("symlink out of the run accepted as a network file")
	}
}

func url(p string) string { return strings.ReplaceAll(p, "/", "%2F") }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestLogs lists and replays the logs of the --logs directory, and
// refuses names outside it.
func TestLogs(t *testing.T) {
	dir := t.TempDir()
	log := `{"game":"tictactoe","players":["random","human"],"moves":[{"player":0,"action":"5"},{"player":1,"action":"1"},{"player":0,"action":"9"}]}`
	must(t, os.WriteFile(filepath.Join(dir, "g1.json"), []byte(log), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"game":"nosuch"}`), 0o644))
	_, hs := testServer(t, Config{Logs: dir})
	var logs []logEntry
	call(t, hs, "GET", "/api/logs", nil, &logs)
	if len(logs) != 2 || logs[1].Name != "g1.json" {
		t.Fatalf("logs %+v", logs)
	}
	var rep replayJSON
	if code, msg := call(t, hs, "GET", "/api/logs/g1.json", nil, &rep); code != 200 {
		t.Fatalf("replay: %d %s", code, msg)
	}
	if len(rep.Frames) != 4 || rep.Frames[3].Board.Cells[2][2] != 0 || rep.Moves[1] != "player 1: 1" {
		t.Errorf("replay: %d frames, moves %v", len(rep.Frames), rep.Moves)
	}
	for _, p := range []string{"/api/logs/bad.json", "/api/logs/..%2Fg1.json", "/api/logs/nosuch.json", "/api/logs/g1.txt"} {
		if code, _ := call(t, hs, "GET", p, nil, nil); code == 200 {
			t.Errorf("GET %s: 200, want refused", p)
		}
	}
}

// TestPages serves the page and its assets.
func TestPages(t *testing.T) {
	_, hs := testServer(t, Config{})
	for path, want := range map[string]string{"/": "<script src=\"/app.js\">", "/app.js": "drawConnect4", "/style.css": "svg.board"} {
		resp, err := hs.Client().Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d, body without %q", path, resp.StatusCode, want)
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:8080": true, "localhost:80": true, "[::1]:8080": true, ":8080": false, "0.0.0.0:8080": false, "192.168.1.2:80": false, "bad": false} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestClientLimit: one client (one remote IP) may hold only
// MaxClientGames of the MaxGames games, so that it cannot take every slot
// for the idle timeout; others still get theirs.
func TestClientLimit(t *testing.T) {
	s, hs := testServer(t, Config{MaxGames: 6, MaxClientGames: 2})
	a := create(t, hs, "tictactoe", "human", "human")
	create(t, hs, "tictactoe", "human", "human")
	code, msg := call(t, hs, "POST", "/api/games", createRequest{Game: "tictactoe", Players: []string{"human", "human"}}, nil)
	if code != http.StatusTooManyRequests || !strings.Contains(msg, "127.0.0.1") || !strings.Contains(msg, "--max-games-per-client") {
		t.Errorf("third game of one client: %d %q, want 429 naming the client and the flag", code, msg)
	}
	// Another client: the same handler, another remote address.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/api/games", strings.NewReader(`{"game":"tictactoe","players":["human","human"]}`))
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr = "192.0.2.7:5000"
	req.Host = "127.0.0.1"
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		t.Errorf("another client's game: %d %s", rec.Code, rec.Body)
	}
	// Ending a game frees the client's slot.
	call(t, hs, "DELETE", "/api/games/"+a.ID, nil, nil)
	create(t, hs, "tictactoe", "human", "human")
	if d := DefaultConfig(); d.withDefaults().MaxClientGames != d.MaxGames/2 {
		t.Errorf("default per-client limit %d, want half of %d", d.withDefaults().MaxClientGames, d.MaxGames)
	}
}

// Panics returns the number of handler panics recovered so far.
func (s *Server) Panics() int64 { return s.panics.Load() }

// len returns the number of games held.
func (st *store) len() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.games)
}
