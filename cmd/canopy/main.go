// Command canopy is the command-line front end of the Canopy engine: games,
// solvers, agents, arenas, networks, self-play and benchmarks.
//
// Each subcommand lives in its own file and registers itself in init with
// register. Conventions (shared by every subcommand):
//   - flags use the standard flag package; both -flag and --flag work;
//     each is a spec.Table entry (type, default, range, help), checked
//     when parsed; the flags many commands share are declared once in
//     common_options.go;
//   - a usage error prints one line and exits with status 2;
//   - a runtime failure prints one line "canopy CMD: what went wrong" and
//     exits with status 1; no panic trace reaches the user for bad input;
//   - commands that use randomness take --seed; commands that print
//     results take --json.
package main

import (
	"errors"
	"flag"
	"fmt"
	"github.com/canopy-go/canopy/internal/rundir"
	"github.com/canopy-go/canopy/spec"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// command is one subcommand.
type command struct {
	Name    string
	Summary string // one line for `canopy help`
	Usage   string // argument synopsis after the command name, e.g. "[--game G] [--json]"
	// Help is the longer description shown by `canopy CMD --help`.
	Help string
	// Flags declares the command's flags on fs and returns the function that
	// runs it after parsing. args holds the positional arguments.
	Setup func(fs *flag.FlagSet) func(env *env, args []string) error
}

// env carries the process streams so commands are testable in-process.
type env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.Name]; dup {
		panic("duplicate command " + c.Name)
	}
	commands[c.Name] = c
}

// subcommandError is the error of a command's subcommand (canopy net
// eval): the line names both ("canopy net eval: ..."), so the
// subcommand's own messages do not repeat its name.
type subcommandError struct {
	sub string
	err error
}

func (e subcommandError) Error() string { return e.err.Error() }
func (e subcommandError) Unwrap() error { return e.err }

// subcommandFailed wraps err, the error of subcommand sub (nil stays nil).
func subcommandFailed(sub string, err error) error {
	if err == nil {
		return nil
	}
	return subcommandError{sub, err}
}

// usageError marks errors caused by how the command was invoked (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// isUsage reports whether err is a usage error: a usageError, or a
// resumed run given flags that differ from its settings (rundir.Changes:
// the command line is wrong, not the run).
func isUsage(err error) bool {
	var ue usageError
	var ch rundir.Changes
	return errors.As(err, &ue) || errors.As(err, &ch)
}

// usagef returns a usage error (exit status 2).
func usagef(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}

func main() {
	os.Exit(run(os.Args[1:], &env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
}

// run executes one invocation and returns the exit status.
func run(args []string, e *env) (status int) {
	defer func() {
		// A panic is a bug in Canopy, never the user's fault: say so in one
		// paragraph and keep the trace for the bug report.
		if r := recover(); r != nil {
			fmt.Fprintf(e.Stderr, "canopy: internal error: %v\nThis is a bug; please report it with the command line and this trace:\n%s", r, debug.Stack())
			status = 1
		}
	}()
	if len(args) == 0 {
		topUsage(e.Stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && name == "help" {
			if c, ok := commands[args[1]]; ok {
				fs := newFlagSet(c, e)
				c.Setup(fs)
				fs.SetOutput(e.Stdout)
				fs.Usage()
				return 0
			}
			fmt.Fprintf(e.Stderr, "canopy help: unknown command %q%s (run `canopy help` for the list)\n", args[1], spec.Suggest(args[1], commandNames()))
			return 2
		}
		topUsage(e.Stdout)
		return 0
	case "-version", "--version", "version":
		fmt.Fprintln(e.Stdout, versionString())
		return 0
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(e.Stderr, "canopy: unknown command %q%s (run `canopy help` for the list)\n", name, spec.Suggest(name, commandNames()))
		return 2
	}
	fs := newFlagSet(c, e)
	runFn := c.Setup(fs)
	if err := parseFlags(fs, args[1:], e.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		// One line saying what is wrong, one saying where the flags are
		// listed: never the whole usage text (it buries the problem).
		fmt.Fprintf(e.Stderr, "canopy %s: %s\n(run `canopy %s --help` for usage)\n", name, oneLine(err), name)
		return 2
	}
	err := runFn(e, fs.Args())
	if err == nil {
		return 0
	}
	var se subcommandError
	if errors.As(err, &se) {
		full := name + " " + se.sub
		if isUsage(se.err) {
			fmt.Fprintf(e.Stderr, "canopy %s: %s\n(run `canopy %s --help` for usage)\n", full, oneLine(se.err), full)
			return 2
		}
		fmt.Fprintf(e.Stderr, "canopy %s: %s\n", full, oneLine(se.err))
		return 1
	}
	if isUsage(err) {
		fmt.Fprintf(e.Stderr, "canopy %s: %s\n(run `canopy %s --help` for usage)\n", name, oneLine(err), name)
		return 2
	}
	fmt.Fprintf(e.Stderr, "canopy %s: %s\n", name, oneLine(err))
	return 1
}

// maxErrorLen bounds a printed error message: messages that quote the
// user's input (a 100 KB --moves) keep their start, which says what is
// wrong, and their end, which often says how to fix it.
const maxErrorLen = 480

// oneLine formats err as a single line of at most maxErrorLen bytes.
func oneLine(err error) string {
	msg := strings.Join(strings.FieldsFunc(err.Error(), func(r rune) bool { return r == '\n' || r == '\r' }), " ")
	if len(msg) <= maxErrorLen {
		return msg
	}
	head, tail := msg[:320], msg[len(msg)-120:]
	// Cut at rune boundaries.
	for len(head) > 0 && !utf8.RuneStart(msg[len(head)]) {
		head = head[:len(head)-1]
	}
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return head + " [...] " + tail
}

// parseFlags parses args into fs without letting the flag package print:
// -h/--help prints fs's usage to w and returns flag.ErrHelp; any other
// problem is returned (the caller prints it as one line).
func parseFlags(fs *flag.FlagSet, args []string, w io.Writer) error {
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(w)
		fs.Usage()
	}
	if !errors.Is(err, flag.ErrHelp) {
		fs.Visit(func(f *flag.Flag) {
			if _, ok := aliasOf(f); ok {
				fmt.Fprintf(w, "%s: warning: --%s is deprecated; use --%s\n", fs.Name(), f.Name, strings.TrimPrefix(f.Usage, aliasUsage))
			}
		})
	}
	return explainFlagError(fs, err, w)
}

// explainFlagError makes an error of fs.Parse say what to do: a bad value
// names the flag, the value and the range (flagValueError); a misspelled
// flag names the one meant.
func explainFlagError(fs *flag.FlagSet, err error, w io.Writer) error {
	err = flagValueError(fs, err, w)
	// A misspelled flag: name the one meant.
	if name, ok := strings.CutPrefix(fmt.Sprint(err), "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if best, ok := spec.Closest(strings.TrimPrefix(name, "-"), names); ok {
			return fmt.Errorf("%w (did you mean --%s?)", err, best)
		}
	}
	return err
}

// flagValueError rewrites the flag package's "invalid value "0" for flag
// -max-games: max-games=0 is out of range (want 1..1000)" as "--max-games
// 0: out of range (want 1..1000)": the flag, its value and the range, in
// the command line's spelling, once. Other errors are returned as they
// are. A value given to a deprecated spelling (aliasFlag) is reported
// under the flag it sets, after the deprecation line parseFlags prints
// for a spelling that parsed.
func flagValueError(fs *flag.FlagSet, err error, w io.Writer) error {
	if err == nil {
		return nil
	}
	rest, ok := strings.CutPrefix(err.Error(), "invalid value ")
	if !ok {
		return err
	}
	q, err2 := strconv.QuotedPrefix(rest)
	if err2 != nil {
		return err
	}
	v, _ := strconv.Unquote(q)
	name, msg, ok := strings.Cut(strings.TrimPrefix(rest[len(q):], " for flag -"), ": ")
	if !ok || strings.ContainsAny(name, " ") {
		return err
	}
	if f := fs.Lookup(name); f != nil {
		if to, ok := aliasOf(f); ok {
			fmt.Fprintf(w, "%s: warning: --%s is deprecated; use --%s\n", fs.Name(), name, to)
			name = to
		}
	}
	// spec.Table's messages start with key=value; drop what the flag and
	// value already say.
	if after, ok := strings.CutPrefix(msg, name+"="); ok {
		cut := false
		for _, shown := range []string{q, v, strings.TrimSpace(v)} {
			if r, ok := strings.CutPrefix(after, shown); ok && shown != "" && (r == "" || r[0] == ' ' || r[0] == ':') {
				msg, cut = strings.TrimPrefix(strings.TrimLeft(r, ": "), "is "), true
				break
			}
		}
		if i := strings.Index(after, " is "); !cut && i >= 0 {
			msg = after[i+len(" is "):] // the value as the option printed it (0x10 as 16)
		}
	}
	if v == "" {
		v = `""`
	}
	return usagef("--%s %s: %s", name, v, msg)
}

func newFlagSet(c *command, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet("canopy "+c.Name, flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: canopy %s %s\n\n", c.Name, c.Usage)
		if c.Help != "" {
			fmt.Fprintf(w, "%s\n\n", strings.TrimSpace(c.Help))
		} else {
			fmt.Fprintf(w, "%s\n\n", c.Summary)
		}
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(w, "Flags:")
			printFlags(fs)
		}
	}
	return fs
}

// printFlags writes fs's flags to its output as flag.PrintDefaults does,
// naming the type of spec.Table flags (int, float, duration, ...) where
// the flag package would say "value", and showing a default only when
// it is not the type's zero.
func printFlags(fs *flag.FlagSet) {
	w := fs.Output()
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		k, isSpec := f.Value.(interface{ Kind() string })
		if isSpec {
			typ = k.Kind()
		}
		line := "  -" + f.Name
		if typ != "" {
			line += " " + typ
		}
		if len(line) <= 4 {
			line += "\t"
		} else {
			line += "\n    \t"
		}
		line += strings.ReplaceAll(usage, "\n", "\n    \t")
		switch d := f.DefValue; {
		case d == "" || d == "false" || d == "0" || d == "0s":
		case typ == "string":
			line += fmt.Sprintf(" (default %q)", d)
		default:
			line += fmt.Sprintf(" (default %v)", d)
		}
		fmt.Fprintln(w, line)
	})
}

// commandNames returns the commands' names, sorted.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func topUsage(w io.Writer) {
	fmt.Fprintln(w, "Canopy: a Go engine for game-playing AI research.")
	fmt.Fprintln(w, "\nUsage: canopy <command> [flags]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].Summary)
	}
	fmt.Fprintln(w, "\nRun `canopy <command> --help` for a command's flags.")
}

func versionString() string {
	v := "canopy (devel)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " " + s.Value[:12]
			}
		}
		v += " " + bi.GoVersion
	}
	return v
}
