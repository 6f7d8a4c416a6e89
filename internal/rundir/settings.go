package rundir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Change is one setting whose value differs between a run's stored
// settings and the ones requested now.
type Change struct {
	// Name is the flag that sets it ("--sims"), or, for a setting no flag
	// sets, its path in the settings file ("train.lr_schedule").
	Name string
	// Run and Now are the stored and the requested value as text: a
	// string bare ("" when empty), anything else as compact JSON, "unset"
	// where one side does not have the setting.
	Run, Now string
}

func (c Change) String() string { return fmt.Sprintf("%s %s (run: %s)", c.Name, c.Now, c.Run) }

// Changes are the differences Compare found, in the order of the
// settings file. As an error it reads
//
//	these settings differ from the run's: --sims 16 (run: 32), --lr 0.01 (run: 0.02)
type Changes []Change

func (cs Changes) Error() string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return "these settings differ from the run's: " + strings.Join(parts, ", ")
}

// Err is cs as an error, nil when there is no change.
func (cs Changes) Err() error {
	if len(cs) == 0 {
		return nil
	}
	return cs
}

// Only returns the changes whose Name keep accepts (a command that
// compares only the flags given on its command line).
func (cs Changes) Only(keep func(name string) bool) Changes {
	var out Changes
	for _, c := range cs {
		if keep(c.Name) {
			out = append(out, c)
		}
	}
	return out
}

// Flags says which flag sets which setting. A setting is named by its
// path in the settings' JSON: the keys from the top object down, joined
// by dots ("selfplay.sims", "train.value_weight"); arrays are single
// settings.
type Flags struct {
	// Renamed maps a path, or the path of an object (all of its settings
	// are then one flag's), to its flag's name without dashes where the
	// default does not hold; "" marks a setting no flag sets.
	Renamed map[string]string
	// Defined reports whether a flag exists; a default name that is not
	// defined is no flag, and the setting is named by its path. Nil
	// means every default name is a flag.
	Defined func(name string) bool
}

// name is the Change.Name of the setting at path: Renamed's entry for it
// or its nearest object, else the last key with '_' as '-' when that is a
// flag, else the path.
func (f Flags) name(path string) string {
	for p := path; ; {
		if r, ok := f.Renamed[p]; ok {
			if r == "" {
				return path
			}
			return "--" + r
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	flag := strings.ReplaceAll(path[strings.LastIndexByte(path, '.')+1:], "_", "-")
	if f.Defined != nil && !f.Defined(flag) {
		return path
	}
	return "--" + flag
}

// Compare reports how now differs from run, two values of one settings
// type, compared as their JSON forms (so exactly what the settings file
// stores is compared, and json:"-" fields are not). Several settings of
// one flag (an object Renamed as a whole) make one Change, its first
// differing one's. The error is a value that does not marshal to JSON.
func Compare(run, now any, flags Flags) (Changes, error) {
	a, err := leaves(run)
	if err != nil {
		return nil, err
	}
	b, err := leaves(now)
	if err != nil {
		return nil, err
	}
	nowText := make(map[string]string, len(b))
	for _, l := range b {
		nowText[l.path] = l.text
	}
	runText := make(map[string]bool, len(a))
	var cs Changes
	seen := map[string]bool{}
	add := func(path, r, n string) {
		name := flags.name(path)
		if !seen[name] {
			seen[name] = true
			cs = append(cs, Change{Name: name, Run: r, Now: n})
		}
	}
	for _, l := range a {
		runText[l.path] = true
		n, ok := nowText[l.path]
		if !ok {
			n = "unset"
		}
		if n != l.text {
			add(l.path, l.text, n)
		}
	}
	for _, l := range b {
		if !runText[l.path] {
			add(l.path, "unset", l.text)
		}
	}
	return cs, nil
}

// leaf is one setting: its path and its value as text.
type leaf struct{ path, text string }

// leaves lists v's settings in the order of its JSON form; a key given
// twice (JSON text read from a file) has its last value, as
// encoding/json reads it, at its first place.
func leaves(v any) ([]leaf, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var all []leaf
	if err := flatten("", data, &all); err != nil {
		return nil, err
	}
	at := make(map[string]int, len(all))
	out := all[:0]
	for _, l := range all {
		if i, ok := at[l.path]; ok {
			out[i].text = l.text
			continue
		}
		at[l.path] = len(out)
		out = append(out, l)
	}
	return out, nil
}

// flatten appends the settings of the JSON value data, found at prefix,
// to out: an object's members recursively, anything else as one leaf.
func flatten(prefix string, data []byte, out *[]leaf) error {
	if len(data) == 0 || data[0] != '{' {
		*out = append(*out, leaf{prefix, text(data)})
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // '{'
		return err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		path := key
		if prefix != "" {
			path = prefix + "." + key
		}
		if err := flatten(path, raw, out); err != nil {
			return err
		}
	}
	return nil
}

// text is a JSON scalar or array as Change shows it.
func text(raw []byte) string {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if s == "" {
				return `""`
			}
			return s
		}
	}
	return string(raw)
}
