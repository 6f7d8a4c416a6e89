package engine

import (
	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/spec"
)

// Settings are the PUCT search settings that the `az` agent and
// self-play share. Their Table is the one declaration of names, defaults,
// ranges and help: agent specs (az:sims=200,c=2), command flags
// (--sims 200 --c 2) and the self-play manifest (JSON keys) all use it.
type Settings struct {
	Sims      int     `json:"sims"`      // simulations per move (split over det trees)
	C         float64 `json:"c"`         // PUCT exploration constant
	FPU       float64 `json:"fpu"`       // value of unvisited edges
	Dir       float64 `json:"dir"`       // root Dirichlet noise alpha (0 = none)
	DirFrac   float64 `json:"dirfrac"`   // fraction of noise in the root priors
	TempPlies int     `json:"tempplies"` // sample by visits while move number < this
	Temp      float64 `json:"temp"`      // temperature of sampled moves
	Det       int     `json:"det"`       // determinizations K (hidden information)
	Leaves    int     `json:"leaves"`    // leaves in flight per tree (virtual loss)
	Blend     float64 `json:"blend"`     // weight of the network value against a rollout
	Turns     int     `json:"turns"`     // rollout length in turns when blend < 1
	// Cut and CutScale score a blend rollout cut off after Turns turns
	// (search.NewCut: zero, heuristic or score). Configurations stored
	// before they existed read as "" and 0; Upgrade fills the defaults.
	Cut      string  `json:"cut"`
	CutScale float64 `json:"cutscale"`
	// NetVisits is the visit on which a leaf goes to the network; before, the
	// blend's rollout alone values it (Job.SetNetVisits). Stored before it
	// existed it reads as 0, which means 1 (every leaf on its first
	// visit; Upgrade), so that older configurations keep their searches.
	NetVisits int `json:"netvisits,omitempty"`
	// Gumbel turns on Gumbel root search with sequential halving over
	// GumbelM sampled actions (gumbel.go); it replaces root Dirichlet
	// noise and the opening temperature. GumbelM 0 means 16: the zero
	// value keeps configurations stored before the option existed valid
	// and equal to new default ones.
	Gumbel  bool `json:"gumbel"`
	GumbelM int  `json:"gumbelm"`
	// Backup is how network values reach the tree (BackupKinds): maxn
	// (each player its own value from a per-player head) or paranoid
	// (the mover's value, -v/(players-1) for the others). Stored before
	// it existed it reads as "", which is maxn; with a scalar head both
	// are the same.
	Backup string `json:"backup,omitempty"`
	// Objective is what the search maximises (search.ObjectiveKinds):
	// the game's returns, or winning alone. Stored before it existed it
	// reads as "", which is returns.
	Objective string `json:"objective,omitempty"`
}

// DefaultGumbelM is the number of actions sampled at a Gumbel root when
// gumbelm is 0 (Danihelka et al. 2022 use 16 in Go and chess).
const DefaultGumbelM = 16

// Table declares s's options bound to s's fields (Reset stores the
// defaults, DefaultSettings).
func (s *Settings) Table() spec.Table {
	return spec.Table{
		spec.Int("sims", &s.Sims, 100, 1, 1<<24, "simulations per move (split over det trees)"),
		spec.Float("c", &s.C, 1.5, 1e-6, 1e6, "PUCT exploration constant"),
		spec.Float("fpu", &s.FPU, 0, -1, 1, "value of unvisited actions"),
		spec.Float("dir", &s.Dir, 0, 0, 1000, "root Dirichlet noise alpha (0 = none)"),
		spec.Float("dirfrac", &s.DirFrac, 0.25, 0, 1, "fraction of Dirichlet noise in the root priors"),
		spec.Int("tempplies", &s.TempPlies, 0, 0, 1<<20, "sample moves by visits^(1/temp) while the move number is below this, then play the most visited"),
		spec.Float("temp", &s.Temp, 1, 0, 100, "temperature of sampled moves"),
		spec.Int("det", &s.Det, 8, 1, 1<<16, "sampled deals (trees) per move in hidden-information games; sims are split over them"),
		spec.Int("leaves", &s.Leaves, 1, 1, 256, "leaves in flight per tree (virtual loss)"),
		spec.Float("blend", &s.Blend, 1, 0, 1, "weight of the network value; the rest is a random rollout of turns player turns (study 000: 0.5)"),
		spec.Int("turns", &s.Turns, 8, 1, 1<<20, "rollout length in player turns when blend < 1"),
		spec.Choice("cut", &s.Cut, "zero", search.CutKinds, "value of the blend's rollout where it is cut off after turns turns: zero, heuristic (tanh((h_p - the other's h)/cutscale), h_p a player's best heuristic value, 0 when not choosing), score (the same on the game's running scores) or state (on the game's own evaluation of the position: Sushi Go's score + table + projected standings, Sequence's open windows and sequences; study 000 with cutscale=500)"),
		spec.Float("cutscale", &s.CutScale, 10, 1e-9, 1e9, "cut=heuristic/score/state: the difference that maps to tanh(1) = 0.76"),
		spec.Int("netvisits", &s.NetVisits, 1, 1, 1<<20, "the network evaluates a leaf (its priors; its value blended with the rollout) on the leaf's netvisits-th visit; the visits before are valued by the blend's rollout alone and leave it unexpanded (AlphaGo's expansion threshold: more simulations for the CPU where the network dominates it); above 1 it needs blend < 1"),
		spec.Bool("gumbel", &s.Gumbel, false, "Gumbel root search with sequential halving (Danihelka et al. 2022) instead of PUCT and noise at the root"),
		spec.Int("gumbelm", &s.GumbelM, 0, 0, 256, "actions sampled at a Gumbel root (0 = 16)"),
		spec.Choice("objective", &s.Objective, search.ObjectiveReturns, search.ObjectiveKinds, search.ObjectiveHelp),
		spec.Choice("backup", &s.Backup, BackupMaxN, BackupKinds, "network values in the tree: maxn (each player its own value from a per-player value head) or paranoid (the mover's value v, -v/(players-1) for the others: exact for two players); the same with a scalar value head"),
	}
}

// Upgrade gives the options added after s was stored (read as their
// zero values from older JSON) their defaults, so that an older run
// resumes with the settings it had.
func (s *Settings) Upgrade() {
	if s.Cut == "" {
		s.Cut = "zero"
	}
	if s.CutScale == 0 {
		s.CutScale = 10
	}
	if s.Backup == "" {
		s.Backup = BackupMaxN
	}
	if s.NetVisits == 0 {
		s.NetVisits = 1
	}
	if s.Objective == "" {
		s.Objective = search.ObjectiveReturns
	}
}

// DefaultSettings returns the defaults of Settings.Table.
func DefaultSettings() Settings {
	var s Settings
	s.Table().Reset()
	return s
}

// SearchOptions turns s into a Searcher's options.
func (s Settings) SearchOptions() SearchOptions {
	o := search.DefaultOptions()
	o.Rule, o.C, o.FPU = search.PUCT, s.C, s.FPU
	o.DirichletA, o.DirichletEps = s.Dir, s.DirFrac
	o.TempPlies, o.Temp = s.TempPlies, s.Temp
	o.ExpandVisits = 0
	o.Sims = s.Sims
	o.Objective = s.Objective
	so := SearchOptions{Search: o, Determinize: s.Det, Leaves: s.Leaves, BlendWeight: s.Blend, BlendTurns: s.Turns,
		BlendCut: s.Cut, BlendCutScale: s.CutScale, NetVisits: s.NetVisits, Backup: s.Backup}
	if s.Gumbel {
		so.Gumbel = GumbelOptions{M: s.GumbelM, CVisit: GumbelCVisit, CScale: GumbelCScale}
		if so.Gumbel.M == 0 {
			so.Gumbel.M = DefaultGumbelM
		}
		// Gumbel noise replaces the root's Dirichlet noise.
		so.Search.DirichletA = 0
	}
	return so
}
