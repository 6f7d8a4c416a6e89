package rundir

import (
	"encoding/json"
	"errors"
	"testing"
)

type trainSettings struct {
	Steps    int     `json:"steps"`
	LR       float64 `json:"lr"`
	Schedule string  `json:"lr_schedule"`
	Value    float64 `json:"value_weight"`
}

type shaping struct {
	Block  float64 `json:"block,omitempty"`
	Threat float64 `json:"threat,omitempty"`
}

type settings struct {
	Game      string        `json:"game"`
	Sims      int           `json:"sims"`
	Baselines []string      `json:"baselines"`
	Turn      string        `json:"turn_search,omitempty"`
	Train     trainSettings `json:"train"`
	Shaping   shaping       `json:"shaping,omitzero"`
	Window    int           `json:"window_positions"`
	Hidden    int           `json:"-"`
}

func TestCompare(t *testing.T) {
	base := settings{Game: "connect4", Sims: 32, Baselines: []string{"random"},
		Train: trainSettings{Steps: 200, LR: 0.02, Schedule: "constant", Value: 1}}
	flags := Flags{
		Renamed: map[string]string{"window_positions": "window", "shaping": "shaping"},
		Defined: func(name string) bool { return name != "lr-schedule" },
	}
	for _, tc := range []struct {
		name string
		edit func(*settings)
		want string // the error's text; "" for no change
	}{
		{"same", func(*settings) {}, ""},
		{"json:\"-\" is not stored", func(s *settings) { s.Hidden = 7 }, ""},
		{"one flag", func(s *settings) { s.Sims = 16 },
			"these settings differ from the run's: --sims 16 (run: 32)"},
		{"two flags in file order, nested", func(s *settings) { s.Train.LR = 0.01; s.Sims = 16 },
			"these settings differ from the run's: --sims 16 (run: 32), --lr 0.01 (run: 0.02)"},
		{"underscores become dashes", func(s *settings) { s.Train.Value = 2 },
			"these settings differ from the run's: --value-weight 2 (run: 1)"},
		{"renamed", func(s *settings) { s.Window = 5000 },
			"these settings differ from the run's: --window 5000 (run: 0)"},
		{"no such flag: the path", func(s *settings) { s.Train.Schedule = "cosine" },
			"these settings differ from the run's: train.lr_schedule cosine (run: constant)"},
		{"strings bare, empty quoted", func(s *settings) { s.Game = "" },
			`these settings differ from the run's: --game "" (run: connect4)`},
		{"arrays whole", func(s *settings) { s.Baselines = []string{"random", "onestep"} },
			`these settings differ from the run's: --baselines ["random","onestep"] (run: ["random"])`},
		{"omitted now", func(s *settings) { s.Turn = "mcts-v" },
			"these settings differ from the run's: --turn-search mcts-v (run: unset)"},
		{"an object as one flag", func(s *settings) { s.Shaping = shaping{Block: 0.1, Threat: 0.05} },
			"these settings differ from the run's: --shaping 0.1 (run: unset)"},
	} {
		now := base
		now.Baselines = append([]string(nil), base.Baselines...)
		tc.edit(&now)
		cs, err := Compare(base, now, flags)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := ""
		if err := cs.Err(); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// A setting removed from now (present in run only) is named too.
func TestCompareUnsetNow(t *testing.T) {
	run := map[string]any{"turn_search": "emcts", "sims": 8}
	now := map[string]any{"sims": 8}
	cs, _ := Compare(run, now, Flags{})
	if len(cs) != 1 || cs[0] != (Change{Name: "--turn-search", Run: "emcts", Now: "unset"}) {
		t.Errorf("%+v", cs)
	}
}

func TestChangesOnly(t *testing.T) {
	cs := Changes{{"--sims", "32", "16"}, {"--lr", "0.02", "0.01"}}
	got := cs.Only(func(n string) bool { return n == "--lr" })
	if len(got) != 1 || got[0].Name != "--lr" {
		t.Errorf("Only: %+v", got)
	}
	if cs.Only(func(string) bool { return false }).Err() != nil {
		t.Error("no change left must be a nil error")
	}
	var err error = cs
	var as Changes
	if !errors.As(err, &as) || len(as) != 2 {
		t.Error("Changes must be found by errors.As")
	}
}

func TestCompareBadValue(t *testing.T) {
	if _, err := Compare(map[string]any{"f": func() {}}, 1, Flags{}); err == nil {
		t.Error("a value JSON cannot encode must be an error")
	}
}

// Compare reads stored settings from files (train's checkpoint metadata
// holds its options as JSON text): any text compares without a panic,
// and a text compares equal to itself.
func FuzzCompare(f *testing.F) {
	f.Add(`{"steps":200,"lr":0.02,"train":{"sims":[1,2]}}`, `{"steps":100}`)
	f.Add(`{"a":{"b":{"c":null}},"d":""}`, `[]`)
	f.Add(`"x"`, `{`)
	f.Add(`{"a":1,"a":2}`, `{"a":2}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		cs, err := Compare(json.RawMessage(a), json.RawMessage(b), Flags{Renamed: map[string]string{"a": "x", "train": ""}})
		if err == nil {
			_ = cs.Error()
		}
		if cs, err := Compare(json.RawMessage(a), json.RawMessage(a), Flags{}); err == nil && len(cs) != 0 {
			t.Errorf("%q differs from itself: %v", a, cs)
		}
	})
}
