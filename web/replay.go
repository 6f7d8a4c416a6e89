package web

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
)

// replayJSON is a game log replayed into one frame per position.
type replayJSON struct {
	Game    string      `json:"game"`
	Players []string    `json:"players"`
	Seed    uint64      `json:"seed"`
	Frames  []stateJSON `json:"frames"` // frame 0: the initial position
	// Moves[i] is the text of the move(s) leading from frame i to i+1.
	Moves []string `json:"moves"`
}

// maxFrames bounds the frames of one replay (each holds a drawing).
const maxFrames = 5000

// replayLog checks a log with arena.ReadLog (every move's legality, scores
// and returns) and replays it into frames drawn for everyone.
func replayLog(data []byte) (*replayJSON, error) {
	l, _, err := arena.ReadLog(bytes.NewReader(data))
	if err != nil {
		return nil, badRequest(err)
	}
	g, err := games.New(l.Game) // ReadLog built it once already: cannot fail
	if err != nil {
		return nil, badRequest(err)
	}
	out := &replayJSON{Game: g.Spec(), Players: l.Players, Seed: l.Seed, Moves: []string{}}
	if out.Players == nil {
		out.Players = []string{}
	}
	s := g.NewInitialState()
	last := games.NoAction
	frame := func() error {
		if len(out.Frames) >= maxFrames {
			return errorf(http.StatusRequestEntityTooLarge, "the log has more than %d positions; the replay view shows at most that", maxFrames)
		}
		waiting := []int{}
		switch p := s.CurrentPlayer(); {
		case p >= 0:
			waiting = []int{p}
		case p == games.SimultaneousPlayer:
			for i := range g.NumPlayers() {
				waiting = append(waiting, i)
			}
		}
		legal := func(p int, m games.Mask) {
			if ss, ok := s.(games.SimultaneousState); ok && s.CurrentPlayer() == games.SimultaneousPlayer {
				ss.LegalFor(p, m)
				return
			}
			s.Legal(m)
		}
		out.Frames = append(out.Frames, render(s, -1, waiting, func(int) bool { return false }, legal, nil, last))
		return nil
	}
	if err := frame(); err != nil {
		return nil, err
	}
	var joint []games.Action
	var jointText string
	for _, m := range l.Moves {
		// ReadLog has checked every move; parsing again cannot fail.
		a, err := s.ParseAction(m.Action)
		if err != nil {
			return nil, badRequest(err)
		}
		if s.CurrentPlayer() == games.SimultaneousPlayer {
			joint = append(joint, a)
			jointText += fmt.Sprintf("p%d:%s ", m.Player, s.ActionString(a))
			if len(joint) < g.NumPlayers() {
				continue
			}
			s.(games.SimultaneousState).ApplyJoint(joint)
			out.Moves = append(out.Moves, jointText[:len(jointText)-1])
			joint, jointText, last = joint[:0], "", games.NoAction
		} else {
			txt := fmt.Sprintf("player %d: %s", m.Player, s.ActionString(a))
			if m.Player == games.ChancePlayer {
				txt = "chance: " + s.ActionString(a)
			}
			out.Moves = append(out.Moves, txt)
			s.Apply(a)
			last = a
		}
		if err := frame(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// logEntry is one *.json file in the --logs directory: a game log to
// replay, or (Kind "arena") the result of canopy arena --json, which the
// Dashboard draws.
type logEntry struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // "game" or "arena"
}

func (s *Server) handleLogs(w http.ResponseWriter, r *http.Request) {
	out := []logEntry{}
	if s.logs != nil {
		names, err := listFiles(s.logs.root, ".", ".json")
		if err != nil {
			writeError(w, err)
			return
		}
		for _, n := range names {
			kind := "game"
			if data, err := readFile(s.logs.root, n, s.cfg.MaxLogBody); err == nil && isArenaResult(data) {
				kind = "arena"
			}
			out = append(out, logEntry{n, kind})
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleLog(w http.ResponseWriter, r *http.Request) {
	if s.logs == nil {
		writeError(w, errorf(http.StatusNotFound, "no log directory (start the server with --logs DIR)"))
		return
	}
	name := r.PathValue("name")
	if err := plainName(name, ".json"); err != nil {
		writeError(w, err)
		return
	}
	data, err := readFile(s.logs.root, name, s.cfg.MaxLogBody)
	if err != nil {
		writeError(w, err)
		return
	}
	if isArenaResult(data) {
		writeError(w, errorf(http.StatusBadRequest, "%s is a result of canopy arena --json, not a game log: the Dashboard draws it", clip(name)))
		return
	}
	res, err := replayLog(data)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) handleReplay(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxLogBody))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			writeError(w, errorf(http.StatusRequestEntityTooLarge, "game log over %d bytes", s.cfg.MaxLogBody))
			return
		}
		writeError(w, errorf(http.StatusBadRequest, "reading the game log: %v", err))
		return
	}
	res, err := replayLog(data)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
