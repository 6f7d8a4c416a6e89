package spec

import (
	"fmt"
	"regexp"
	"sync"
)

// Role is one use of an option table declared elsewhere, with some
// defaults of its own: self-play explores where the az agent plays its
// best, so self-play's table is az's with dir 1 where az's is 0, and the
// zero loop's is self-play's with fewer simulations. A name then keeps
// one declaration (key, kind, range, help), and every other default it
// has is an Override that says why: lc0's self-play and KataGo's
// self-play configuration differ from their play modes on purpose, as
// ours do; what they must not do is differ by accident.
//
// A Role is plain data: declare it once as a package-level value and
// Apply it where the role's table is built.
type Role struct {
	// Name is the role as help shows it ("self-play", "zero").
	Name string
	// Of is whose defaults the overrides replace ("az", "self-play",
	// "train").
	Of        string
	Overrides []Override
}

// Override is a role's default for one option of another table.
type Override struct {
	Key     string
	Default string // as text, in the option's range
	Why     string // a short reason, shown in help
}

// Apply returns a copy of t with the role's defaults (what Reset stores)
// and, in each overridden option's help, a note that names the role, its
// default, the default it replaces and why: "[self-play default 1, az
// 0: self-play explores]" (OverrideNote reads it back). Apply does not
// touch the bound values (Reset stores the defaults, and panics on one
// out of range); an override of a key t does not declare, or one without
// a reason, is a declaration error and panics.
func (r Role) Apply(t Table) Table {
	t = append(Table(nil), t...)
	for _, o := range r.Overrides {
		i := t.index(o.Key)
		if i < 0 {
			panic(fmt.Sprintf("spec: role %s overrides %q, which the table does not declare", r.Name, o.Key))
		}
		if o.Why == "" {
			panic(fmt.Sprintf("spec: role %s overrides %s without saying why", r.Name, o.Key))
		}
		t[i].Help = fmt.Sprintf("%s [%s default %s, %s %s: %s]", t[i].Help, r.Name, o.Default, r.Of, t[i].Default, o.Why)
		t[i].Default = o.Default
	}
	return t
}

// Default returns the role's default of key, and whether it overrides
// one.
func (r Role) Default(key string) (string, bool) {
	for _, o := range r.Overrides {
		if o.Key == key {
			return o.Default, true
		}
	}
	return "", false
}

// index returns the position of key in t, or -1.
func (t Table) index(key string) int {
	for i := range t {
		if t[i].Key == key {
			return i
		}
	}
	return -1
}

// overrideNote matches the note Role.Apply adds to help; compiled on
// first use (only tests read notes back), not at every process start.
var overrideNote = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\[([^\[\]]+) default ([^\[\], ]*), ([^\[\]]+?) ([^\[\] ]*): ([^\[\]]+)\]`)
})

// OverrideNote reports whether help (an option's help or a flag's usage)
// carries a role's override note (Role.Apply), and returns the role,
// whose default it replaces, and why. Tests that hold every name to one
// default use it to tell a declared role default from an accident.
func OverrideNote(help string) (role, of, why string, ok bool) {
	m := overrideNote().FindAllStringSubmatch(help, -1)
	if len(m) == 0 {
		return "", "", "", false
	}
	last := m[len(m)-1] // the outermost role, applied last
	return last[1], last[3], last[5], true
}

// Only returns the options of t named by keys, in the order of keys: a
// role that uses part of another table (the zero loop sets some of
// training's options) declares which. An unknown key panics (a
// declaration error).
func (t Table) Only(keys ...string) Table {
	out := make(Table, 0, len(keys))
	for _, k := range keys {
		i := t.index(k)
		if i < 0 {
			panic(fmt.Sprintf("spec: Only(%q): the table does not declare it", k))
		}
		out = append(out, t[i])
	}
	return out
}
