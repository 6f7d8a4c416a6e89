package web

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// dirRoot is a directory named on the command line, opened as an os.Root:
// every file is opened through it, so no name can leave it ("..",
// absolute paths and symlinks that point outside all fail).
type dirRoot struct {
	path string   // as given
	real string   // absolute, symlinks resolved (for insideRun)
	root *os.Root // open for the server's lifetime
}

// runDir is a run directory served under name.
type runDir struct {
	name string
	*dirRoot
}

// openDir opens path as a dirRoot.
func openDir(path string) (*dirRoot, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", path, unwrapPath(err))
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", path, unwrapPath(err))
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", path, unwrapPath(err))
	}
	return &dirRoot{path: path, real: real, root: root}, nil
}

// openRuns opens the run directories, naming each by its base name made
// unique with -2, -3, ...
func openRuns(paths []string) ([]*runDir, error) {
	var out []*runDir
	used := map[string]bool{}
	for _, p := range paths {
		d, err := openDir(p)
		if err != nil {
			for _, r := range out {
				r.root.Close()
			}
			return nil, fmt.Errorf("--run: %v", err)
		}
		base := filepath.Base(d.real)
		name := base
		for i := 2; used[name]; i++ {
			name = base + "-" + strconv.Itoa(i)
		}
		used[name] = true
		out = append(out, &runDir{name, d})
	}
	return out, nil
}

// unwrapPath drops an *fs.PathError's operation and path, keeping the
// reason (the caller names the path).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// plainName checks that name is one file name: not empty, no separators,
// not "." or "..", no NUL, and ends with ext.
func plainName(name, ext string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") || !filepath.IsLocal(name) {
		return errorf(http.StatusBadRequest, "bad file name %q", clip(name))
	}
	if !strings.HasSuffix(name, ext) {
		return errorf(http.StatusBadRequest, "bad file name %q: want a %s file", clip(name), ext)
	}
	return nil
}

// readFile reads name inside root, refusing what is not a regular file or
// is larger than limit. Missing files are 404s.
func readFile(root *os.Root, name string, limit int64) ([]byte, error) {
	data, _, err := readFileInfo(root, name, limit)
	return data, err
}

// readFileInfo is readFile that also returns the stat of the file it
// opened, taken before reading: the version the watcher marks as read.
func readFileInfo(root *os.Root, name string, limit int64) ([]byte, fs.FileInfo, error) {
	f, err := root.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, errorf(http.StatusNotFound, "no file %s", clip(name))
		}
		return nil, nil, errorf(http.StatusForbidden, "cannot read %s: %v", clip(name), unwrapPath(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, errorf(http.StatusForbidden, "cannot read %s: %v", clip(name), unwrapPath(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, errorf(http.StatusForbidden, "%s is not a regular file", clip(name))
	}
	if fi.Size() > limit {
		return nil, nil, errorf(http.StatusRequestEntityTooLarge, "%s is %d bytes; the limit is %d", clip(name), fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, nil, errorf(http.StatusInternalServerError, "reading %s: %v", clip(name), unwrapPath(err))
	}
	if int64(len(data)) > limit {
		return nil, nil, errorf(http.StatusRequestEntityTooLarge, "%s is over the limit of %d bytes", clip(name), limit)
	}
	return data, fi, nil
}

// listFiles returns the regular files in dir (inside root) whose names end
// with ext, sorted. A missing dir lists nothing.
func listFiles(root *os.Root, dir, ext string) ([]string, error) {
	f, err := root.Open(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return []string{}, nil
		}
		return nil, errorf(http.StatusForbidden, "cannot list %s: %v", clip(dir), unwrapPath(err))
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, errorf(http.StatusForbidden, "cannot list %s: %v", clip(dir), unwrapPath(err))
	}
	out := []string{}
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ext) && plainName(e.Name(), ext) == nil {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// run returns the run directory named name.
func (s *Server) run(name string) (*runDir, error) {
	for _, r := range s.runs {
		if r.name == name {
			return r, nil
		}
	}
	return nil, errorf(http.StatusNotFound, "no run %q (this server shows the runs given with --run)", clip(name))
}

// runJSON describes one run directory.
type runJSON struct {
	Name  string   `json:"name"`
	Path  string   `json:"path"`
	Plots []string `json:"plots"` // plots/*.svg
}

func (s *Server) handleRuns(w http.ResponseWriter, r *http.Request) {
	out := make([]runJSON, 0, len(s.runs))
	for _, rd := range s.runs {
		plots, err := listFiles(rd.root, "plots", ".svg")
		if err != nil {
			plots = []string{}
		}
		out = append(out, runJSON{rd.name, rd.path, plots})
	}
	writeJSON(w, http.StatusOK, out)
}

// metricsJSON is metrics.jsonl as a table: one row per line, one column
// per scalar (nested objects flattened with dotted keys, short arrays by
// index), columns in order of first appearance.
type metricsJSON struct {
	Run     string   `json:"run"`
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

// maxMetricsBytes bounds a metrics.jsonl served.
const maxMetricsBytes = 32 << 20

// maxFlatArray is the longest array flattened by index; longer ones show
// their length.
const maxFlatArray = 8

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	rd, err := s.run(r.PathValue("run"))
	if err != nil {
		writeError(w, err)
		return
	}
	data, err := readFile(rd.root, "metrics.jsonl", maxMetricsBytes)
	if err != nil {
		var he *httpError
		if errors.As(err, &he) && he.status == http.StatusNotFound {
			writeJSON(w, http.StatusOK, metricsJSON{Run: rd.name, Columns: []string{}, Rows: [][]any{}})
			return
		}
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, flattenMetrics(rd.name, data))
}

// flattenMetrics turns JSON lines into a table. Lines that are not JSON
// objects (a line cut by a crash) are skipped.
func flattenMetrics(run string, data []byte) metricsJSON {
	out := metricsJSON{Run: run, Columns: []string{}, Rows: [][]any{}}
	index := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), maxMetricsBytes)
	for sc.Scan() {
		var v map[string]any
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		if dec.Decode(&v) != nil || v == nil {
			continue
		}
		flat := map[string]any{}
		flatten("", v, flat)
		keys := make([]string, 0, len(flat))
		for k := range flat {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, ok := index[k]; !ok {
				index[k] = len(out.Columns)
				out.Columns = append(out.Columns, k)
			}
		}
		row := make([]any, len(out.Columns))
		for k, x := range flat {
			row[index[k]] = x
		}
		out.Rows = append(out.Rows, row)
	}
	for i, row := range out.Rows { // pad rows written before later columns appeared
		for len(row) < len(out.Columns) {
			row = append(row, nil)
		}
		out.Rows[i] = row
	}
	return out
}

func flatten(prefix string, v any, dst map[string]any) {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		for k, y := range x {
			flatten(join(k), y, dst)
		}
	case []any:
		if len(x) > maxFlatArray {
			dst[prefix+".len"] = len(x)
			return
		}
		for i, y := range x {
			flatten(join(strconv.Itoa(i)), y, dst)
		}
	default:
		dst[prefix] = x
	}
}

// maxPlotBytes bounds one served plot.
const maxPlotBytes = 16 << 20

func (s *Server) handlePlot(w http.ResponseWriter, r *http.Request) {
	rd, err := s.run(r.PathValue("run"))
	if err != nil {
		writeError(w, err)
		return
	}
	name := r.PathValue("file")
	if err := plainName(name, ".svg"); err != nil {
		writeError(w, err)
		return
	}
	data, err := readFile(rd.root, "plots/"+name, maxPlotBytes)
	if err != nil {
		writeError(w, err)
		return
	}
	// An SVG may hold scripts: opened directly, it runs sandboxed with
	// nothing allowed but its own styles.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(data)
}
