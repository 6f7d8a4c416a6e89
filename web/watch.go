package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/canopy-go/canopy/arena"
)

// Watching a run directory while a command writes it. The watch looks at
// the files the commands write, every Config.WatchEvery, and sends what
// changed; it needs nothing from the writing process (no coupling from
// zero, selfplay or arena to this package) and reads only through the
// run's os.Root:
//
//   - metrics.jsonl (zero, one record per iteration): lines appended
//     since the last look as "metrics" rows; a file replaced by another
//     (zero rewrites it atomically when it recomputes the rolling Elo) or
//     cut shorter is sent again whole, with reset=true.
//   - manifest.json (selfplay --out DIR), else the newest
//     selfplay/iter-NNNN/manifest.json (zero): its totals as "selfplay",
//     when the file changes (selfplay rewrites it after every shard).
//   - logs/*.json: each game log (canopy play --log) once it reads as a
//     complete log, as "game" with its result.

// watchMetricsJSON is a "metrics" event: rows as flat objects (the
// columns of flattenMetrics).
type watchMetricsJSON struct {
	Reset bool             `json:"reset"`
	Rows  []map[string]any `json:"rows"`
}

// watchSelfplayJSON is a "selfplay" event: a self-play manifest's totals.
type watchSelfplayJSON struct {
	File      string `json:"file"`
	Game      string `json:"game"`
	Games     int    `json:"games"` // requested
	Done      int    `json:"done"`  // in finished shards
	Positions int    `json:"positions"`
	Resigned  int    `json:"resigned"`
	Shards    int    `json:"shards"`
	Updated   string `json:"updated"`
}

// watchGameJSON is a "game" event: one finished game log.
type watchGameJSON struct {
	File    string    `json:"file"`
	Game    string    `json:"game"`
	Players []string  `json:"players"`
	Moves   int       `json:"moves"`
	Result  string    `json:"result"`
	Returns []float64 `json:"returns"`
}

// selfplayManifest is the part of selfplay.Manifest a watch shows.
type selfplayManifest struct {
	Format string            `json:"format"`
	Game   string            `json:"game"`
	Games  int               `json:"games"`
	Shards []json.RawMessage `json:"shards"`
	Totals struct {
		Games     int `json:"games"`
		Positions int `json:"positions"`
		Resigned  int `json:"resigned"`
	} `json:"totals"`
	Updated string `json:"updated"`
}

// Watch limits: manifests read, logs tracked, game events per look.
const (
	maxManifestBytes  = 64 << 20
	maxWatchedLogs    = 10000
	maxGamesPerUpdate = 200
)

// mark identifies a version of a file: the file itself (inode), its size
// and modification time. A zero mark is "not seen".
type mark struct {
	fi fs.FileInfo
}

func (m mark) same(fi fs.FileInfo) bool {
	return m.fi != nil && os.SameFile(m.fi, fi) && m.fi.Size() == fi.Size() && m.fi.ModTime().Equal(fi.ModTime())
}

// readWhole reports whether data is the whole of the file version fi
// (its stat when opened): a file rewritten in place (truncated, then
// written) can be stat'ed short and read whole, or the reverse, and
// marking the stat's version would read and report it again at the next
// look.
func readWhole(data []byte, fi fs.FileInfo) bool {
	return int64(len(data)) == fi.Size()
}

// runWatch is the state of one watch: what it has sent so far.
type runWatch struct {
	rd       *runDir
	logLimit int64

	metrics    mark  // metrics.jsonl as last read
	metricsOff int64 // bytes of it sent (whole lines)

	manifest     string // the manifest followed
	manifestMark mark

	logs map[string]mark // logs/*.json read, by name
}

// handleWatch streams what changes in a run directory (see runWatch):
//
//	GET /api/runs/{run}/watch
//
// Events: "metrics", "selfplay" and "game" as the files change (the
// first look sends what is there already), then "metrics" etc. as they
// grow; the stream lasts until the client goes away or the server stops.
func (s *Server) handleWatch(w http.ResponseWriter, r *http.Request) {
	rd, err := s.run(r.PathValue("run"))
	if err != nil {
		writeError(w, err)
		return
	}
	release, err := s.openStream(r)
	if err != nil {
		writeError(w, err)
		return
	}
	defer release()
	ctx, cancel := s.streamContext(r.Context())
	defer cancel()
	st := begin(w)
	rw := &runWatch{rd: rd, logLimit: s.cfg.MaxLogBody, logs: map[string]mark{}}
	tick := time.NewTicker(s.cfg.WatchEvery)
	defer tick.Stop()
	quiet := time.Now()
	for {
		sent, err := rw.look(st)
		if err != nil {
			return // the client is gone
		}
		if sent {
			quiet = time.Now()
		} else if time.Since(quiet) >= keepAlive {
			if st.comment("watching") != nil {
				return
			}
			quiet = time.Now()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// look sends what changed since the last look; it reports whether it
// sent anything, and fails only when writing to the client fails. Files
// that cannot be read (yet) are skipped until they change.
func (rw *runWatch) look(st *stream) (sent bool, err error) {
	send := func(name string, v any) {
		if err == nil {
			err = st.event(name, v)
			sent = true
		}
	}
	if v := rw.lookMetrics(); v != nil {
		send("metrics", v)
	}
	if v := rw.lookManifest(); v != nil {
		send("selfplay", v)
	}
	for _, v := range rw.lookLogs() {
		send("game", v)
	}
	return sent, err
}

// lookMetrics returns the metrics rows to send, or nil.
func (rw *runWatch) lookMetrics() *watchMetricsJSON {
	f, err := rw.rd.root.Open("metrics.jsonl")
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || rw.metrics.same(fi) {
		return nil
	}
	out := &watchMetricsJSON{Rows: []map[string]any{}}
	from := rw.metricsOff
	if rw.metrics.fi == nil || !os.SameFile(rw.metrics.fi, fi) || fi.Size() < rw.metricsOff {
		from, out.Reset = 0, true // first look, replaced or cut: everything again
	}
	if fi.Size()-from > maxMetricsBytes {
		return nil // too large to send; the table endpoint says so
	}
	data := make([]byte, fi.Size()-from)
	if _, err := f.ReadAt(data, from); err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	// Whole lines only: a line being appended waits for the next look.
	data = data[:bytes.LastIndexByte(data, '\n')+1]
	rw.metrics, rw.metricsOff = mark{fi}, from+int64(len(data))
	if len(data) == 0 && !out.Reset {
		return nil
	}
	t := flattenMetrics("", data)
	for _, row := range t.Rows {
		obj := map[string]any{}
		for i, v := range row {
			if v != nil {
				obj[t.Columns[i]] = v
			}
		}
		out.Rows = append(out.Rows, obj)
	}
	return out
}

// lookManifest returns the self-play totals to send, or nil.
func (rw *runWatch) lookManifest() *watchSelfplayJSON {
	name := "manifest.json"
	if _, err := rw.rd.root.Stat(name); err != nil {
		dirs, _ := listDirs(rw.rd.root, "selfplay", "iter-")
		if len(dirs) == 0 {
			return nil
		}
		name = "selfplay/" + dirs[len(dirs)-1] + "/manifest.json"
	}
	fi, err := rw.rd.root.Stat(name)
	if err != nil || (name == rw.manifest && rw.manifestMark.same(fi)) {
		return nil
	}
	data, read, err := readFileInfo(rw.rd.root, name, maxManifestBytes)
	if err != nil {
		return nil
	}
	if !readWhole(data, read) {
		return nil // being written: looked at again next time
	}
	rw.manifest, rw.manifestMark = name, mark{read}
	var m selfplayManifest
	if json.Unmarshal(data, &m) != nil || !strings.HasPrefix(m.Format, "canopy-selfplay/") {
		return nil
	}
	return &watchSelfplayJSON{File: name, Game: m.Game, Games: m.Games, Done: m.Totals.Games,
		Positions: m.Totals.Positions, Resigned: m.Totals.Resigned, Shards: len(m.Shards), Updated: m.Updated}
}

// lookLogs returns the game logs that are new or changed and read as
// complete logs, in name order.
func (rw *runWatch) lookLogs() []*watchGameJSON {
	names, err := listFiles(rw.rd.root, "logs", ".json")
	if err != nil {
		return nil
	}
	var out []*watchGameJSON
	for _, name := range names {
		if len(out) == maxGamesPerUpdate {
			break // the rest next time
		}
		path := "logs/" + name
		fi, err := rw.rd.root.Stat(path)
		if err != nil {
			continue
		}
		if m, ok := rw.logs[name]; ok && m.same(fi) {
			continue
		}
		if _, ok := rw.logs[name]; !ok && len(rw.logs) >= maxWatchedLogs {
			continue
		}
		data, read, err := readFileInfo(rw.rd.root, path, rw.logLimit)
		if err != nil {
			rw.logs[name] = mark{fi} // unreadable: looked at again when it changes
			continue
		}
		if !readWhole(data, read) {
			continue // being written: looked at again next time
		}
		rw.logs[name] = mark{read}
		l, final, err := arena.ReadLog(bytes.NewReader(data))
		if err != nil || !final.IsTerminal() {
			continue // being written, or not a finished game: looked at again when it changes
		}
		ret := make([]float64, final.Game().NumPlayers())
		final.Returns(ret)
		out = append(out, &watchGameJSON{File: path, Game: l.Game, Players: l.Players, Moves: len(l.Moves), Result: summary(final, nil), Returns: ret})
	}
	return out
}

// listDirs returns the directories in dir (inside root) whose names start
// with prefix, sorted. A missing dir lists nothing.
func listDirs(root *os.Root, dir, prefix string) ([]string, error) {
	f, err := root.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), prefix) && !strings.ContainsAny(e.Name(), "/\\") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}
