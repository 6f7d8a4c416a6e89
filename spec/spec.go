package spec

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Spec is a parsed "name:key=value,..." string.
type Spec struct {
	Name string
	opts map[string]string
	used map[string]bool
	errs []error
}

// Parse splits s into a name and options. It rejects empty names, empty
// keys, duplicated keys and options without '='.
func Parse(s string) (*Spec, error) {
	s = strings.TrimSpace(s)
	name, rest, hasOpts := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, fmt.Errorf("spec %q: empty name (expected NAME or NAME:key=value,...)", s)
	}
	sp := &Spec{Name: name, opts: map[string]string{}, used: map[string]bool{}}
	if !hasOpts {
		return sp, nil
	}
	if strings.TrimSpace(rest) == "" {
		return nil, fmt.Errorf("spec %q: nothing after ':' (expected key=value options, or drop the colon)", s)
	}
	for _, kv := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("spec %q: option %q is not of the form key=value", s, kv)
		}
		if _, dup := sp.opts[k]; dup {
			return nil, fmt.Errorf("spec %q: option %q given twice", s, k)
		}
		sp.opts[k] = strings.TrimSpace(v)
	}
	return sp, nil
}

// Has reports whether key was given.
func (s *Spec) Has(key string) bool { _, ok := s.opts[key]; return ok }

// Keys returns the given option keys in sorted order.
func (s *Spec) Keys() []string {
	keys := make([]string, 0, len(s.opts))
	for k := range s.opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Set adds or replaces an option (used to apply defaults programmatically).
func (s *Spec) Set(key, value string) { s.opts[key] = value }

func (s *Spec) raw(key string) (string, bool) {
	v, ok := s.opts[key]
	if ok {
		s.used[key] = true
	}
	return v, ok
}

func (s *Spec) fail(key, v, want string) {
	s.errs = append(s.errs, fmt.Errorf("%s: option %s=%q: want %s", s.Name, key, v, want))
}

// String returns the option value for key, or def when absent.
func (s *Spec) String(key, def string) string {
	if v, ok := s.raw(key); ok {
		return v
	}
	return def
}

// Int returns the integer option key, or def. A malformed value is recorded
// and reported by Err.
func (s *Spec) Int(key string, def int) int {
	v, ok := s.raw(key)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		s.fail(key, v, "an integer")
		return def
	}
	return n
}

// IntRange is Int with an inclusive range check.
func (s *Spec) IntRange(key string, def, lo, hi int) int {
	n := s.Int(key, def)
	if n < lo || n > hi {
		s.fail(key, strconv.Itoa(n), fmt.Sprintf("an integer in [%d, %d]", lo, hi))
		return def
	}
	return n
}

// Float returns the float option key, or def.
func (s *Spec) Float(key string, def float64) float64 {
	v, ok := s.raw(key)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		s.fail(key, v, "a number")
		return def
	}
	return f
}

// Bool returns the boolean option key (true/false/1/0/yes/no/on/off), or def.
func (s *Spec) Bool(key string, def bool) bool {
	v, ok := s.raw(key)
	if !ok {
		return def
	}
	switch strings.ToLower(v) {
	case "1", "t", "true", "yes", "on":
		return true
	case "0", "f", "false", "no", "off":
		return false
	}
	s.fail(key, v, "true or false")
	return def
}

// Duration returns the duration option key (Go syntax, e.g. 100ms), or def.
func (s *Spec) Duration(key string, def time.Duration) time.Duration {
	v, ok := s.raw(key)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		s.fail(key, v, "a non-negative duration such as 100ms or 2s")
		return def
	}
	return d
}

// Choice returns the option key, which must be one of choices, or def.
func (s *Spec) Choice(key, def string, choices ...string) string {
	v, ok := s.raw(key)
	if !ok {
		return def
	}
	if !slices.Contains(choices, v) {
		s.fail(key, v, "one of "+strings.Join(choices, ", ")+Suggest(v, choices))
		return def
	}
	return v
}

// Unused returns the given keys that no getter has read, sorted.
func (s *Spec) Unused() []string {
	var out []string
	for _, k := range s.Keys() {
		if !s.used[k] {
			out = append(out, k)
		}
	}
	return out
}

// Err returns the first malformed-value error, or an error naming unknown
// options, or nil. Call it after reading every option you support; known
// lists the supported keys for the error message.
func (s *Spec) Err(known ...string) error {
	if len(s.errs) > 0 {
		return s.errs[0]
	}
	if u := s.Unused(); len(u) > 0 {
		hint := "it takes no options"
		if len(known) > 0 {
			hint = "known options: " + strings.Join(known, ", ")
		}
		return fmt.Errorf("%s: unknown option %s%s (%s)", s.Name, strings.Join(u, ", "), Suggest(u[0], known), hint)
	}
	return nil
}
