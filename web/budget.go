package web

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/spec"
)

// maxSpecLen bounds game and agent spec strings in requests.
const maxSpecLen = 512

// fileOptions returns the keys of agent name's options whose values may
// name files: those its registration marks (agent.Option.File, declared
// with spec.File), so a new agent's file option is guarded without an
// edit here. An unknown agent has none; agent.New refuses it.
func fileOptions(name string) []string {
	var keys []string
	for _, r := range agent.Registered() {
		if r.Name != name {
			continue
		}
		for _, o := range r.Options {
			if o.File {
				keys = append(keys, o.Key)
			}
		}
	}
	return keys
}

// namedValues are values of file options that name no file (networks,
// evaluators, the solver's books).
var namedValues = map[string]bool{"init": true, "default": true, "rollout": true, "uniform": true, "blend": true, "none": true}

// checkAgentSpec refuses agent specs over the server's search budgets and
// specs whose options name files outside the run directories. It runs
// before agent.New, which applies the agent's own rules (unknown options,
// ranges) to what passes.
func (s *Server) checkAgentSpec(text string) error {
	if len(text) > maxSpecLen {
		return errorf(http.StatusBadRequest, "agent spec of %d bytes; the limit is %d", len(text), maxSpecLen)
	}
	sp, err := spec.Parse(text)
	if err != nil {
		return badRequest(err)
	}
	intCap := func(key string, limit int) error {
		if !sp.Has(key) {
			return nil
		}
		v := sp.String(key, "")
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil // malformed: agent.New says so
		}
		if n > float64(limit) {
			return errorf(http.StatusBadRequest, "agent %s: %s=%s is over this server's limit of %d (serve --max-sims etc.)", sp.Name, key, clip(v), limit)
		}
		return nil
	}
	for _, c := range []struct {
		key   string
		limit int
	}{{"sims", s.cfg.MaxSims}, {"nodes", s.cfg.MaxNodes}, {"threads", s.cfg.MaxThreads}, {"root", s.cfg.MaxThreads}} {
		if err := intCap(c.key, c.limit); err != nil {
			return err
		}
	}
	if sp.Has("time") {
		v := sp.String("time", "")
		if d, err := time.ParseDuration(v); err == nil && d > s.cfg.MaxTime {
			return errorf(http.StatusBadRequest, "agent %s: time=%s is over this server's limit of %v", sp.Name, clip(v), s.cfg.MaxTime)
		}
	}
	for _, key := range fileOptions(sp.Name) {
		if !sp.Has(key) {
			continue
		}
		if err := s.checkFileValue(sp.Name, key, sp.String(key, "")); err != nil {
			return err
		}
	}
	return nil
}

// checkFileValue allows a value of a file-naming option when it names no
// file (a built-in name or a shipped network) or names a file inside one
// of the run directories.
func (s *Server) checkFileValue(agentName, key, v string) error {
	if namedValues[v] {
		return nil
	}
	for _, n := range nets.Shipped() {
		if n.Name == v {
			return nil
		}
	}
	_, statErr := os.Stat(v)
	isPath := statErr == nil || strings.ContainsAny(v, `/\`) || strings.HasSuffix(v, ".safetensors")
	if !isPath {
		return nil // an unknown name: the agent says what it accepts
	}
	if s.insideRun(v) {
		return nil
	}
	return errorf(http.StatusBadRequest, "agent %s: %s=%s: this server reads files only inside the run directories given with --run", agentName, key, clip(v))
}

// insideRun reports whether path, with symlinks resolved, lies inside one
// of the run directories.
func (s *Server) insideRun(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return false
	}
	for _, r := range s.runs {
		rel, err := filepath.Rel(r.real, real)
		if err == nil && filepath.IsLocal(rel) {
			return true
		}
	}
	return false
}
