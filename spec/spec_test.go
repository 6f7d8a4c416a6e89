package spec

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	s, err := Parse("mcts:sel=ucb1tuned, c=0.7,sims=2000,time=100ms,noise=on")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "mcts" {
		t.Fatalf("name %q", s.Name)
	}
	if got := s.Choice("sel", "uct", "uct", "ucb1tuned"); got != "ucb1tuned" {
		t.Errorf("sel=%q", got)
	}
	if got := s.Float("c", 1); got != 0.7 {
		t.Errorf("c=%v", got)
	}
	if got := s.Int("sims", 1); got != 2000 {
		t.Errorf("sims=%v", got)
	}
	if got := s.Duration("time", 0); got != 100*time.Millisecond {
		t.Errorf("time=%v", got)
	}
	if !s.Bool("noise", false) {
		t.Error("noise")
	}
	if got := s.Int("absent", 7); got != 7 {
		t.Errorf("default %v", got)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", ":a=1", "x:", "x:a", "x:=1", "x:a=1,a=2"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) succeeded, want error", in)
		}
	}
}

func TestErrReportsBadAndUnknown(t *testing.T) {
	s, _ := Parse("hex:size=abc")
	s.Int("size", 11)
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "integer") {
		t.Errorf("bad int: %v", err)
	}
	s, _ = Parse("hex:sise=9")
	s.Int("size", 11)
	if err := s.Err("size", "swap"); err == nil || !strings.Contains(err.Error(), "sise") || !strings.Contains(err.Error(), "size, swap") {
		t.Errorf("unknown key: %v", err)
	}
	s, _ = Parse("hex:size=99")
	if n := s.IntRange("size", 11, 2, 13); n != 11 || s.Err() == nil {
		t.Errorf("range: %v %v", n, s.Err())
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"hex:size=11", "mcts:sel=uct,c=1.4", "a:b", "::,="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(in)
		if err != nil {
			return
		}
		for _, k := range s.Keys() {
			s.Int(k, 0)
			s.Float(k, 0)
			s.Bool(k, false)
			s.Duration(k, 0)
		}
		_ = s.Err()
	})
}
