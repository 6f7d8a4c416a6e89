package spec

import (
	"fmt"
	"math"
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

// Interval declares a finite float option bound to p whose range is
// written in interval notation, each end open or closed: "(0, 10]" is
// above 0 and at most 10, "[0, 1)" at least 0 and below 1. A malformed
// interval, or a default outside it, is a declaration error and panics.
func Interval(key string, p *float64, def float64, rng, help string) Option {
	lo, hi, loOpen, hiOpen, ok := parseInterval(rng)
	if !ok {
		panic(fmt.Sprintf("spec: %s: malformed interval %q (want e.g. (0, 1])", key, rng))
	}
	in := func(x float64) bool {
		return (x > lo || !loOpen && x == lo) && (x < hi || !hiOpen && x == hi)
	}
	if !in(def) {
		panic(fmt.Sprintf("spec: %s: default %g outside %s", key, def, rng))
	}
	return Option{Key: key, Help: help, Default: strconv.FormatFloat(def, 'g', -1, 64), Range: rng,
		set: func(v string) error {
			x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%s=%q is not a finite number (want %s)", key, v, rng)
			}
			if !in(x) {
				return fmt.Errorf("%s=%g is out of range (want %s)", key, x, rng)
			}
			*p = x
			return nil
		},
		get: func() string { return strconv.FormatFloat(*p, 'g', -1, 64) }}
}

// parseInterval reads "(lo, hi]" and its three siblings.
func parseInterval(s string) (lo, hi float64, loOpen, hiOpen, ok bool) {
	if len(s) < 5 {
		return
	}
	l, r := s[0], s[len(s)-1]
	a, b, found := strings.Cut(s[1:len(s)-1], ",")
	if !found || (l != '(' && l != '[') || (r != ')' && r != ']') {
		return
	}
	var err1, err2 error
	lo, err1 = strconv.ParseFloat(strings.TrimSpace(a), 64)
	hi, err2 = strconv.ParseFloat(strings.TrimSpace(b), 64)
	return lo, hi, l == '(', r == ')', err1 == nil && err2 == nil && lo <= hi
}
