package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// Not declares a boolean option key bound to the negation of *p: key
// true stores false. It gives an option the positive polarity users
// expect (reuse, default true) where a stored format keeps the negative
// field it always had (self-play manifests' "noreuse", whose zero value
// is the default).
func Not(key string, p *bool, def bool, help string) Option {
	return Option{Key: key, Help: help, Default: strconv.FormatBool(def), Range: "true|false", bool: true,
		set: func(v string) error {
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("%s=%q: want true or false", key, v)
			}
			*p = !b
			return nil
		},
		get: func() string { return strconv.FormatBool(!*p) }}
}

// List declares an option bound to a list of strings, written as one
// value: split parses it (nil: items separated by join, blanks trimmed,
// empty items dropped) and join writes it back.
func List(key string, p *[]string, def []string, join string, split func(string) []string, help string) Option {
	if split == nil {
		split = func(v string) []string {
			var l []string
			for _, f := range strings.Split(v, join) {
				if f = strings.TrimSpace(f); f != "" {
					l = append(l, f)
				}
			}
			return l
		}
	}
	return Option{Key: key, Help: help, Default: strings.Join(def, join),
		set: func(v string) error { *p = split(v); return nil },
		get: func() string { return strings.Join(*p, join) }}
}

// SplitSpecs splits a list of specs such as "mcts:sims=100,c=1.4,random":
// a comma starts a new spec unless the next field looks like key=value
// (an option of the previous spec). Specs may also be separated by ';'
// or spaces.
func SplitSpecs(s string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == ' ' }) {
		for _, f := range strings.Split(part, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			if len(out) > 0 && strings.Contains(f, "=") && !strings.Contains(f, ":") && strings.Contains(out[len(out)-1], ":") {
				out[len(out)-1] += "," + f
				continue
			}
			out = append(out, f)
		}
	}
	return out
}

// TextValue is a typed value that reads and writes itself as text.
type TextValue interface {
	MarshalText() ([]byte, error)
	UnmarshalText([]byte) error
}

// Text declares an option bound to a typed value p that parses itself
// (UnmarshalText; its errors say what it wants), with default def and
// rng the allowed values as help shows them ("fp32|bf16").
func Text(key string, p TextValue, def, rng, help string) Option {
	return Option{Key: key, Help: help, Default: def, Range: rng,
		set: func(v string) error {
			if err := p.UnmarshalText([]byte(strings.TrimSpace(v))); err != nil {
				return fmt.Errorf("%s=%q: %v (want %s)", key, v, err, rng)
			}
			return nil
		},
		get: func() string {
			b, err := p.MarshalText()
			if err != nil {
				return ""
			}
			return string(b)
		}}
}
