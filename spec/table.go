package spec

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Option is one declared option: its key, what it binds to, its default,
// its allowed range and its help. One Table of Options drives an agent's
// spec keys, a command's flags, the help text and the settings a run
// records, so every surface uses the same names, defaults and ranges.
type Option struct {
	Key     string
	Help    string
	Default string // as text, for help
	// Range is the allowed range as text ("1..1048576", "[0, 1]",
	// "uct|puct"), for help and errors.
	Range string
	// File marks a value that may name a file to read (a network, a
	// book): a server confines such values to the directories it serves.
	File bool

	set  func(v string) error // parse, range-check and store
	get  func() string        // the current value as text
	bool bool                 // a boolean flag (--key alone means true)
	kind string               // the value's type name in help: int, uint, float, string, duration
	// list options (Strings) append on set: reset empties the list and
	// check re-validates it without appending (nil for other kinds).
	reset func()
	check func() error
}

// Doc documents one declared option for listings (`canopy games`,
// `canopy agents`, the web UI): its key, default, help with the allowed
// range, and whether its value may name a file (Option.File).
type Doc struct {
	Key, Default, Help string
	File               bool `json:",omitempty"`
}

// Table is an ordered list of options.
type Table []Option

// Int declares an integer option bound to p, with default def and the
// inclusive range [lo, hi]. Declaring does not touch *p; Table.Reset
// stores the defaults.
func Int(key string, p *int, def, lo, hi int, help string) Option {
	return Option{Key: key, Help: help, Default: strconv.Itoa(def), Range: fmt.Sprintf("%d..%d", lo, hi), kind: "int",
		set: func(v string) error {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("%s=%q is not an integer (want %d..%d)", key, v, lo, hi)
			}
			if n < lo || n > hi {
				return fmt.Errorf("%s=%d is out of range (want %d..%d)", key, n, lo, hi)
			}
			*p = n
			return nil
		},
		get: func() string { return strconv.Itoa(*p) }}
}

// Float declares a finite float option bound to p in [lo, hi].
func Float(key string, p *float64, def, lo, hi float64, help string) Option {
	rng := fmt.Sprintf("[%g, %g]", lo, hi)
	return Option{Key: key, Help: help, Default: strconv.FormatFloat(def, 'g', -1, 64), Range: rng, kind: "float",
		set: func(v string) error {
			x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%s=%q is not a finite number (want %s)", key, v, rng)
			}
			if x < lo || x > hi {
				return fmt.Errorf("%s=%g is out of range (want %s)", key, x, rng)
			}
			*p = x
			return nil
		},
		get: func() string { return strconv.FormatFloat(*p, 'g', -1, 64) }}
}

// Uint64 declares an unsigned 64-bit option bound to p (seeds, hash
// sizes), with default def and the inclusive range [lo, hi].
func Uint64(key string, p *uint64, def, lo, hi uint64, help string) Option {
	rng := fmt.Sprintf("%d..%d", lo, hi)
	return Option{Key: key, Help: help, Default: strconv.FormatUint(def, 10), Range: rng, kind: "uint",
		set: func(v string) error {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 0, 64)
			if err != nil {
				return fmt.Errorf("%s=%q is not a non-negative integer (want %s)", key, v, rng)
			}
			if n < lo || n > hi {
				return fmt.Errorf("%s=%d is out of range (want %s)", key, n, rng)
			}
			*p = n
			return nil
		},
		get: func() string { return strconv.FormatUint(*p, 10) }}
}

// Int64 declares a signed 64-bit option bound to p (byte counts), with
// default def and the inclusive range [lo, hi].
func Int64(key string, p *int64, def, lo, hi int64, help string) Option {
	rng := fmt.Sprintf("%d..%d", lo, hi)
	return Option{Key: key, Help: help, Default: strconv.FormatInt(def, 10), Range: rng, kind: "int",
		set: func(v string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 0, 64)
			if err != nil {
				return fmt.Errorf("%s=%q is not an integer (want %s)", key, v, rng)
			}
			if n < lo || n > hi {
				return fmt.Errorf("%s=%d is out of range (want %s)", key, n, rng)
			}
			*p = n
			return nil
		},
		get: func() string { return strconv.FormatInt(*p, 10) }}
}

// Bool declares a boolean option bound to p.
func Bool(key string, p *bool, def bool, help string) Option {
	return Option{Key: key, Help: help, Default: strconv.FormatBool(def), Range: "true|false", bool: true,
		set: func(v string) error {
			// The spellings Spec.Bool reads, so that a spec parsed by a
			// table takes what it took before (swap=on, reuse=yes).
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "1", "t", "true", "yes", "on":
				*p = true
			case "0", "f", "false", "no", "off":
				*p = false
			default:
				return fmt.Errorf("%s=%q: want true or false", key, v)
			}
			return nil
		},
		get: func() string { return strconv.FormatBool(*p) }}
}

// String declares a free-form string option bound to p.
func String(key string, p *string, def, help string) Option {
	return Option{Key: key, Help: help, Default: def, kind: "string",
		set: func(v string) error { *p = v; return nil },
		get: func() string { return *p }}
}

// File declares a string option bound to p whose value may name a file
// to read (or a built-in name); see Option.File.
func File(key string, p *string, def, help string) Option {
	o := String(key, p, def, help)
	o.File = true
	return o
}

// Choice declares a string option bound to p that must be one of choices.
func Choice(key string, p *string, def string, choices []string, help string) Option {
	rng := strings.Join(choices, "|")
	return Option{Key: key, Help: help, Default: def, Range: rng, kind: "string",
		set: func(v string) error {
			for _, c := range choices {
				if v == c {
					*p = v
					return nil
				}
			}
			return fmt.Errorf("%s=%q: want one of %s%s", key, v, strings.Join(choices, ", "), Suggest(v, choices))
		},
		get: func() string { return *p }}
}

// Duration declares a non-negative duration option bound to p, at most
// hi.
func Duration(key string, p *time.Duration, def, hi time.Duration, help string) Option {
	return DurationIn(key, p, def, 0, hi, help)
}

// DurationIn declares a duration option bound to p in [lo, hi].
func DurationIn(key string, p *time.Duration, def, lo, hi time.Duration, help string) Option {
	rng := fmt.Sprintf("%v..%v", lo, hi)
	return Option{Key: key, Help: help, Default: def.String(), Range: rng, kind: "duration",
		set: func(v string) error {
			d, err := time.ParseDuration(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("%s=%q is not a duration such as 100ms or 2s (want %s)", key, v, rng)
			}
			if d < lo || d > hi {
				return fmt.Errorf("%s=%v is out of range (want %s)", key, d, rng)
			}
			*p = d
			return nil
		},
		get: func() string { return p.String() }}
}

// Strings declares a repeatable option bound to p: each value given is
// appended (a flag given twice names two values); an empty value is
// refused. Its default is the empty list, and its text (Values, help)
// the values joined by commas. Values are kept as given: a caller that
// also accepts comma lists splits them itself.
func Strings(key string, p *[]string, help string) Option {
	check := func(v string) error {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("%s=%q: empty value (give a value, or leave the option out)", key, v)
		}
		return nil
	}
	return Option{Key: key, Help: help, kind: "string",
		set: func(v string) error {
			if err := check(v); err != nil {
				return err
			}
			*p = append(*p, v)
			return nil
		},
		get:   func() string { return strings.Join(*p, ",") },
		reset: func() { *p = nil },
		check: func() error {
			for _, v := range *p {
				if err := check(v); err != nil {
					return err
				}
			}
			return nil
		}}
}

// Lookup returns the option named key.
func (t Table) Lookup(key string) (Option, bool) {
	for _, o := range t {
		if o.Key == key {
			return o, true
		}
	}
	return Option{}, false
}

// Keys returns the option keys in order.
func (t Table) Keys() []string {
	k := make([]string, len(t))
	for i, o := range t {
		k[i] = o.Key
	}
	return k
}

// Set parses v into the option named key (range-checked).
func (t Table) Set(key, v string) error {
	o, ok := t.Lookup(key)
	if !ok {
		return fmt.Errorf("unknown option %q%s (known: %s)", key, Suggest(key, t.Keys()), strings.Join(t.Keys(), ", "))
	}
	return o.set(v)
}

// Apply sets every option of the table that s names; keys of s that the
// table does not know are left for s.Err to report. The first bad value
// is returned as an error naming the option and its range.
func (t Table) Apply(s *Spec) error {
	for _, o := range t {
		v, ok := s.raw(o.Key)
		if !ok {
			continue
		}
		if err := o.set(v); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	return nil
}

// Parse stores every option's default, then the values s names (see
// Apply): the one call an agent constructor needs.
func (t Table) Parse(s *Spec) error {
	t.Reset()
	return t.Apply(s)
}

// Values returns the current values as key=value text, in table order.
func (t Table) Values() map[string]string {
	m := make(map[string]string, len(t))
	for _, o := range t {
		m[o.Key] = o.get()
	}
	return m
}

// Register adds one command-line flag per option to fs, with the same
// name as the spec key, the option's help, default and range. Values are
// range-checked when the flag is parsed.
func (t Table) Register(fs *flag.FlagSet) {
	for _, o := range t {
		fs.Var(flagValue{o}, o.Key, o.usage())
	}
}

// Flags stores every option's default (Reset), then registers the flags
// (Register), so that help shows each declared default: the one call a
// command needs for a table of its own.
func (t Table) Flags(fs *flag.FlagSet) {
	t.Reset()
	t.Register(fs)
}

// usage is the help text with the range appended.
func (o Option) usage() string {
	if o.Range == "" || o.bool {
		return o.Help
	}
	return fmt.Sprintf("%s (%s)", o.Help, o.Range)
}

// Usage is the option's one-line help: text and allowed range.
func (o Option) Usage() string { return o.usage() }

type flagValue struct{ o Option }

func (f flagValue) String() string {
	if f.o.get == nil {
		return ""
	}
	return f.o.get()
}
func (f flagValue) Set(v string) error { return f.o.set(v) }
func (f flagValue) IsBoolFlag() bool   { return f.o.bool }

// Kind is the value's type name for help ("int", "float", "string",
// "duration"; "" for a boolean), as the flag package names its own
// flags' types: help printers find it by the method set, interface{
// Kind() string }, and PrintDefaults shows it.
func (f flagValue) Kind() string { return f.o.kind }

// Check re-validates every option's current value against its range
// (values set directly in Go, or read from JSON, bypass Set). The first
// violation is returned, naming the option and its range.
func (t Table) Check() error {
	for _, o := range t {
		if o.check != nil {
			if err := o.check(); err != nil {
				return err
			}
			continue
		}
		if err := o.set(o.get()); err != nil {
			return err
		}
	}
	return nil
}

// SetDefault changes the default of option key (what Reset stores and
// help shows). It is for commands whose role wants another default than
// the shared declaration (self-play adds root noise). The value must be
// in range.
func (t Table) SetDefault(key, v string) error {
	for i := range t {
		if t[i].Key == key {
			if t[i].reset != nil {
				return fmt.Errorf("option %q is a list: it has no default to change", key)
			}
			t[i].Default = v
			return t[i].set(v)
		}
	}
	return fmt.Errorf("unknown option %q", key)
}

// Reset stores every option's default.
func (t Table) Reset() {
	for _, o := range t {
		if o.reset != nil {
			o.reset()
			continue
		}
		if err := o.set(o.Default); err != nil {
			panic(fmt.Sprintf("spec: default of %s: %v", o.Key, err)) // a declaration error
		}
	}
}

// Docs documents the options of t, in order (see Doc).
func (t Table) Docs() []Doc {
	out := make([]Doc, len(t))
	for i, o := range t {
		out[i] = Doc{Key: o.Key, Default: o.Default, Help: o.Usage(), File: o.File}
	}
	return out
}
