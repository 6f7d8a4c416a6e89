package fleet

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/canopy-go/canopy/selfplay"
)

// Game is one finished self-play game as a worker sends it: the record
// and what it was played for.
type Game struct {
	Run           string // the run's id (Job.Run)
	Iteration     int    // the iteration whose self-play it is
	NetworkSHA256 string // the network that played it
	Record        *selfplay.GameRecord
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
	ID            int       `json:"id"`
	Positions     int       `json:"positions"`
	Obs           int       `json:"obs"`     // observation size
	Actions       int       `json:"actions"` // policy and legal row width
	Returns       []float64 `json:"returns"`
	Resigned      bool      `json:"resigned,omitempty"`
	ResignOffGame bool      `json:"resign_off_game,omitempty"`
	FalseResign   bool      `json:"false_resign,omitempty"`
	Nodes         int64     `json:"nodes"`
}

// EncodeGame appends g's message to dst: the magic, a little-endian
// uint32 header length, the JSON header, then the arrays obs, policy
// (float32), legal (uint8), value, root_q (float32) and ply (int32) of
// the record, little-endian, back to back. obs is the record's
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
	h, err := json.Marshal(gameHeader{Run: g.Run, Iteration: g.Iteration, NetworkSHA256: g.NetworkSHA256,
		ID: r.ID, Positions: p, Obs: obs, Actions: actions, Returns: r.Returns, Resigned: r.Resigned,
		ResignOffGame: r.ResignOffGame, FalseResign: r.FalseResign, Nodes: r.Nodes})
	if err != nil {
		return nil, err
	}
	dst = append(dst, gameMagic...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(h)))
	dst = append(dst, h...)
	for _, a := range []any{r.Obs, r.Policy, r.Legal, r.Value, r.RootQ, r.Ply} {
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
	}
	p := int64(h.Positions)
	want := 4*p*int64(h.Obs) + 4*p*int64(h.Actions) + p*int64(h.Actions) + 4*p + 4*p + 4*p
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
	for _, a := range []any{r.Obs, r.Policy, r.Legal, r.Value, r.RootQ, r.Ply} {
		k, err := binary.Decode(data, binary.LittleEndian, a)
		if err != nil {
			return nil, fmt.Errorf("fleet: game message body: %v", err)
		}
		data = data[k:]
	}
	return &Game{Run: h.Run, Iteration: h.Iteration, NetworkSHA256: h.NetworkSHA256, Record: r}, nil
}
