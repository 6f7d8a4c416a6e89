package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// fuzzPost sends body to path on h and checks the answer is a success or
// a client error with a JSON message, never a 500 (which is how recovered
// panics and unexpected failures answer).
func fuzzPost(t testing.TB, h http.Handler, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Host = "127.0.0.1" // not httptest's example.com, which the server refuses
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code >= 500 || rec.Code == http.StatusMisdirectedRequest {
		t.Fatalf("POST %s %q: %d %s", path, body, rec.Code, rec.Body)
	}
	if rec.Code >= 400 && !strings.HasPrefix(rec.Body.String(), `{"error":`) {
		t.Fatalf("POST %s %q: %d without a JSON error: %s", path, body, rec.Code, rec.Body)
	}
	return rec
}

// FuzzCreateGame posts random bodies to POST /api/games. Agents are kept
// cheap by a low simulation cap.
func FuzzCreateGame(f *testing.F) {
	for _, seed := range []string{
		`{"game":"connect4","players":["human","mcts:sims=10"]}`,
		`{"game":"hex:size=5","players":["human","hexdist"],"seed":3}`,
		`{"game":"tetrislink:players=3","players":["human","random","random"]}`,
		`{"game":"sushigo","players":["random","human"]}`,
		`{"game":"connect4","players":["human","az:net=/etc/passwd"]}`,
		`{"game":"connect4:x=1","players":[]}`,
		`{"game":"","players":null,"seed":-1}`,
		`{"game":"tictactoe","players":["human","mcts:sims=1e9"]}`,
		`[1,2]`, `null`, `"x"`, ``, `{"game":"\u0000"}`,
	} {
		f.Add(seed)
	}
	s, err := New(Config{MaxGames: 4, MaxSims: 100, MaxNodes: 1000, MaxThreads: 2, Logf: f.Logf})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body string) {
		rec := fuzzPost(t, h, "/api/games", body)
		if rec.Code == http.StatusCreated {
			s.games.closeAll() // stay under MaxGames
		}
		if n := s.Panics(); n != 0 {
			t.Fatalf("%d handler panic(s)", n)
		}
	})
}

// FuzzMove posts random bodies to the move, agent, analyze and undo
// endpoints of a few live games.
func FuzzMove(f *testing.F) {
	for _, seed := range []string{
		`{"action":"4"}`, `{"action":"a1"}`, `{"action":"swap","player":1}`, `{"action":"9","player":-3}`,
		`{"action":""}`, `{"player":99999999999}`, `{"agent":"mcts:sims=20"}`, `{"agent":"onestep","player":0}`,
		`{"agent":"mcts:sims=9999999"}`, `{}`, ``, `{"action":"4"}{"action":"5"}`, `{"action":"` + strings.Repeat("9", 600) + `"}`,
	} {
		for ep := range uint8(4) {
			f.Add(ep, uint8(0), seed)
		}
	}
	// The solver ignores deadlines within a column and takes minutes early
	// in a game: a short timeout lets such calls overrun (504) quickly.
	s, err := New(Config{MaxGames: 8, MaxSims: 50, MaxNodes: 1000, MaxThreads: 2, MoveTimeout: 500 * time.Millisecond, Logf: f.Logf})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	specs := []createRequest{
		{Game: "connect4", Players: []string{"human", "mcts:sims=20"}},
		{Game: "hex:size=4", Players: []string{"human", "random"}},
		{Game: "sushigo:players=2", Players: []string{"human", "human"}},
		{Game: "tictactoe", Players: []string{"human", "human"}},
	}
	endpoints := []string{"move", "agent", "analyze", "undo"}
	f.Fuzz(func(t *testing.T, ep, game uint8, body string) {
		if s.games.len() == 0 { // games end; start them again
			for _, c := range specs {
				if _, err := s.create(c, "fuzz"); err != nil {
					t.Fatal(err)
				}
			}
		}
		ids := s.gameIDs()
		id := ids[int(game)%len(ids)]
		fuzzPost(t, h, "/api/games/"+id+"/"+endpoints[int(ep)%len(endpoints)], body)
		req := httptest.NewRequest("GET", "/api/games/"+id, nil)
		req.Host = "127.0.0.1"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("GET game after %q: %d %s", body, rec.Code, rec.Body)
		}
		if strings.Contains(rec.Body.String(), `"terminal":true`) {
			s.games.closeAll()
		}
		if n := s.Panics(); n != 0 {
			t.Fatalf("%d handler panic(s)", n)
		}
	})
}

// gameIDs returns the ids of the games held, sorted (for tests).
func (s *Server) gameIDs() []string {
	s.games.mu.Lock()
	defer s.games.mu.Unlock()
	var out []string
	for id := range s.games.games {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// FuzzStreamQuery sends random query strings to the live analysis and run
// watch streams: a JSON client error or a stream, never a 500. The watch
// is cut short by its request's context.
func FuzzStreamQuery(f *testing.F) {
	for _, seed := range []string{
		"agent=mcts:sims=20&every=50ms", "agent=az:net=random,sims=8", "agent=policy:net=random", "agent=random",
		"player=1", "player=-1", "player=x&every=0", "every=1h", "agent=mcts:sims=1e9", "agent=%00", "agent=solver:depth=2",
		"agent=mcts:eval=/etc/passwd", "", "every=-5s&agent=mcts",
	} {
		f.Add(seed, false)
	}
	run := f.TempDir()
	s, err := New(Config{MaxGames: 4, MaxSims: 50, MaxNodes: 1000, MaxThreads: 2, MaxTime: 100 * time.Millisecond, Runs: []string{run}, Logf: f.Logf})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	rec := fuzzPost(f, h, "/api/games", `{"game":"connect4","players":["human","human"]}`)
	id := rec.Header().Get("Location")
	f.Fuzz(func(t *testing.T, query string, watch bool) {
		path := id + "/analyze/live?" + query
		ctx, cancel := context.WithCancel(context.Background())
		if watch {
			path = "/api/runs/" + filepath.Base(run) + "/watch?" + query
			cancel() // the first look, then the end
		}
		defer cancel()
		req := httptest.NewRequest("GET", "/", nil).WithContext(ctx)
		if u, err := neturl.Parse(path); err == nil {
			req.URL = u
		} else {
			return
		}
		req.Host = "127.0.0.1"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 || rec.Code == http.StatusMisdirectedRequest || rec.Code >= 400 && !strings.HasPrefix(rec.Body.String(), `{"error":`) {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		if n := s.Panics(); n != 0 {
			t.Fatalf("%d handler panic(s)", n)
		}
	})
}
