package web

import (
	"bufio"
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

	"github.com/canopy-go/canopy/games"
)

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data string
}

// openSSE starts a GET of an event stream; the events arrive on the
// channel, which is closed when the stream ends. cancel drops the
// connection. A non-200 answer fails the test with its message.
func openSSE(t *testing.T, hs *httptest.Server, path string, header http.Header) (<-chan sseEvent, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", hs.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("GET %s: Content-Type %q, want text/event-stream", path, ct)
	}
	ch := make(chan sseEvent, 1024)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 64<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" || ev.data != "" {
					ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.name = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				ev.data += line[len("data: "):]
			}
		}
	}()
	return ch, cancel
}

// next returns the next event, failing the test when none comes within
// a generous deadline or the stream ends.
func next(t *testing.T, ch <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30s")
	}
	return sseEvent{}
}

// snapshots reads a live analysis to its end.
func snapshots(t *testing.T, ch <-chan sseEvent) (out []liveJSON, errs []string) {
	t.Helper()
	for ev := range ch {
		switch ev.name {
		case "snapshot":
			var v liveJSON
			if err := json.Unmarshal([]byte(ev.data), &v); err != nil {
				t.Fatalf("snapshot %q: %v", ev.data, err)
			}
			out = append(out, v)
		case "error":
			errs = append(errs, ev.data)
		default:
			t.Errorf("unexpected event %q", ev.name)
		}
	}
	return out, errs
}

// waitFor polls cond until it holds, failing after a generous deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s after 30s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A live analysis streams snapshots whose visits grow to the budget; the
// last is final; the principal variation is a legal line from the most
// visited move.
func TestAnalyzeLiveStream(t *testing.T) {
	// MaxThreads 2 whatever the CPU count (NumCPU follows the affinity
	// mask): the root=2,threads=2 case tests streaming, not the limit.
	s, hs := testServer(t, Config{MaxThreads: 2})
	st := create(t, hs, "connect4", "human", "human")
	for _, m := range []string{"4", "4", "3"} {
		if code, msg := call(t, hs, "POST", "/api/games/"+st.ID+"/move", moveRequest{Action: m}, nil); code != 200 {
			t.Fatalf("move %s: %d %s", m, code, msg)
		}
	}
	for _, tc := range []struct {
		agent   string
		visits  int // of the final snapshot; -1: a time budget
		minSnap int
	}{
		{"mcts:time=400ms", -1, 2},
		{"mcts:sims=3000", 3000, 1},
		{"mcts:sims=2000,root=2,threads=2", 2000, 1},
		{"az:net=random,sims=200", 200, 1},
	} {
		ch, cancel := openSSE(t, hs, "/api/games/"+st.ID+"/analyze/live?every=50ms&agent="+url(tc.agent), nil)
		snaps, errs := snapshots(t, ch)
		cancel()
		if len(errs) > 0 || len(snaps) < tc.minSnap {
			t.Fatalf("%s: %d snapshots, errors %v; want at least %d", tc.agent, len(snaps), errs, tc.minSnap)
		}
		for i, sn := range snaps {
			sum := 0
			for _, r := range sn.Rows {
				sum += r.Visits
			}
			if sum != sn.Visits || !sn.Live || sn.Final != (i == len(snaps)-1) || sn.Player != 1 || sn.Agent != tc.agent {
				t.Fatalf("%s: snapshot %d of %d: %+v", tc.agent, i, len(snaps), sn)
			}
			if i > 0 && sn.Visits <= snaps[i-1].Visits {
				t.Errorf("%s: visits do not grow: %d then %d", tc.agent, snaps[i-1].Visits, sn.Visits)
			}
		}
		last := snaps[len(snaps)-1]
		if tc.visits >= 0 && last.Visits != tc.visits {
			t.Errorf("%s: final snapshot with %d visits, want %d", tc.agent, last.Visits, tc.visits)
		}
		if len(last.Rows) != 7 || len(last.PV) < 2 || last.PV[0].Action != last.Rows[0].Action {
			t.Fatalf("%s: %d rows, PV %+v; want 7 rows and a PV from the best move %d", tc.agent, len(last.Rows), last.PV, last.Rows[0].Action)
		}
		g := games.MustNew("connect4")
		pos := g.NewInitialState()
		for _, a := range []games.Action{3, 3, 2} { // columns 4, 4, 3
			pos.Apply(a)
		}
		m := games.NewMask(g.NumActions())
		for i, mv := range last.PV {
			pos.Legal(m)
			if pos.CurrentPlayer() != mv.Player || !m.Has(games.Action(mv.Action)) || pos.ActionString(games.Action(mv.Action)) != mv.Text {
				t.Fatalf("%s: PV %+v: ply %d is not a legal move of player %d", tc.agent, last.PV, i, pos.CurrentPlayer())
			}
			pos.Apply(games.Action(mv.Action))
		}
	}
	// The policy agent has no search to watch: one final snapshot.
	ch, cancel := openSSE(t, hs, "/api/games/"+st.ID+"/analyze/live?agent=policy:net=random", nil)
	snaps, errs := snapshots(t, ch)
	cancel()
	if len(errs) > 0 || len(snaps) != 1 || !snaps[0].Final || snaps[0].Live || len(snaps[0].Rows) != 7 {
		t.Fatalf("policy: %+v, errors %v; want one final snapshot of 7 rows", snaps, errs)
	}
	if len(s.streams) != 0 || len(s.slots) != 0 {
		t.Errorf("%d stream slots and %d thinking slots still held", len(s.streams), len(s.slots))
	}
}

// Bad stream requests get JSON errors before any event: bad parameters,
// caps, unknown games, other sites, and a full server.
func TestStreamRefusals(t *testing.T) {
	run := t.TempDir()
	_, hs := testServer(t, Config{MaxStreams: 1, MaxSims: 5000, Runs: []string{run}, WatchEvery: time.Millisecond})
	st := create(t, hs, "connect4", "human", "human")
	live := "/api/games/" + st.ID + "/analyze/live"
	for _, tc := range []struct {
		path   string
		header string // Name: value
		code   int
		want   string
	}{
		{live + "?every=1ms", "", 400, "every=1ms"},
		{live + "?every=soon", "", 400, "every=soon"},
		{live + "?player=x", "", 400, "player=x"},
		{live + "?player=1", "", 400, "player 1 is not to move"},
		{live + "?agent=" + url("mcts:sims=9000"), "", 400, "over this server's limit"},
		{live + "?agent=random", "", 400, "cannot analyse"},
		{live, "", 400, "player 0 is a person"},
		{"/api/games/0123/analyze/live?agent=mcts", "", 404, "no game"},
		{"/api/runs/nosuch/watch", "", 404, "no run"},
		{live + "?agent=mcts", "Sec-Fetch-Site: cross-site", 403, "cross-site"},
		{"/api/runs/" + filepath.Base(run) + "/watch", "Sec-Fetch-Site: same-site", 403, "same-site"},
		{"/api/runs/" + filepath.Base(run) + "/watch", "Origin: http://evil.example", 403, "cross-origin"},
	} {
		req, _ := http.NewRequest("GET", hs.URL+tc.path, nil)
		if k, v, ok := strings.Cut(tc.header, ": "); ok {
			req.Header.Set(k, v)
		}
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Error string }
		err = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != tc.code || err != nil || !strings.Contains(e.Error, tc.want) {
			t.Errorf("GET %s (%s): %d %q (%v); want %d with %q", tc.path, tc.header, resp.StatusCode, e.Error, err, tc.code, tc.want)
		}
	}
	// One stream open: a second is refused until the first ends.
	_, cancel := openSSE(t, hs, "/api/runs/"+filepath.Base(run)+"/watch", http.Header{"Sec-Fetch-Site": {"same-origin"}})
	if code, msg := call(t, hs, "GET", live+"?agent=mcts:sims=10", nil, nil); code != http.StatusTooManyRequests || !strings.Contains(msg, "--max-streams") {
		t.Errorf("second stream: %d %q, want 429", code, msg)
	}
	cancel()
	waitFor(t, "able to open a stream after the first ended", func() bool {
		req, _ := http.NewRequest("GET", hs.URL+live+"?agent=mcts:sims=10", nil)
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// A client that goes away stops the search: the thinking and stream
// slots are released long before the search's budget would end, and
// the game takes moves again.
func TestAnalyzeLiveClientGone(t *testing.T) {
	s, hs := testServer(t, Config{MoveTimeout: time.Hour, MaxTime: time.Hour, MaxThinking: 1})
	st := create(t, hs, "connect4", "human", "mcts:sims=1000000,time=1h")
	ch, cancel := openSSE(t, hs, "/api/games/"+st.ID+"/analyze/live?every=50ms&player=0&agent="+url("mcts:time=1h,sims=0"), nil)
	if ev := next(t, ch); ev.name != "snapshot" {
		t.Fatalf("first event %q, want a snapshot", ev.name)
	}
	cancel()
	waitFor(t, "released after the client went away", func() bool { return len(s.slots) == 0 && len(s.streams) == 0 })
	if code, msg := call(t, hs, "POST", "/api/games/"+st.ID+"/move", moveRequest{Action: "4"}, nil); code != 200 {
		t.Errorf("move after the analysis: %d %s", code, msg)
	}
}

// A run watch sends metrics.jsonl lines as they are appended (the whole
// file again when it is replaced), the self-play manifest's totals when
// it changes, and each finished game log once.
func TestWatchRun(t *testing.T) {
	run := t.TempDir()
	_, hs := testServer(t, Config{Runs: []string{run}, WatchEvery: time.Millisecond})
	ch, cancel := openSSE(t, hs, "/api/runs/"+filepath.Base(run)+"/watch", nil)
	defer cancel()
	metrics := func(want string, reset bool, iters ...float64) {
		t.Helper()
		ev := next(t, ch)
		var v watchMetricsJSON
		if ev.name != "metrics" || json.Unmarshal([]byte(ev.data), &v) != nil || v.Reset != reset || len(v.Rows) != len(iters) {
			t.Fatalf("%s: event %s %s; want metrics rows for iterations %v, reset %v", want, ev.name, ev.data, iters, reset)
		}
		for i, it := range iters {
			if v.Rows[i]["iteration"] != it {
				t.Fatalf("%s: row %d is %v, want iteration %v", want, i, v.Rows[i], it)
			}
		}
	}
	path := filepath.Join(run, "metrics.jsonl")
	replace := func(text string) { // as zero writes it: a new file renamed over the old
		must(t, os.WriteFile(path+".tmp", []byte(text), 0o644))
		must(t, os.Rename(path+".tmp", path))
	}
	appendText := func(text string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		must(t, err)
		_, err = f.WriteString(text)
		must(t, err)
		must(t, f.Close())
	}
	replace(`{"iteration":1,"train":{"loss":2.5}}` + "\n" + `{"iteration":2,"train":{"loss":2.1}}` + "\n")
	metrics("the first look", true, 1, 2)
	appendText(`{"iteration":3,"train":{"loss":1.9}}` + "\n" + `{"iteration":4,`)
	metrics("an appended line", false, 3) // the cut line waits
	appendText(`"train":{"loss":1.7}}` + "\n")
	metrics("the completed line", false, 4)
	replace(`{"iteration":1,"elo":0}` + "\n")
	metrics("a replaced file", true, 1)

	// Self-play: zero's layout; the newest iteration is followed.
	manifest := func(dir string, done int) {
		must(t, os.MkdirAll(filepath.Join(run, dir), 0o755))
		text := fmt.Sprintf(`{"format":"canopy-selfplay/1","game":"connect4","games":64,"shards":[{},{}],"totals":{"games":%d,"positions":%d,"resigned":1},"updated":"now"}`, done, 30*done)
		must(t, os.WriteFile(filepath.Join(run, dir, "manifest.json.tmp"), []byte(text), 0o644))
		must(t, os.Rename(filepath.Join(run, dir, "manifest.json.tmp"), filepath.Join(run, dir, "manifest.json")))
	}
	selfplay := func(file string, done int) {
		t.Helper()
		ev := next(t, ch)
		var v watchSelfplayJSON
		if ev.name != "selfplay" || json.Unmarshal([]byte(ev.data), &v) != nil || v.File != file || v.Done != done || v.Positions != 30*done || v.Games != 64 || v.Shards != 2 {
			t.Fatalf("event %s %s; want selfplay %s with %d games done", ev.name, ev.data, file, done)
		}
	}
	manifest("selfplay/iter-0001", 16)
	selfplay("selfplay/iter-0001/manifest.json", 16)
	manifest("selfplay/iter-0001", 32)
	selfplay("selfplay/iter-0001/manifest.json", 32)
	manifest("selfplay/iter-0002", 8)
	selfplay("selfplay/iter-0002/manifest.json", 8)

	// Game logs: a finished tic-tac-toe game (X takes the top row); a
	// log of an unfinished game is sent once it is finished.
	must(t, os.MkdirAll(filepath.Join(run, "logs"), 0o755))
	logText := func(moves ...string) string {
		var ms []string
		for i, m := range moves {
			ms = append(ms, fmt.Sprintf(`{"player":%d,"action":%q}`, i%2, m))
		}
		return `{"game":"tictactoe","players":["a","b"],"moves":[` + strings.Join(ms, ",") + `]}`
	}
	must(t, os.WriteFile(filepath.Join(run, "logs", "b.json"), []byte(logText("1", "4", "2")), 0o644))
	must(t, os.WriteFile(filepath.Join(run, "logs", "a.json"), []byte(logText("1", "4", "2", "5", "3")), 0o644))
	game := func(file string, moves int) {
		t.Helper()
		ev := next(t, ch)
		var v watchGameJSON
		if ev.name != "game" || json.Unmarshal([]byte(ev.data), &v) != nil || v.File != file || v.Moves != moves ||
			!strings.Contains(v.Result, "player 0 wins") || len(v.Returns) != 2 || v.Returns[0] != 1 {
			t.Fatalf("event %s %s; want game %s, %d moves, won by player 0", ev.name, ev.data, file, moves)
		}
	}
	game("logs/a.json", 5)
	must(t, os.WriteFile(filepath.Join(run, "logs", "b.json"), []byte(logText("1", "4", "2", "5", "3")), 0o644))
	game("logs/b.json", 5)
	select {
	case ev := <-ch:
		t.Errorf("an event with nothing changed: %s %s", ev.name, ev.data)
	case <-time.After(50 * time.Millisecond): // 50 looks
	}
}

// A self-play run directory (selfplay --out DIR) has its manifest at the
// top.
func TestWatchSelfplayDir(t *testing.T) {
	run := t.TempDir()
	must(t, os.WriteFile(filepath.Join(run, "manifest.json"), []byte(`{"format":"canopy-selfplay/1","game":"hex:size=7","games":10,"shards":[],"totals":{"games":0}}`), 0o644))
	_, hs := testServer(t, Config{Runs: []string{run}, WatchEvery: time.Millisecond})
	ch, cancel := openSSE(t, hs, "/api/runs/"+filepath.Base(run)+"/watch", nil)
	defer cancel()
	ev := next(t, ch)
	var v watchSelfplayJSON
	if ev.name != "selfplay" || json.Unmarshal([]byte(ev.data), &v) != nil || v.File != "manifest.json" || v.Game != "hex:size=7" || v.Games != 10 {
		t.Fatalf("event %s %s; want the top manifest", ev.name, ev.data)
	}
}

// EndStreams ends open streams (as the serve command's shutdown does)
// and refuses new ones.
func TestEndStreams(t *testing.T) {
	run := t.TempDir()
	s, hs := testServer(t, Config{Runs: []string{run}})
	ch, cancel := openSSE(t, hs, "/api/runs/"+filepath.Base(run)+"/watch", nil)
	defer cancel()
	s.EndStreams()
	for range ch {
	}
	waitFor(t, "released", func() bool { return len(s.streams) == 0 })
	if code, msg := call(t, hs, "GET", "/api/runs/"+filepath.Base(run)+"/watch", nil, nil); code != http.StatusServiceUnavailable {
		t.Errorf("a stream after EndStreams: %d %q, want 503", code, msg)
	}
}
