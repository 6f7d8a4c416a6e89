package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
)

// This file serves the replay's value graph: POST /api/replay/analyze
// analyses one position of a game log with a chosen analyzer (mcts, az,
// policy, solver, ...), under the same caps, slots and deadline as any
// analysis. The page asks for the positions one after the other and draws
// the graph as the answers come, so every request is one bounded call.

// replayAnalyzeRequest names a log (in --logs, or the log itself), an
// analyzer and a position (a frame of the replay: 0 is the start).
type replayAnalyzeRequest struct {
	Name     string          `json:"name"`
	Log      json.RawMessage `json:"log,omitempty"`
	Agent    string          `json:"agent"`
	Position int             `json:"position"`
}

// positionValueJSON is one position's analysis: the analyzer's rows (nil
// at chance nodes and at the end) and its value.
type positionValueJSON struct {
	Position int `json:"position"`
	// Player is the player to move (the analysed one), or games.ChancePlayer,
	// games.SimultaneousPlayer, games.TerminalPlayer.
	Player int `json:"player"`
	// Value is the position's value for Player (the best move's Q, or an
	// agent.Evaluator's value), in [-1, 1]; nil where there is none (a
	// chance node, a simultaneous one, no Q).
	Value *float64 `json:"value"`
	// Returns are the final returns at the end of the game.
	Returns  []float64     `json:"returns,omitempty"`
	Analysis *analysisJSON `json:"analysis,omitempty"`
}

func (s *Server) handleReplayAnalyze(w http.ResponseWriter, r *http.Request) {
	var req replayAnalyzeRequest
	if err := decodeBody(w, r, s.cfg.MaxLogBody, &req); err != nil {
		writeError(w, err)
		return
	}
	res, err := s.replayAnalyze(r.Context(), req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) replayAnalyze(ctx context.Context, req replayAnalyzeRequest) (*positionValueJSON, error) {
	req.Agent = strings.TrimSpace(req.Agent)
	if req.Agent == "" {
		return nil, errorf(http.StatusBadRequest, "name an analyzer (mcts, az, policy, solver), e.g. \"mcts:sims=2000\"")
	}
	if err := s.checkAgentSpec(req.Agent); err != nil {
		return nil, err
	}
	if string(bytes.TrimSpace(req.Log)) == "null" {
		req.Log = nil
	}
	data := []byte(req.Log)
	switch {
	case req.Name != "" && len(req.Log) > 0:
		return nil, errorf(http.StatusBadRequest, "give the log's name or the log, not both")
	case req.Name != "":
		if s.logs == nil {
			return nil, errorf(http.StatusNotFound, "no log directory (start the server with --logs DIR)")
		}
		if err := plainName(req.Name, ".json"); err != nil {
			return nil, err
		}
		var err error
		if data, err = readFile(s.logs.root, req.Name, s.cfg.MaxLogBody); err != nil {
			return nil, err
		}
	case len(req.Log) == 0:
		return nil, errorf(http.StatusBadRequest, "give a log: its name in --logs (\"name\") or the log itself (\"log\")")
	}
	l, _, err := arena.ReadLog(bytes.NewReader(data))
	if err != nil {
		return nil, badRequest(err)
	}
	g, err := games.New(l.Game) // ReadLog built it once already
	if err != nil {
		return nil, badRequest(err)
	}
	st, err := positionOf(g, l, req.Position)
	if err != nil {
		return nil, err
	}
	out := &positionValueJSON{Position: req.Position, Player: st.CurrentPlayer()}
	if st.IsTerminal() {
		out.Returns = make([]float64, g.NumPlayers())
		st.Returns(out.Returns)
		return out, nil
	}
	if out.Player < 0 {
		return out, nil // chance or simultaneous: nothing to analyse
	}
	a, err := agent.New(g, req.Agent, s.cfg.Agents.WithSeed(l.Seed))
	if err != nil {
		return nil, badRequest(err)
	}
	an, ok := a.(agent.Analyzer)
	if !ok {
		arena.CloseAgents([]agent.Agent{a})
		return nil, errorf(http.StatusBadRequest, "agent %s cannot analyse (analyzers: mcts, az, policy, solver)", clip(req.Agent))
	}
	c := &analysisCall{an: an, name: req.Agent, player: out.Player, clone: st, own: true, start: time.Now()}
	var rows []agent.Analysis
	var value *float64
	end := func() { arena.CloseAgents([]agent.Agent{a}) }
	err = s.think(ctx, "analyzer "+clip(req.Agent), func(ctx context.Context) error {
		var err error
		if rows, err = an.Analyze(ctx, c.clone, c.player); err != nil {
			return s.agentError(ctx, req.Agent, c.player, err)
		}
		if ev, ok := a.(agent.Evaluator); ok {
			v, err := ev.Evaluate(ctx, c.clone, c.player)
			if err != nil {
				return s.agentError(ctx, req.Agent, c.player, err)
			}
			value = &v
		}
		return nil
	}, end)
	if err != nil {
		if !errors.Is(err, errOverrun) { // an overrunning call closes the agent when it returns
			end()
		}
		return nil, err
	}
	end()
	out.Analysis = c.rowsJSON(rows, time.Since(c.start).Seconds())
	out.Value = value
	if out.Value == nil {
		out.Value = bestQ(rows)
	}
	return out, nil
}

// bestQ is the Q of the best row: the most visited, else (no visits) the
// highest Q; nil when no row has a Q.
func bestQ(rows []agent.Analysis) *float64 {
	best := -1
	for i, r := range rows {
		if math.IsNaN(r.Q) {
			continue
		}
		if best < 0 || r.Visits > rows[best].Visits || r.Visits == rows[best].Visits && r.Q > rows[best].Q {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	q := rows[best].Q
	return &q
}

// positionOf replays l (checked by arena.ReadLog) to frame k, counting
// frames as replayLog does: one per applied move, a simultaneous joint
// move as one.
func positionOf(g games.Game, l *arena.Log, k int) (games.State, error) {
	s := g.NewInitialState()
	frame := 0
	var joint []games.Action
	for _, m := range l.Moves {
		if frame == k {
			return s, nil
		}
		a, err := s.ParseAction(m.Action)
		if err != nil {
			return nil, badRequest(err)
		}
		if s.CurrentPlayer() == games.SimultaneousPlayer {
			joint = append(joint, a)
			if len(joint) < g.NumPlayers() {
				continue
			}
			s.(games.SimultaneousState).ApplyJoint(joint)
			joint = joint[:0]
		} else {
			s.Apply(a)
		}
		frame++
	}
	if frame == k {
		return s, nil
	}
	return nil, errorf(http.StatusBadRequest, "position %d: the log has positions 0 to %d", k, frame)
}
