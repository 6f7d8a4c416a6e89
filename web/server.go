package web

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/search/engine"
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
	// MaxClientGames bounds the games one client (remote IP address) holds
	// at once, so that one client cannot take every MaxGames slot for the
	// idle timeout; 0 means half of MaxGames (at least 1). Behind a reverse
	// proxy every client has the proxy's address.
	MaxClientGames int
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
	// Hosts are the names (host or IP address, a port is ignored) that
	// requests may give in their Host header besides localhost, 127.0.0.1
	// and [::1]: the listen address's, and those of serve --allow-host.
	// Any other Host is refused with 421: a page on a DNS-rebinding domain
	// (evil.example resolving to 127.0.0.1) sends its own name.
	Hosts []string
	// Logf logs server events (recovered panics, expired games); nil
	// means the standard logger.
	Logf func(format string, args ...any)
	// Agents carries the services the games' agents are built with (a
	// search/engine Pool with the command's backend, so that every game
	// on one network shares its engine); New adds a pool when it has
	// none. Its seed is not used: each game has its own.
	Agents agent.Env
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
	if c.MaxClientGames <= 0 {
		c.MaxClientGames = max(1, c.MaxGames/2)
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
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	for _, h := range c.Hosts {
		if h = hostName(h); h != "" {
			hosts = append(hosts, h)
		}
	}
	c.Hosts = hosts
	return c
}

// hostName is the host of a Host header or a --allow-host value (host,
// host:port, [v6] or [v6]:port), lower case, without brackets and port.
func hostName(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	} else if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	return strings.ToLower(h)
}

// hostAllowed reports whether a request's Host header names this server
// (Config.Hosts, defaults included).
func (s *Server) hostAllowed(host string) bool {
	h := hostName(host)
	for _, ok := range s.cfg.Hosts {
		if h == ok {
			return true
		}
	}
	return false
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
	cfg.Agents = engine.WithPool(cfg.Agents)
	s := &Server{
		cfg:   cfg,
		mux:   http.NewServeMux(),
		games: newStore(cfg.MaxGames, cfg.MaxClientGames),
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
	m.HandleFunc("GET /dashboard.js", s.serveAsset("assets/dashboard.js"))
	for _, r := range apiRoutes() {
		m.HandleFunc(r.pattern, func(w http.ResponseWriter, req *http.Request) { r.handle(s, w, req) })
	}
	m.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errorf(http.StatusNotFound, "no API endpoint %s %s", r.Method, clip(r.URL.Path)))
	})
}

// route is one API endpoint: its ServeMux pattern and handler.
type route struct {
	pattern string
	handle  func(*Server, http.ResponseWriter, *http.Request)
}

// apiRoutes lists the API (see the package doc). Tests walk it to check
// that every endpoint of a game keeps hidden cards hidden.
func apiRoutes() []route {
	return []route{
		{"GET /api/catalog", (*Server).handleCatalog},
		{"POST /api/games", (*Server).handleCreate},
		{"GET /api/games/{id}", (*Server).handleGet},
		{"DELETE /api/games/{id}", (*Server).handleDelete},
		{"POST /api/games/{id}/move", (*Server).handleMove},
		{"POST /api/games/{id}/agent", (*Server).handleAgent},
		{"POST /api/games/{id}/analyze", (*Server).handleAnalyze},
		{"GET /api/games/{id}/analyze/live", (*Server).handleAnalyzeLive},
		{"POST /api/games/{id}/undo", (*Server).handleUndo},
		{"GET /api/games/{id}/log", (*Server).handleGameLog},
		{"GET /api/logs", (*Server).handleLogs},
		{"GET /api/logs/{name}", (*Server).handleLog},
		{"POST /api/replay", (*Server).handleReplay},
		{"POST /api/replay/analyze", (*Server).handleReplayAnalyze}, // values.go
		{"GET /api/runs", (*Server).handleRuns},
		{"GET /api/runs/{run}/metrics", (*Server).handleMetrics},
		{"GET /api/runs/{run}/watch", (*Server).handleWatch},
		{"GET /runs/{run}/plots/{file}", (*Server).handlePlot},
		// Dashboards (dashboard.go): charts drawn on the fly.
		{"GET /api/dashboard", (*Server).handleDashboard},
		{"GET /api/dashboard/runs/{run}/{chart}", (*Server).handleRunChart},
		{"GET /api/dashboard/logs/{chart}", (*Server).handleLogsChart},
		{"GET /api/dashboard/arena/{file}/{chart}", (*Server).handleArenaChart},
	}
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
// recovered (logged, 500); a request whose Host is not one of the
// server's names is refused (421: DNS rebinding); a request whose Origin
// names another host is refused (403); POST bodies must be JSON (415), which a cross-site form
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
		if !s.hostAllowed(r.Host) {
			// The names allowed are not listed: a rebinding page reads this.
			writeError(w, errorf(http.StatusMisdirectedRequest, "Host %q is not a name of this server (it answers to localhost, 127.0.0.1, [::1], its listen address and the names of serve --allow-host); to allow this one, start it with serve --allow-host %s", clip(r.Host), clip(hostName(r.Host))))
			return
		}
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
