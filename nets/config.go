package nets

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/canopy-go/canopy/games"
)

// Head selects the network family.
type Head string

const (
	// HeadAlphaZero is a residual tower (3x3 conv stem, Blocks residual
	// blocks of Channels filters, batch norm everywhere) with the AlphaZero
	// heads: policy = 1x1 conv (PolicyFilters) + BN + ReLU + FC to
	// PolicySize; value = 1x1 conv (ValueFilters) + BN + ReLU + FC
	// ValueHidden + ReLU + FC 1 + tanh.
	HeadAlphaZero Head = "alphazero"
	// HeadPPO is a plain CNN for actor-critic training: 3x3 convs with bias
	// and ReLU of ConvChannels filters, a dense layer of Dense units with
	// ReLU, then a linear actor (PolicySize logits) and a critic (one unit
	// squashed by tanh so the value stays in [-1, 1]).
	HeadPPO Head = "ppo"
)

// Config fully describes a network's architecture. It is stored as JSON in
// the "canopy.config" metadata of a weights file, so the file alone
// rebuilds the net. Zero optional fields take the documented defaults in
// Normalize.
type Config struct {
	// Preset is the name the config came from (informational).
	Preset string `json:"preset,omitempty"`
	// Game is the spec of the game the net was made for (informational;
	// the CLI uses it as the default game).
	Game string `json:"game,omitempty"`
	Head Head   `json:"head"`
	// Input is InputPlanes x Height x Width, planar as games produce it.
	InputPlanes int `json:"input_planes"`
	Height      int `json:"height"`
	Width       int `json:"width"`
	// PolicySize is the number of policy logits (the game's NumActions).
	PolicySize int `json:"policy_size"`

	// AlphaZero fields.
	Channels      int `json:"channels,omitempty"`
	Blocks        int `json:"blocks,omitempty"`
	ValueHidden   int `json:"value_hidden,omitempty"`
	PolicyFilters int `json:"policy_filters,omitempty"` // default 2
	ValueFilters  int `json:"value_filters,omitempty"`  // default 1

	// PPO fields.
	ConvChannels []int `json:"conv_channels,omitempty"`
	Dense        int   `json:"dense,omitempty"`

	// ValuePlayers is the width of the value head. 0 (or 1) is the
	// scalar head: one value from the mover's view, which search spreads
	// to the others as -v/(players-1), exact for two-player zero-sum
	// games. P > 1 is a head of P outputs (each tanh, in [-1, 1]), the
	// players' returns scaled to [-1, 1] with the seats rotated so that
	// the mover comes first: output i is the return of player
	// (mover+i) mod P, so one net serves every seat. P must equal the
	// game's player count (observations of these games depend on it).
	// ForGame makes 0 the per-player head for games of three or more
	// players; 1 asks for the scalar head there. Normalize stores 1 as
	// 0, omitted from JSON, so scalar configs read and write as before.
	ValuePlayers int `json:"value_players,omitempty"`
}

// maxValuePlayers bounds ValuePlayers (games.Type.MaxPlayers of every
// game is far below it).
const maxValuePlayers = 64

// ValueSize is the number of value outputs per sample: 1 for the
// scalar head, else ValuePlayers.
func (c *Config) ValueSize() int { return max(c.ValuePlayers, 1) }

// SeatValues returns a per-player value head's row (row[i] the value of
// player (mover+i) mod len(row), see ValuePlayers) in seat order: element
// p is player p's value. (The search's hot path, engine's fillValues,
// does the same rotation in place.)
func SeatValues(row []float32, mover int) []float64 {
	seats := make([]float64, len(row))
	for i, v := range row {
		seats[(mover+i)%len(row)] = float64(v)
	}
	return seats
}

// Limits that keep a hostile config from allocating without bound.
const (
	maxDim    = 1 << 12
	maxBlocks = 256
	maxParams = 1 << 28
)

type namedDim struct {
	name string
	v    int
}

// InputSize is InputPlanes*Height*Width.
func (c *Config) InputSize() int { return c.InputPlanes * c.Height * c.Width }

// Normalize fills defaults (Head alphazero, 2 policy filters, 1 value
// filter) and validates every field, returning a clear error.
func (c *Config) Normalize() error {
	if c.Head == "" {
		c.Head = HeadAlphaZero
	}
	if c.ValuePlayers < 0 || c.ValuePlayers > maxValuePlayers {
		return fmt.Errorf("config: value_players = %d, want 0 (scalar value head) or 2..%d (one value per player)", c.ValuePlayers, maxValuePlayers)
	}
	if c.ValuePlayers == 1 {
		c.ValuePlayers = 0 // the scalar head: one spelling, so files stay as before
	}
	dims := []namedDim{{"input_planes", c.InputPlanes}, {"height", c.Height}, {"width", c.Width}, {"policy_size", c.PolicySize}}
	switch c.Head {
	case HeadAlphaZero:
		if c.PolicyFilters == 0 {
			c.PolicyFilters = 2
		}
		if c.ValueFilters == 0 {
			c.ValueFilters = 1
		}
		dims = append(dims, namedDim{"channels", c.Channels}, namedDim{"value_hidden", c.ValueHidden}, namedDim{"policy_filters", c.PolicyFilters}, namedDim{"value_filters", c.ValueFilters})
		if c.Blocks < 0 || c.Blocks > maxBlocks {
			return fmt.Errorf("config: blocks = %d, want 0..%d", c.Blocks, maxBlocks)
		}
		if len(c.ConvChannels) != 0 || c.Dense != 0 {
			return fmt.Errorf("config: conv_channels and dense belong to head %q, not %q", HeadPPO, c.Head)
		}
	case HeadPPO:
		if len(c.ConvChannels) == 0 || len(c.ConvChannels) > 64 {
			return fmt.Errorf("config: head %q needs 1..64 conv_channels, got %d", c.Head, len(c.ConvChannels))
		}
		for i, ch := range c.ConvChannels {
			dims = append(dims, namedDim{fmt.Sprintf("conv_channels[%d]", i), ch})
		}
		dims = append(dims, namedDim{"dense", c.Dense})
		if c.Channels != 0 || c.Blocks != 0 || c.ValueHidden != 0 {
			return fmt.Errorf("config: channels, blocks and value_hidden belong to head %q, not %q", HeadAlphaZero, c.Head)
		}
	default:
		return fmt.Errorf("config: unknown head %q (want %q or %q)", c.Head, HeadAlphaZero, HeadPPO)
	}
	for _, d := range dims {
		if d.v < 1 || d.v > maxDim*16 || (d.name != "policy_size" && d.name != "dense" && d.v > maxDim) {
			return fmt.Errorf("config: %s = %d out of range", d.name, d.v)
		}
	}
	if c.Height*c.Width > maxDim*4 {
		return fmt.Errorf("config: board %dx%d too large", c.Height, c.Width)
	}
	if p := c.paramEstimate(); p > maxParams {
		return fmt.Errorf("config: about %d parameters, more than the %d limit", p, maxParams)
	}
	return nil
}

// paramEstimate bounds the parameter count without building the net.
func (c *Config) paramEstimate() int64 {
	hw := int64(c.Height * c.Width)
	var n int64
	switch c.Head {
	case HeadAlphaZero:
		ch := int64(c.Channels)
		n = 9*int64(c.InputPlanes)*ch + int64(c.Blocks)*2*9*ch*ch
		n += int64(c.PolicyFilters)*hw*int64(c.PolicySize) + int64(c.ValueFilters)*hw*int64(c.ValueHidden)
	case HeadPPO:
		prev := int64(c.InputPlanes)
		for _, ch := range c.ConvChannels {
			n += 9 * prev * int64(ch)
			prev = int64(ch)
		}
		n += prev * hw * int64(c.Dense)
		n += int64(c.Dense) * int64(c.PolicySize+1)
	}
	return n
}

// JSON returns the config as compact JSON (the metadata value).
func (c Config) JSON() string {
	b, err := json.Marshal(c)
	if err != nil { // cannot happen for this plain struct
		panic(err)
	}
	return string(b)
}

// ParseConfig decodes and validates a config from JSON. Unknown fields are
// an error, so a typo does not silently fall back to a default.
func ParseConfig(s string) (Config, error) {
	var c Config
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("config: bad JSON: %v", err)
	}
	if err := c.Normalize(); err != nil {
		return Config{}, err
	}
	return c, nil
}

var presets = map[string]Config{
	"connect4": {Preset: "connect4", Game: "connect4", Head: HeadAlphaZero, InputPlanes: 2, Height: 6, Width: 7,
		PolicySize: 7, Channels: 64, Blocks: 5, ValueHidden: 64},
	// sequence is shaped for the default game, which deals jacks: 3 chip
	// planes + 104 card-instance planes. The study's research variant
	// (sequence:jacks=false, 96 cards) has 99 planes: ForGame reshapes
	// the preset for it.
	"sequence": {Preset: "sequence", Game: "sequence", Head: HeadAlphaZero, InputPlanes: 107, Height: 10, Width: 10,
		PolicySize: 700, Channels: 64, Blocks: 5, ValueHidden: 256},
	// megazero has no board of its own: ForGame supplies it (Connect4d by
	// default in the CLI).
	"megazero": {Preset: "megazero", Game: "connect4d", Head: HeadAlphaZero, Channels: 128, Blocks: 6, ValueHidden: 256},
	"connect4-ppo": {Preset: "connect4-ppo", Game: "connect4", Head: HeadPPO, InputPlanes: 2, Height: 6, Width: 7,
		PolicySize: 7, ConvChannels: []int{32, 64, 64}, Dense: 512},
}

// DefaultPreset is the preset used when none is named.
const DefaultPreset = "connect4"

// Presets returns the preset names, sorted.
func Presets() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Preset returns the named preset. A preset names the game it was made for
// (Config.Game, a spec with default options) and, where it has one, its
// shape is that game's observation shape and action count; ForGame
// reshapes it for another game or variant, and callers that build a net
// for a game should always apply it (the CLI does). Presets whose board
// comes from the game (megazero) are incomplete until ForGame is applied;
// Normalize reports it.
func Preset(name string) (Config, error) {
	c, ok := presets[name]
	if !ok {
		return Config{}, fmt.Errorf("unknown preset %q (available: %s)", name, strings.Join(Presets(), ", "))
	}
	c.ConvChannels = append([]int(nil), c.ConvChannels...)
	return c, nil
}

// ForGame returns c with its input shape and policy size taken from g:
// the observation shape's last two dimensions are height and width and the
// product of the others is InputPlanes (a 1-D observation becomes N x 1 x 1);
// PolicySize is g.NumActions(); Game is g.Spec(). For games of three or
// more players ValuePlayers 0 becomes g.NumPlayers() (a per-player value
// head, since the scalar head's -v/(players-1) is exact only for two);
// ValuePlayers 1 keeps the scalar head there (Normalize then stores it
// as 0).
func (c Config) ForGame(g games.Game) (Config, error) {
	shape := g.ObservationShape()
	planes, h, w := 1, 1, 1
	switch len(shape) {
	case 0:
		return c, fmt.Errorf("game %s has an empty observation shape", g.Spec())
	case 1:
		planes = shape[0]
	default:
		h, w = shape[len(shape)-2], shape[len(shape)-1]
		for _, d := range shape[:len(shape)-2] {
			planes *= d
		}
	}
	c.InputPlanes, c.Height, c.Width = planes, h, w
	c.PolicySize = g.NumActions()
	c.Game = g.Spec()
	c.ConvChannels = append([]int(nil), c.ConvChannels...)
	if c.ValuePlayers == 0 && g.NumPlayers() > 2 {
		c.ValuePlayers = g.NumPlayers() // one value per player where the scalar head is not exact
	}
	if err := c.Normalize(); err != nil {
		return c, fmt.Errorf("preset %q for game %s: %v", c.Preset, g.Spec(), err)
	}
	if c.ValuePlayers > 1 && c.ValuePlayers != g.NumPlayers() {
		return c, fmt.Errorf("preset %q for game %s: value_players = %d, but the game has %d players (set it to %d, or 1 for the scalar value head)",
			c.Preset, g.Spec(), c.ValuePlayers, g.NumPlayers(), g.NumPlayers())
	}
	return c, nil
}
