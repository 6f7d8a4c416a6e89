package web

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

//go:embed assets
var assets embed.FS

// Config sets the server's limits and the directories it may read. The
// zero value of a field means its default (see DefaultConfig).
type Config struct {
	// MaxGames bounds the games held at once; creating one more is refused
	// with 429 until one is deleted or expires.
	MaxGames int
	// IdleTimeout is how long a game may go without a request before it
	// is deleted (its agents closed).
	IdleTimeout time.Duration
	// MoveTimeout is the deadline of one agent call (a move or an analysis).
	MoveTimeout time.Duration
	// MaxThinking bounds the agent calls running at once, server-wide.
	MaxThinking int
	// MaxSims, MaxNodes and MaxThreads cap the sims=, nodes= and
	// threads=/root= options of agent specs; MaxTime caps time=. Specs over
	// a cap are refused with 400.
	MaxSims, MaxNodes, MaxThreads int
	MaxTime                       time.Duration
	// MaxBody bounds JSON request bodies; MaxLogBody bounds uploaded and
	// listed game logs.
	MaxBody, MaxLogBody int64
	// Runs are the run directories whose metrics and plots are served.
	// Each is served under its base name (made unique with -2, -3, ...).
	Runs []string
	// Logs is the directory whose *.json game logs can be replayed ("" for
	// none).
	Logs string
	// MaxStreams bounds the event streams (live analyses, run watches)
	// open at once; one more is refused with 429.
	MaxStreams int
	// WatchEvery is how often a run watch looks at the run's files.
	WatchEvery time.Duration
	// Logf logs server events (recovered panics, expired games); nil
	// means the standard logger.
	Logf func(format string, args ...any)
}

// DefaultConfig returns the default limits.
func DefaultConfig() Config {
	return Config{
		MaxGames:    16,
		IdleTimeout: 30 * time.Minute,
		MoveTimeout: 30 * time.Second,
		MaxThinking: max(1, runtime.GOMAXPROCS(0)),
		MaxSims:     1_000_000,
		MaxNodes:    1 << 22,
		MaxThreads:  runtime.NumCPU(),
		MaxTime:     30 * time.Second,
		MaxBody:     64 << 10,
		MaxLogBody:  16 << 20,
		MaxStreams:  8,
		WatchEvery:  500 * time.Millisecond,
	}
}

// withDefaults fills the zero fields of c from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.MaxGames <= 0 {
		c.MaxGames = d.MaxGames
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = d.IdleTimeout
	}
	if c.MoveTimeout <= 0 {
		c.MoveTimeout = d.MoveTimeout
	}
	if c.MaxThinking <= 0 {
		c.MaxThinking = d.MaxThinking
	}
	if c.MaxSims <= 0 {
		c.MaxSims = d.MaxSims
	}
	if c.MaxNodes <= 0 {
		c.MaxNodes = d.MaxNodes
	}
	if c.MaxThreads <= 0 {
		c.MaxThreads = d.MaxThreads
	}
	if c.MaxTime <= 0 {
		c.MaxTime = min(d.MaxTime, c.MoveTimeout)
	}
	if c.MaxBody <= 0 {
		c.MaxBody = d.MaxBody
	}
	if c.MaxLogBody <= 0 {
		c.MaxLogBody = d.MaxLogBody
	}
	if c.MaxStreams <= 0 {
		c.MaxStreams = d.MaxStreams
	}
	if c.WatchEvery <= 0 {
		c.WatchEvery = d.WatchEvery
	}
	if c.Logf == nil {
		c.Logf = log.Printf
	}
	return c
}

// Server is the web UI's HTTP handler and the games it holds. It is safe
// for concurrent use. Close it to close the games' agents.
type Server struct {
	cfg     Config
	mux     *http.ServeMux
	games   *store
	runs    []*runDir     // fixed after New
	logs    *dirRoot      // nil without Config.Logs
	slots   chan struct{} // one token per agent call running (MaxThinking)
	streams chan struct{} // one token per event stream open (MaxStreams)
	// streamsEnd is closed by EndStreams: every stream returns.
	streamsEnd chan struct{}
	endOnce    sync.Once
	panics     atomic.Int64 // recovered handler panics, for tests
	stop       chan struct{}
	stopped    sync.WaitGroup
	once       sync.Once
}

// New returns a server with cfg's limits. It opens the run and log
// directories (an error names the one that cannot be read) and starts the
// goroutine that expires idle games.
func New(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	s := &Server{
		cfg:   cfg,
		mux:   http.NewServeMux(),
		games: newStore(cfg.MaxGames),
		slots: make(chan struct{}, cfg.MaxThinking),
		stop:  make(chan struct{}),

		streams:    make(chan struct{}, cfg.MaxStreams),
		streamsEnd: make(chan struct{}),
	}
	var err error
	if s.runs, err = openRuns(cfg.Runs); err != nil {
		return nil, err
	}
	if cfg.Logs != "" {
		if s.logs, err = openDir(cfg.Logs); err != nil {
			s.closeRoots()
			return nil, fmt.Errorf("--logs: %v", err)
		}
	}
	s.routes()
	s.stopped.Add(1)
	go s.expireLoop()
	return s, nil
}

// Close deletes every game (closing its agents, or marking them to be
// closed when the call in flight returns) and stops the expiry goroutine.
// It is safe to call more than once. Call it after http.Server.Shutdown.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.EndStreams()
		close(s.stop)
		s.stopped.Wait()
		s.games.closeAll()
		s.closeRoots()
	})
	return nil
}

func (s *Server) closeRoots() {
	for _, r := range s.runs {
		r.root.Close()
	}
	if s.logs != nil {
		s.logs.root.Close()
	}
}

// Handler returns the server's HTTP handler (routes behind the recover
// and same-origin middleware).
func (s *Server) Handler() http.Handler { return s.guard(s.mux) }

// Panics returns the number of handler panics recovered so far.
func (s *Server) Panics() int64 { return s.panics.Load() }

func (s *Server) expireLoop() {
	defer s.stopped.Done()
	t := time.NewTicker(max(s.cfg.IdleTimeout/8, time.Second))
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			if n := s.games.expire(now.Add(-s.cfg.IdleTimeout)); n > 0 {
				s.cfg.Logf("web: %d idle game(s) expired", n)
			}
		}
	}
}

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /{$}", s.serveAsset("assets/index.html"))
	m.HandleFunc("GET /app.js", s.serveAsset("assets/app.js"))
	m.HandleFunc("GET /style.css", s.serveAsset("assets/style.css"))
	m.HandleFunc("GET /api/catalog", s.handleCatalog)
	m.HandleFunc("POST /api/games", s.handleCreate)
	m.HandleFunc("GET /api/games/{id}", s.handleGet)
	m.HandleFunc("DELETE /api/games/{id}", s.handleDelete)
	m.HandleFunc("POST /api/games/{id}/move", s.handleMove)
	m.HandleFunc("POST /api/games/{id}/agent", s.handleAgent)
	m.HandleFunc("POST /api/games/{id}/analyze", s.handleAnalyze)
	m.HandleFunc("GET /api/games/{id}/analyze/live", s.handleAnalyzeLive)
	m.HandleFunc("POST /api/games/{id}/undo", s.handleUndo)
	m.HandleFunc("GET /api/games/{id}/log", s.handleGameLog)
	m.HandleFunc("GET /api/logs", s.handleLogs)
	m.HandleFunc("GET /api/logs/{name}", s.handleLog)
	m.HandleFunc("POST /api/replay", s.handleReplay)
	m.HandleFunc("POST /api/replay/analyze", s.handleReplayAnalyze) // values.go
	m.HandleFunc("GET /api/runs", s.handleRuns)
	m.HandleFunc("GET /api/runs/{run}/metrics", s.handleMetrics)
	m.HandleFunc("GET /api/runs/{run}/watch", s.handleWatch)
	m.HandleFunc("GET /runs/{run}/plots/{file}", s.handlePlot)
	// Dashboards (dashboard.go): charts drawn on the fly.
	m.HandleFunc("GET /dashboard.js", s.serveAsset("assets/dashboard.js"))
	m.HandleFunc("GET /api/dashboard", s.handleDashboard)
	m.HandleFunc("GET /api/dashboard/runs/{run}/{chart}", s.handleRunChart)
	m.HandleFunc("GET /api/dashboard/logs/{chart}", s.handleLogsChart)
	m.HandleFunc("GET /api/dashboard/arena/{file}/{chart}", s.handleArenaChart)
	m.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errorf(http.StatusNotFound, "no API endpoint %s %s", r.Method, clip(r.URL.Path)))
	})
}

// serveAsset serves one embedded file.
func (s *Server) serveAsset(name string) http.HandlerFunc {
	data, err := fs.ReadFile(assets, name)
	if err != nil {
		panic("web: missing embedded asset " + name) // a build error
	}
	ctype := "text/html; charset=utf-8"
	switch {
	case strings.HasSuffix(name, ".js"):
		ctype = "text/javascript; charset=utf-8"
	case strings.HasSuffix(name, ".css"):
		ctype = "text/css; charset=utf-8"
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(data)
	}
}

// guard wraps h with the checks every request passes: panics are
// recovered (logged, 500); a request whose Origin names another host is
// refused (403); POST bodies must be JSON (415), which a cross-site form
// cannot send without a preflight this server never answers; security
// headers are set.
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.panics.Add(1)
				s.cfg.Logf("web: panic serving %s %s: %v\n%s", r.Method, clip(r.URL.Path), v, debug.Stack())
				writeError(w, errorf(http.StatusInternalServerError, "internal error (a bug in Canopy; the server log has the details)"))
			}
		}()
		hdr := w.Header()
		hdr.Set("X-Content-Type-Options", "nosniff")
		hdr.Set("X-Frame-Options", "DENY")
		hdr.Set("Referrer-Policy", "no-referrer")
		hdr.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
			writeError(w, errorf(http.StatusForbidden, "cross-origin request from %s refused", clip(o)))
			return
		}
		if r.Method == http.MethodPost {
			ct := r.Header.Get("Content-Type")
			if i := strings.IndexByte(ct, ';'); i >= 0 {
				ct = ct[:i]
			}
			if strings.TrimSpace(strings.ToLower(ct)) != "application/json" {
				writeError(w, errorf(http.StatusUnsupportedMediaType, "POST bodies must be JSON (Content-Type: application/json)"))
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether the Origin header names host (host[:port]).
func sameOrigin(origin, host string) bool {
	i := strings.Index(origin, "://")
	if i < 0 {
		return false
	}
	return strings.EqualFold(origin[i+3:], host)
}

// httpError is an error with the status to answer it with.
type httpError struct {
	status int
	msg    string
	err    error // wrapped, for errors.Is; may be nil
}

func (e *httpError) Error() string { return e.msg }
func (e *httpError) Unwrap() error { return e.err }

// errorf returns an *httpError with a one-line message.
func errorf(status int, format string, args ...any) error {
	return &httpError{status: status, msg: oneLine(fmt.Sprintf(format, args...))}
}

// badRequest wraps err (from games.New, agent.New, ParseAction...) as a 400.
func badRequest(err error) error {
	return &httpError{status: http.StatusBadRequest, msg: oneLine(err.Error()), err: err}
}

// writeError answers err as JSON {"error": msg} with its status (500 for
// errors that are not *httpError).
func writeError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var he *httpError
	if errors.As(err, &he) {
		status = he.status
	}
	writeJSON(w, status, map[string]string{"error": oneLine(err.Error())})
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data = []byte(`{"error":"cannot encode the response"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(data)
	w.Write([]byte{'\n'})
}

// decodeBody decodes r's JSON body into v: one object, no unknown
// fields, at most limit bytes. An empty body leaves v as it is.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	body := http.MaxBytesReader(w, r.Body, limit)
	data, err := io.ReadAll(body)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return errorf(http.StatusRequestEntityTooLarge, "request body over %d bytes", limit)
		}
		return errorf(http.StatusBadRequest, "reading the request body: %v", err)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errorf(http.StatusBadRequest, "request body: %v", err)
	}
	if dec.More() {
		return errorf(http.StatusBadRequest, "request body: more than one JSON value")
	}
	return nil
}

// maxMessage bounds error messages, which may quote user input.
const maxMessage = 400

// oneLine joins msg's lines and clips it to maxMessage bytes at a rune
// boundary.
func oneLine(msg string) string {
	msg = strings.Join(strings.FieldsFunc(msg, func(r rune) bool { return r == '\n' || r == '\r' }), " ")
	return clipN(msg, maxMessage)
}

// clip shortens user input quoted in messages.
func clip(s string) string { return clipN(s, 80) }

func clipN(s string, n int) string {
	if len(s) <= n {
		return strings.ToValidUTF8(s, "?")
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.ToValidUTF8(s[:n], "?") + "..."
}

// IsLoopback reports whether addr (host:port, as for net.Listen) binds
// only loopback interfaces. An empty host binds every interface.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// acquire takes one of the MaxThinking agent slots, waiting for ctx.
func (s *Server) acquire(ctx context.Context) error {
	select {
	case s.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return errorf(http.StatusServiceUnavailable, "the server is busy with other agents; try again")
	}
}

func (s *Server) release() { <-s.slots }
