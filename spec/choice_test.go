package spec

import (
	"strings"
	"testing"
)

// A misspelled choice value names the one meant, like a misspelled option
// key does (issue 39, also-fix list: "did you mean" for options), through
// both ways of reading a choice: a declared Table and Spec.Choice.
func TestChoiceSuggests(t *testing.T) {
	var sel string
	tab := Table{Choice("sel", &sel, "uct", []string{"uct", "ucb1tuned", "puct"}, "selection rule")}
	s, err := Parse("mcts:sel=uctt")
	if err != nil {
		t.Fatal(err)
	}
	err = tab.Parse(s)
	if err == nil || !strings.Contains(err.Error(), `(did you mean "uct"?)`) {
		t.Errorf("Table.Parse(sel=uctt) = %v, want it to suggest uct", err)
	}

	s, err = Parse("hex:heuristic=twodistanse")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Choice("heuristic", "path", "twodistance", "path"); got != "path" {
		t.Errorf("Choice with a bad value = %q, want the default", got)
	}
	if err := s.Err("heuristic"); err == nil || !strings.Contains(err.Error(), `(did you mean "twodistance"?)`) {
		t.Errorf("Spec.Choice(heuristic=twodistanse) error = %v, want it to suggest twodistance", err)
	}

	// A value far from every choice gets no suggestion.
	s, _ = Parse("mcts:sel=zzzzzzzz")
	if err := tab.Parse(s); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("Table.Parse(sel=zzzzzzzz) = %v, want an error without a suggestion", err)
	}
}
