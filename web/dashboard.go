package web

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"gonum.org/v1/plot/vg"
	"io/fs"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/plots"
)

// Dashboards: charts drawn on the fly (package plots) from the run
// directories and the --logs directory, as SVG. Every file is read through
// the directories' os.Root with the limits of the other file endpoints;
// bad input is a 4xx JSON error naming the file and line, never a 500.

// Limits of one scan of the --logs directory for the dashboards.
const (
	maxDashFiles = 2000      // *.json files read
	maxDashBytes = 256 << 20 // bytes read in all
)

// dashJSON is GET /api/dashboard: what can be drawn.
type dashJSON struct {
	Runs  []dashRun   `json:"runs"`
	Logs  []dashGame  `json:"logs"`  // game logs in --logs, by game
	Arena []dashArena `json:"arena"` // canopy arena --json results in --logs
	// Problems lists the files of --logs that were left out, one line
	// each (file:line: what is wrong).
	Problems []string `json:"problems"`
}

type dashRun struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind,omitempty"` // "zero" or "ppo"
	Game    string   `json:"game,omitempty"`
	Records int      `json:"records"`
	Charts  []string `json:"charts"` // chart names: GET /api/dashboard/runs/{name}/{chart}.svg
	Error   string   `json:"error,omitempty"`
}

type dashGame struct {
	Game   string   `json:"game"`
	Logs   int      `json:"logs"`
	Charts []string `json:"charts"` // GET /api/dashboard/logs/{chart}.svg?game=GAME
}

type dashArena struct {
	File   string   `json:"file"`
	Game   string   `json:"game"`
	Agents []string `json:"agents"`
	Charts []string `json:"charts"` // GET /api/dashboard/arena/{file}/{chart}.svg
}

func (s *Server) handleDashboard(w http.ResponseWriter, r *http.Request) {
	if !s.slot(w, r) {
		return
	}
	defer s.release()
	out := dashJSON{Runs: []dashRun{}, Logs: []dashGame{}, Arena: []dashArena{}, Problems: []string{}}
	for _, rd := range s.runs {
		d := dashRun{Name: rd.name, Charts: []string{}}
		run, err := plots.ReadRun(rd.root.FS(), rd.name)
		if err != nil {
			d.Error = oneLine(err.Error())
		} else {
			d.Kind, d.Game, d.Records = run.Kind, run.Game, run.Len()
			for _, f := range run.Figures() {
				d.Charts = append(d.Charts, f.Name)
			}
		}
		out.Runs = append(out.Runs, d)
	}
	if s.logs != nil {
		sc, err := s.scanLogs(r)
		if err != nil {
			writeError(w, err)
			return
		}
		for _, spec := range sc.games() {
			d := dashGame{Game: spec, Logs: len(sc.logs[spec]), Charts: []string{"lengths"}}
			if isSequence(spec) {
				d.Charts = append(d.Charts, "heatmap")
			}
			out.Logs = append(out.Logs, d)
		}
		for _, a := range sc.arena {
			d := dashArena{File: a.file, Game: a.res.Game, Agents: a.res.Agents, Charts: []string{}}
			for _, f := range plots.ArenaFigures(a.res) {
				d.Charts = append(d.Charts, f.Name)
			}
			out.Arena = append(out.Arena, d)
		}
		out.Problems = append(out.Problems, sc.problems...)
	}
	writeJSON(w, http.StatusOK, out)
}

// handleRunChart draws GET /api/dashboard/runs/{run}/{chart}.svg.
func (s *Server) handleRunChart(w http.ResponseWriter, r *http.Request) {
	if !s.slot(w, r) {
		return
	}
	defer s.release()
	rd, err := s.run(r.PathValue("run"))
	if err != nil {
		writeError(w, err)
		return
	}
	name, err := chartName(r.PathValue("chart"))
	if err != nil {
		writeError(w, err)
		return
	}
	run, err := plots.ReadRun(rd.root.FS(), rd.name)
	if err != nil {
		writeError(w, inputError(err))
		return
	}
	figs := run.Figures()
	if len(figs) == 0 {
		writeError(w, errorf(http.StatusNotFound, "run %s has no metrics yet", rd.name))
		return
	}
	s.writeChart(w, r, figs, name, "run "+rd.name)
}

// handleLogsChart draws GET /api/dashboard/logs/{chart}.svg?game=G[&by=seat]
// from the game logs of --logs: "lengths", or "heatmap" for Sequence. The
// game may be left out when the logs are of one game only.
func (s *Server) handleLogsChart(w http.ResponseWriter, r *http.Request) {
	if !s.slot(w, r) {
		return
	}
	defer s.release()
	if s.logs == nil {
		writeError(w, errorf(http.StatusNotFound, "no log directory (start the server with --logs DIR)"))
		return
	}
	name, err := chartName(r.PathValue("chart"))
	if err != nil {
		writeError(w, err)
		return
	}
	q := r.URL.Query()
	by, err := plots.ParseGrouping(cmp.Or(q.Get("by"), "agent"))
	if err != nil {
		writeError(w, badRequest(err))
		return
	}
	want := q.Get("game")
	if want != "" {
		g, err := games.New(want)
		if err != nil {
			writeError(w, badRequest(err))
			return
		}
		want = g.Spec()
	}
	sc, err := s.scanLogs(r)
	if err != nil {
		writeError(w, err)
		return
	}
	specs := sc.games()
	if want == "" {
		switch len(specs) {
		case 0:
			writeError(w, errorf(http.StatusNotFound, "no readable game logs in the log directory"))
			return
		case 1:
			want = specs[0]
		default:
			writeError(w, errorf(http.StatusBadRequest, "the logs are of several games (%s): choose one with ?game=", strings.Join(specs, "; ")))
			return
		}
	}
	logs := sc.logs[want]
	if len(logs) == 0 {
		writeError(w, errorf(http.StatusNotFound, "no readable logs of %s in the log directory", clip(want)))
		return
	}
	figs := []*plots.Figure{plots.LengthFigure(want, plots.GameLengths(logs, by))}
	if isSequence(want) {
		pl, err := plots.SequencePlacements(logs, by)
		if err != nil {
			writeError(w, errorf(http.StatusUnprocessableEntity, "%v", err))
			return
		}
		figs = append(figs, plots.PlacementFigure(want, pl))
	}
	s.writeChart(w, r, figs, name, "the logs of "+want)
}

// handleArenaChart draws GET /api/dashboard/arena/{file}/{chart}.svg from
// a canopy arena --json result in --logs.
func (s *Server) handleArenaChart(w http.ResponseWriter, r *http.Request) {
	if !s.slot(w, r) {
		return
	}
	defer s.release()
	if s.logs == nil {
		writeError(w, errorf(http.StatusNotFound, "no log directory (start the server with --logs DIR)"))
		return
	}
	file := r.PathValue("file")
	if err := plainName(file, ".json"); err != nil {
		writeError(w, err)
		return
	}
	name, err := chartName(r.PathValue("chart"))
	if err != nil {
		writeError(w, err)
		return
	}
	data, err := readFile(s.logs.root, file, s.cfg.MaxLogBody)
	if err != nil {
		writeError(w, err)
		return
	}
	res, err := plots.ParseArena(data, file)
	if err != nil {
		writeError(w, inputError(err))
		return
	}
	s.writeChart(w, r, plots.ArenaFigures(res), name, file)
}

// slot takes one of the MaxThinking slots for the request (replaying logs
// and drawing are CPU work like an agent's), or answers 503 and returns
// false.
func (s *Server) slot(w http.ResponseWriter, r *http.Request) bool {
	if err := s.acquire(r.Context()); err != nil {
		writeError(w, err)
		return false
	}
	return true
}

// chartName checks a {chart} path element, NAME.svg, and returns NAME.
func chartName(file string) (string, error) {
	if err := plainName(file, ".svg"); err != nil {
		return "", err
	}
	return strings.TrimSuffix(file, ".svg"), nil
}

// writeChart renders the figure called name as SVG.
func (s *Server) writeChart(w http.ResponseWriter, r *http.Request, figs []*plots.Figure, name, of string) {
	var fig *plots.Figure
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
		if f.Name == name {
			fig = f
		}
	}
	if fig == nil {
		writeError(w, errorf(http.StatusNotFound, "no chart %q for %s (there are: %s)", clip(name), clip(of), strings.Join(names, ", ")))
		return
	}
	fig, err := chartSized(fig, r)
	if err != nil {
		writeError(w, err)
		return
	}
	data, err := fig.Bytes("svg")
	if err != nil {
		writeError(w, errorf(http.StatusInternalServerError, "drawing %s: %v", name, err))
		return
	}
	writeSVG(w, data)
}

// chartSized applies the optional ?width=PX (the page's width for the
// chart, in CSS pixels, 96 to the inch; 300 to 3000) to fig: wider than
// its own, it is drawn wider at its own height (narrower, smaller in
// proportion), titles and legends laid out for that size, not scaled.
func chartSized(fig *plots.Figure, r *http.Request) (*plots.Figure, error) {
	q := r.URL.Query().Get("width")
	if q == "" {
		return fig, nil
	}
	px, err := strconv.Atoi(q)
	if err != nil || px < 300 || px > 3000 {
		return nil, errorf(http.StatusBadRequest, "width %q: want pixels from 300 to 3000", clip(q))
	}
	own := fig.Size()
	w := vg.Length(px) * vg.Inch / 96
	h := own.Height
	if w < own.Width {
		h = own.Height * w / own.Width
	}
	return fig.Resized(plots.Size{Width: w, Height: h}), nil
}

// writeSVG answers with a chart.
func writeSVG(w http.ResponseWriter, data []byte) {
	// As for the plots of runs: opened directly, the SVG runs sandboxed.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(data)
}

// inputError turns an error of package plots into a 4xx: missing files
// 404, unreadable ones 403, bad content 422.
func inputError(err error) error {
	var ie *plots.InputError
	switch {
	case errors.As(err, &ie):
		return errorf(http.StatusUnprocessableEntity, "%v", err)
	case errors.Is(err, fs.ErrNotExist):
		return errorf(http.StatusNotFound, "%v", err)
	case errors.Is(err, fs.ErrPermission):
		return errorf(http.StatusForbidden, "%v", err)
	}
	return errorf(http.StatusUnprocessableEntity, "%v", err)
}

// logScan is what the --logs directory holds for the dashboards.
type logScan struct {
	logs     map[string][]*arena.Log // by game spec
	arena    []arenaFile
	problems []string
}

type arenaFile struct {
	file string
	res  *arena.TournamentResult
}

// games returns the game specs with logs, sorted.
func (sc *logScan) games() []string {
	out := make([]string, 0, len(sc.logs))
	for g := range sc.logs {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// scanLogs reads every *.json file of --logs: arena results (objects
// with a "pairwise" table) and game logs. Files that do not parse are
// left out and named in problems.
func (s *Server) scanLogs(r *http.Request) (*logScan, error) {
	names, err := listFiles(s.logs.root, ".", ".json")
	if err != nil {
		return nil, err
	}
	if len(names) > maxDashFiles {
		return nil, errorf(http.StatusRequestEntityTooLarge, "the log directory has %d *.json files; the dashboards read at most %d", len(names), maxDashFiles)
	}
	sc := &logScan{logs: map[string][]*arena.Log{}}
	total := 0
	for _, name := range names {
		if err := r.Context().Err(); err != nil {
			return nil, errorf(http.StatusServiceUnavailable, "request cancelled")
		}
		data, err := readFile(s.logs.root, name, s.cfg.MaxLogBody)
		if err != nil {
			sc.problems = append(sc.problems, oneLine(err.Error()))
			continue
		}
		if total += len(data); total > maxDashBytes {
			return nil, errorf(http.StatusRequestEntityTooLarge, "the log directory holds over %d bytes of *.json files; the dashboards read at most that", maxDashBytes)
		}
		if isArenaResult(data) {
			res, err := plots.ParseArena(data, name)
			if err != nil {
				sc.problems = append(sc.problems, oneLine(err.Error()))
				continue
			}
			sc.arena = append(sc.arena, arenaFile{name, res})
			continue
		}
		logs, err := plots.ParseLogs(data, name)
		if err != nil {
			sc.problems = append(sc.problems, oneLine(err.Error()))
			continue
		}
		for _, l := range logs {
			g, err := games.New(l.Game) // ParseLogs replayed it: cannot fail
			if err != nil {
				continue
			}
			sc.logs[g.Spec()] = append(sc.logs[g.Spec()], l)
		}
	}
	return sc, nil
}

// isArenaResult reports whether data is one JSON object with a
// "pairwise" member (canopy arena --json), not a game log.
func isArenaResult(data []byte) bool {
	var probe map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if dec.Decode(&probe) != nil {
		return false
	}
	_, ok := probe["pairwise"]
	return ok
}

func isSequence(spec string) bool {
	name, _, _ := strings.Cut(spec, ":")
	return name == "sequence"
}
