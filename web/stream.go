package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
)

// Server-sent event streams (text/event-stream): live analysis and run
// watching. Each stream holds one of Config.MaxStreams slots for its
// lifetime; it ends when the client goes away (the request's context),
// when its work is done, or when the server ends its streams (EndStreams,
// Close). Events are written by the handler's goroutine only.

// streamWriteTimeout bounds the write of one event to a client that does
// not read.
const streamWriteTimeout = 10 * time.Second

// keepAlive is how often an idle stream sends a comment line, so that a
// client gone away is noticed by the failed write.
const keepAlive = 15 * time.Second

// stream is one event-stream response.
type stream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// openStream checks that r may open a stream and takes a stream slot;
// the caller must call release when done. Errors are answered as JSON
// before any event is written: 403 for a cross-site request, 429 when
// every slot is taken, 503 after EndStreams. The stream's headers go
// out with begin.
func (s *Server) openStream(r *http.Request) (release func(), err error) {
	// Browsers send Sec-Fetch-Site with every request, also with those
	// that carry no Origin (an <img> or <script> from another site);
	// streams start work, so they answer same-origin requests only.
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return nil, errorf(http.StatusForbidden, "stream request from a %s page refused", clip(site))
	}
	select {
	case <-s.streamsEnd:
		return nil, errorf(http.StatusServiceUnavailable, "the server is stopping")
	default:
	}
	select {
	case s.streams <- struct{}{}:
		return func() { <-s.streams }, nil
	default:
		return nil, errorf(http.StatusTooManyRequests, "this server already serves %d live streams (serve --max-streams); close one and retry", s.cfg.MaxStreams)
	}
}

// begin writes the stream's headers.
func begin(w http.ResponseWriter) *stream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	st := &stream{w: w, rc: http.NewResponseController(w)}
	st.rc.Flush()
	return st
}

// event writes one event whose data is v as JSON (one line).
func (st *stream) event(name string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(map[string]string{"error": "cannot encode the event: " + err.Error()})
		name = "error"
	}
	return st.write("event: " + name + "\ndata: " + string(data) + "\n\n")
}

// comment writes a comment line (ignored by clients; keeps the
// connection checked).
func (st *stream) comment(text string) error { return st.write(": " + text + "\n\n") }

func (st *stream) write(text string) error {
	st.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout)) // not every writer supports it
	if _, err := st.w.Write([]byte(text)); err != nil {
		return err
	}
	return st.rc.Flush()
}

// EndStreams ends every live stream (their handlers return soon after);
// later stream requests are refused. Call it when the HTTP server shuts
// down, whose Shutdown would otherwise wait for them. Close calls it too.
func (s *Server) EndStreams() { s.endOnce.Do(func() { close(s.streamsEnd) }) }

// streamContext returns ctx, also cancelled by EndStreams.
func (s *Server) streamContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-s.streamsEnd:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// Live analysis.

// liveAnalyzer is an Analyzer that reports its search while it runs
// (search.Agent, engine.AZ).
type liveAnalyzer interface {
	AnalyzeLive(ctx context.Context, s games.State, player int, interval time.Duration, report func(*search.Snapshot) error) error
}

// Live snapshot intervals: the default and the range of ?every=.
const (
	defaultEvery = 200 * time.Millisecond
	minEvery     = 50 * time.Millisecond
	maxEvery     = 5 * time.Second
)

// liveJSON is one snapshot of a live analysis.
type liveJSON struct {
	analysisJSON
	// PV is the principal variation (perfect-information games only).
	PV    []pvMove `json:"pv"`
	Final bool     `json:"final"`
	// Live is false for analyzers that report only their final result.
	Live bool `json:"live"`
}

type pvMove struct {
	Player int    `json:"player"`
	Action int    `json:"action"`
	Text   string `json:"text"`
}

// mailbox passes the latest snapshot from the search to the handler: a
// newer one replaces one not yet written, so a slow client never slows
// the search.
type mailbox struct {
	mu     sync.Mutex
	latest *liveJSON
	ready  chan struct{} // one token while latest is unread
}

func newMailbox() *mailbox { return &mailbox{ready: make(chan struct{}, 1)} }

func (m *mailbox) put(v *liveJSON) {
	m.mu.Lock()
	m.latest = v
	m.mu.Unlock()
	select {
	case m.ready <- struct{}{}:
	default:
	}
}

func (m *mailbox) take() *liveJSON {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := m.latest
	m.latest = nil
	return v
}

// handleAnalyzeLive streams an analysis of the position as it runs:
//
//	GET /api/games/{id}/analyze/live?agent=SPEC&player=P&every=200ms
//
// Events: "snapshot" (liveJSON), about every ?every= while the search
// runs and once with final=true; "error" ({"error"}) when the analysis
// fails. The stream ends after either. Errors before the stream starts
// are JSON answers, as for POST .../analyze.
func (s *Server) handleAnalyzeLive(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := analyzeRequest{Agent: strings.TrimSpace(q.Get("agent"))}
	if v := q.Get("player"); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil {
			writeError(w, errorf(http.StatusBadRequest, "player=%s: want a player number", clip(v)))
			return
		}
		req.Player = &p
	}
	every := defaultEvery
	if v := q.Get("every"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < minEvery || d > maxEvery {
			writeError(w, errorf(http.StatusBadRequest, "every=%s: want a duration from %v to %v, e.g. 200ms", clip(v), minEvery, maxEvery))
			return
		}
		every = d
	}
	if req.Agent != "" {
		if err := s.checkAgentSpec(req.Agent); err != nil {
			writeError(w, err)
			return
		}
	}
	release, err := s.openStream(r)
	if err != nil {
		writeError(w, err)
		return
	}
	defer release()
	ss, err := s.lookup(r)
	if err != nil {
		writeError(w, err)
		return
	}
	c, err := s.startAnalysis(ss, req)
	ss.mu.Unlock()
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := s.streamContext(r.Context())
	defer cancel()
	box := newMailbox()
	done := make(chan error, 1)
	go func() {
		done <- s.runAnalysis(ctx, ss, c, func(ctx context.Context) error { return c.live(ctx, every, box.put) })
	}()
	st := begin(w)
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-box.ready:
			if v := box.take(); v != nil && st.event("snapshot", v) != nil {
				cancel() // the client is gone: stop the search
			}
		case err := <-done:
			if v := box.take(); v != nil {
				st.event("snapshot", v)
			}
			if err != nil {
				st.event("error", map[string]string{"error": oneLine(err.Error())})
			}
			return
		case <-tick.C:
			if st.comment("searching") != nil {
				cancel()
			}
		}
	}
}

// live runs the analysis, passing snapshots to put: every interval from a
// liveAnalyzer, else one final snapshot of Analyze.
func (c *analysisCall) live(ctx context.Context, interval time.Duration, put func(*liveJSON)) error {
	la, ok := c.an.(liveAnalyzer)
	if !ok {
		rows, err := c.an.Analyze(ctx, c.clone, c.player)
		if err != nil {
			return err
		}
		put(&liveJSON{analysisJSON: *c.rowsJSON(rows, time.Since(c.start).Seconds()), PV: []pvMove{}, Final: true})
		return nil
	}
	rows := []agent.Analysis{}
	return la.AnalyzeLive(ctx, c.clone, c.player, interval, func(sn *search.Snapshot) error {
		rows = rows[:0]
		for _, x := range sn.Stats {
			rows = append(rows, agent.Analysis{Action: x.Action, Visits: x.Visits, Q: x.Q, Prior: float64(x.Prior), Score: x.AmafQ})
		}
		v := &liveJSON{analysisJSON: *c.rowsJSON(rows, time.Since(c.start).Seconds()), PV: c.pvJSON(sn.PV), Final: sn.Final, Live: true}
		put(v)
		return nil // a cancelled ctx ends the search after one more, final, snapshot
	})
}

// pvJSON names the moves of a principal variation, replaying it on a copy
// of the position. It stops at a move that is not legal where it is
// played (it is not, in a well-formed tree), at a node that is not a
// single player's decision, and shows nothing in games with hidden
// information, whose searches see sampled hidden state.
func (c *analysisCall) pvJSON(pv []games.Action) []pvMove {
	out := []pvMove{}
	g := c.clone.Game()
	if g.Type().Information != games.PerfectInformation || len(pv) == 0 {
		return out
	}
	s := c.clone.Clone()
	m := games.NewMask(g.NumActions())
	for _, a := range pv {
		p := s.CurrentPlayer()
		if s.IsTerminal() || p < 0 {
			break
		}
		s.Legal(m)
		if !m.Has(a) {
			break
		}
		out = append(out, pvMove{Player: p, Action: int(a), Text: s.ActionString(a)})
		s.Apply(a)
	}
	return out
}
