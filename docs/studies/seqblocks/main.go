// Command seqblocks reads Sequence game logs written by `canopy arena
// --logs` and counts open-four blocks: for each side, the turns on which
// it held a card that blocks an open four of the opponent's
// (sequence.State.BlocksFive on some legal action) and the turns it
// played such a block, split by whether the searching side (every seat
// whose agent spec does not start with the -opponent name) won the game.
// For each lost game it also says whether the opponent's winning square
// was among the searcher's legal placements on its turn before.
//
// RESULTS.md section 9 (session 17) quotes its output:
//
//	go run ./docs/studies/seqblocks runs/studies/sequence-s16/state-0033/az-state-vs-greedy.games
//
// Every log is replayed and checked (arena.ReadLog); a log that does not
// replay is an error naming the file.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/all"
	"github.com/canopy-go/canopy/games/sequence"
)

// tally counts one side's open-four turns over a set of games.
type tally struct {
	turns   int // turns with a legal block of an opponent's open four
	blocked int // of those, turns on which the side played a block
}

// outcome gathers the games the searcher won or did not win.
type outcome struct {
	games            int
	searcher, opp    tally
	winSquareInReach int // lost games: the winning square was a legal placement of the searcher's previous turn
}

func main() {
	opponent := flag.String("opponent", "sequence-greedy", "agent spec prefix of the non-searching side")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: seqblocks [-opponent NAME] DIR|FILE...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	var won, lost outcome
	n := 0
	for _, arg := range flag.Args() {
		files, err := logFiles(arg)
		if err != nil {
			fail(err)
		}
		for _, f := range files {
			if err := analyse(f, *opponent, &won, &lost); err != nil {
				fail(fmt.Errorf("%s: %v", f, err))
			}
			n++
		}
	}
	if n == 0 {
		fail(errors.New("no game logs (game-*.json) found"))
	}
	for _, o := range []struct {
		name string
		o    outcome
	}{{"won", won}, {"lost or drawn", lost}} {
		fmt.Printf("%s: %d games; searcher blocked in %d of %d turns with a block at hand, opponent in %d of %d\n",
			o.name, o.o.games, o.o.searcher.blocked, o.o.searcher.turns, o.o.opp.blocked, o.o.opp.turns)
	}
	fmt.Printf("lost games whose winning square the searcher could have taken on its turn before: %d of %d\n",
		lost.winSquareInReach, lost.games)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "seqblocks:", err)
	os.Exit(1)
}

// logFiles lists the game logs of a directory, or returns a file as is.
func logFiles(arg string) ([]string, error) {
	st, err := os.Stat(arg)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{arg}, nil
	}
	return filepath.Glob(filepath.Join(arg, "game-*.json"))
}

// analyse replays one log and adds it to won or lost.
func analyse(path, opponent string, won, lost *outcome) error {
	buf, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	l, _, err := arena.ReadLog(bytes.NewReader(buf))
	if err != nil {
		return err
	}
	if l.Returns == nil {
		return errors.New("the game is not finished")
	}
	searcher := -1
	for p, spec := range l.Players {
		if !strings.HasPrefix(spec, opponent) {
			if searcher >= 0 {
				return fmt.Errorf("more than one seat is not %s", opponent)
			}
			searcher = p
		}
	}
	if searcher < 0 {
		return fmt.Errorf("every seat is %s", opponent)
	}
	g, err := games.New(l.Game)
	if err != nil {
		return err
	}
	s, ok := g.NewInitialState().(*sequence.State)
	if !ok {
		return fmt.Errorf("game %s is not sequence", l.Game)
	}
	o := lost
	if l.Returns[searcher] > 0 {
		o = won
	}
	o.games++
	mask := games.NewMask(g.NumActions())
	var reach map[string]bool // squares of the searcher's legal placements on its last turn
	for i, mv := range l.Moves {
		a, err := s.ParseAction(mv.Action)
		if err != nil {
			return fmt.Errorf("move %d: %v", i+1, err)
		}
		if mv.Player >= 0 {
			s.Legal(mask)
			if mv.Player == searcher {
				reach = map[string]bool{}
				for m := range mask.All() {
					if _, sq, ok := strings.Cut(s.ActionString(m), "@"); ok {
						reach[sq] = true
					}
				}
			}
			t := &o.opp
			if mv.Player == searcher {
				t = &o.searcher
			}
			for m := range mask.All() {
				if s.BlocksFive(m) {
					t.turns++
					if s.BlocksFive(a) {
						t.blocked++
					}
					break
				}
			}
			if i == len(l.Moves)-1 && o == lost && mv.Player != searcher {
				if _, sq, ok := strings.Cut(mv.Action, "@"); ok && reach[sq] {
					o.winSquareInReach++
				}
			}
		}
		s.Apply(a)
	}
	return nil
}
