package fleet

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/canopy-go/canopy/selfplay"
)

// Game is one finished self-play game as a worker sends it: the record,
// what it was played for and by whom.
type Game struct {
	Run           string // the run's id (Job.Run)
	Iteration     int    // the iteration whose self-play it is
	NetworkSHA256 string // the network that played it
	// Semantics is the selfplay.Semantics of the worker's build: the
	// trainer drops a game whose semantics is not the job's.
	Semantics int
	Origin    Origin
	Record    *selfplay.GameRecord
}

// Origin says who played a game.
type Origin struct {
	Worker  string `json:"worker,omitempty"`  // the worker's name (WorkerOptions.Ident: host/pid by default)
	Backend string `json:"backend,omitempty"` // its backend, as it opened (nets.OpenBackendSpec's choice)
	Build   string `json:"build,omitempty"`   // its build: module version and VCS revision
}

// gameMagic starts every game message; the digit is the format version.
const gameMagic = "CNPYGAM1"

// Bounds DecodeGame enforces, so that a message cannot make it allocate
// more than its own size implies.
const (
	maxHeader    = 64 << 10
	maxPositions = 1 << 22
	maxWidth     = 1 << 20 // observation size or action count
	maxPlayers   = 64
)

// gameHeader is the JSON part of a game message; the arrays follow it.
type gameHeader struct {
	Run           string    `json:"run"`
	Iteration     int       `json:"iteration"`
	NetworkSHA256 string    `json:"network_sha256"`
	Semantics     int       `json:"semantics"`
	Origin        Origin    `json:"origin"`
	ID            int       `json:"id"`
	Positions     int       `json:"positions"`
	Obs           int       `json:"obs"`     // observation size
	Actions       int       `json:"actions"` // policy and legal row width
	Returns       []float64 `json:"returns"`
	Resigned      bool      `json:"resigned,omitempty"`
	ResignOffGame bool      `json:"resign_off_game,omitempty"`
	FalseResign   bool      `json:"false_resign,omitempty"`
	Nodes         int64     `json:"nodes"`
	// Values and RootValues are the row widths (the players) of the
	// record's per-player arrays of the same names, 0 when absent (games
	// of fewer than three players).
	Values     int `json:"values,omitempty"`
	RootValues int `json:"root_values,omitempty"`
}

// rowWidth is the width of a per-position array of n entries over p
// positions: 0 when empty, -1 when n is not a whole number of rows.
func rowWidth(n, p int) int {
	switch {
	case n == 0:
		return 0
	case p == 0 || n%p != 0:
		return -1
	}
	return n / p
}

// EncodeGame appends g's message to dst: the magic, a little-endian
// uint32 header length, the JSON header, then the arrays obs, policy
// (float32), legal (uint8), value, root_q (float32) and ply (int32) of
// the record, little-endian, back to back, followed in games of three or
// more players by values and root_values (float32, positions x players,
// when the record has them). obs is the record's
// observation size (len(Obs)/Positions, which an empty game cannot
// tell).
func EncodeGame(dst []byte, g *Game, obs int) ([]byte, error) {
	r := g.Record
	p := r.Positions()
	actions := 0
	if p > 0 {
		actions = len(r.Policy) / p
	}
	switch {
	case obs < 1 || obs > maxWidth:
		return nil, fmt.Errorf("fleet: observation size %d, want 1..%d", obs, maxWidth)
	case len(r.Obs) != p*obs || len(r.Policy) != p*actions || len(r.Legal) != p*actions ||
		len(r.RootQ) != p || len(r.Ply) != p:
		return nil, fmt.Errorf("fleet: game %d has arrays of inconsistent lengths (%d positions)", r.ID, p)
	case p > maxPositions || actions > maxWidth || len(r.Returns) > maxPlayers:
		return nil, fmt.Errorf("fleet: game %d is too large to send (%d positions, %d actions)", r.ID, p, actions)
	}
	vw, rw := rowWidth(len(r.Values), p), rowWidth(len(r.RootValues), p)
	if vw < 0 || rw < 0 || vw > maxPlayers || rw > maxPlayers {
		return nil, fmt.Errorf("fleet: game %d has %d per-player values and %d root values for %d positions", r.ID, len(r.Values), len(r.RootValues), p)
	}
	h, err := json.Marshal(gameHeader{Run: g.Run, Iteration: g.Iteration, NetworkSHA256: g.NetworkSHA256,
		Semantics: g.Semantics, Origin: g.Origin, ID: r.ID, Positions: p, Obs: obs, Actions: actions, Returns: r.Returns, Resigned: r.Resigned,
		ResignOffGame: r.ResignOffGame, FalseResign: r.FalseResign, Nodes: r.Nodes, Values: vw, RootValues: rw})
	if err != nil {
		return nil, err
	}
	dst = append(dst, gameMagic...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(h)))
	dst = append(dst, h...)
	for _, a := range []any{r.Obs, r.Policy, r.Legal, r.Value, r.RootQ, r.Ply, r.Values, r.RootValues} {
		if dst, err = binary.Append(dst, binary.LittleEndian, a); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// DecodeGame parses a message EncodeGame wrote. It checks the magic, the
// header and that the message is exactly as long as the header says; the
// record's arrays are fresh slices.
func DecodeGame(data []byte) (*Game, error) {
	if len(data) < len(gameMagic)+4 || string(data[:len(gameMagic)]) != gameMagic {
		return nil, errors.New("fleet: not a game message (bad magic); are the trainer and the workers the same version?")
	}
	data = data[len(gameMagic):]
	n := int64(binary.LittleEndian.Uint32(data))
	data = data[4:]
	if n > maxHeader || n > int64(len(data)) {
		return nil, fmt.Errorf("fleet: game message header of %d bytes, message of %d", n, len(data))
	}
	var h gameHeader
	if err := json.Unmarshal(data[:n], &h); err != nil {
		return nil, fmt.Errorf("fleet: game message header: %v", err)
	}
	data = data[n:]
	switch {
	case h.Positions < 0 || h.Positions > maxPositions || h.Obs < 1 || h.Obs > maxWidth ||
		h.Actions < 0 || h.Actions > maxWidth || (h.Positions > 0 && h.Actions < 1):
		return nil, fmt.Errorf("fleet: game message header claims %d positions, observation size %d, %d actions", h.Positions, h.Obs, h.Actions)
	case len(h.Returns) > maxPlayers || h.ID < 0 || h.Iteration < 0:
		return nil, fmt.Errorf("fleet: game message header has %d returns, id %d, iteration %d", len(h.Returns), h.ID, h.Iteration)
	case h.Values < 0 || h.Values > maxPlayers || h.RootValues < 0 || h.RootValues > maxPlayers:
		return nil, fmt.Errorf("fleet: game message header claims rows of %d values and %d root values", h.Values, h.RootValues)
	}
	p := int64(h.Positions)
	want := 4*p*int64(h.Obs) + 4*p*int64(h.Actions) + p*int64(h.Actions) + 4*p + 4*p + 4*p + 4*p*int64(h.Values) + 4*p*int64(h.RootValues)
	if int64(len(data)) != want {
		return nil, fmt.Errorf("fleet: game message body of %d bytes, its header implies %d", len(data), want)
	}
	r := &selfplay.GameRecord{ID: h.ID, Returns: h.Returns, Resigned: h.Resigned, ResignOffGame: h.ResignOffGame,
		FalseResign: h.FalseResign, Nodes: h.Nodes,
		Obs: make([]float32, p*int64(h.Obs)), Policy: make([]float32, p*int64(h.Actions)), Legal: make([]uint8, p*int64(h.Actions)),
		Value: make([]float32, p), RootQ: make([]float32, p), Ply: make([]int32, p)}
	if r.Returns == nil {
		r.Returns = []float64{}
	}
	if h.Values > 0 && p > 0 {
		r.Values = make([]float32, p*int64(h.Values))
	}
	if h.RootValues > 0 && p > 0 {
		r.RootValues = make([]float32, p*int64(h.RootValues))
	}
	for _, a := range []any{r.Obs, r.Policy, r.Legal, r.Value, r.RootQ, r.Ply, r.Values, r.RootValues} {
		k, err := binary.Decode(data, binary.LittleEndian, a)
		if err != nil {
			return nil, fmt.Errorf("fleet: game message body: %v", err)
		}
		data = data[k:]
	}
	return &Game{Run: h.Run, Iteration: h.Iteration, NetworkSHA256: h.NetworkSHA256, Semantics: h.Semantics,
		Origin: h.Origin, Record: r}, nil
}

// A game too large for one message (the server's max_payload) travels as
// an object in the object store N-large and a reference to it on the
// games subject: refMagic, then the JSON of a gameRef. The object holds
// the game's EncodeGame message.
const refMagic = "CNPYREF1"

// gameRef is a reference to a game in N-large. Its first fields repeat
// the game's header, so that the trainer can drop a stale or duplicate
// game without fetching it.
type gameRef struct {
	Run           string `json:"run"`
	Iteration     int    `json:"iteration"`
	NetworkSHA256 string `json:"network_sha256"`
	Semantics     int    `json:"semantics"`
	Origin        Origin `json:"origin"`
	ID            int    `json:"id"`
	Object        string `json:"object"` // the object's name in N-large
	Size          int64  `json:"size"`   // its length in bytes
	SHA256        string `json:"sha256"` // of its bytes
}

// A task a worker gave up on (it failed on maxDeliveries deliveries)
// is reported on the games subject: failMagic, then the JSON of a
// taskFailure. The trainer logs it and queues the task again.
const failMagic = "CNPYFAI1"

type taskFailure struct {
	Run        string `json:"run"`
	Iteration  int    `json:"iteration"`
	ID         int    `json:"id"`
	Origin     Origin `json:"origin"`
	Deliveries int    `json:"deliveries"`
	Error      string `json:"error"`
}

// encodeJSON is magic followed by v's JSON.
func encodeJSON(magic string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append([]byte(magic), b...), nil
}

// decodeJSON parses what encodeJSON wrote with magic into v; data must
// start with magic.
func decodeJSON(data []byte, magic string, v any) error {
	if len(data) > len(magic)+maxHeader {
		return fmt.Errorf("fleet: %s message of %d bytes, want at most %d", magic, len(data), len(magic)+maxHeader)
	}
	if err := json.Unmarshal(data[len(magic):], v); err != nil {
		return fmt.Errorf("fleet: %s message: %v", magic, err)
	}
	return nil
}
