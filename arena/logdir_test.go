package arena

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// A tournament writes one log per game into its LogDir, and ReadLogDir
// gives back every game's result (seats, returns, length) for the same
// tournament; logs of another tournament (seed, agents, a game number
// beyond the schedule) are ErrOtherTournament, a stray file an error
// naming it; the directory has one writer at a time.
func TestLogDir(t *testing.T) {
	g := games.MustNew("tictactoe")
	dir := filepath.Join(t.TempDir(), "logs")
	ld, err := OpenLogDir(dir, g)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" {
		if _, err := OpenLogDir(dir, g); err == nil {
			t.Error("a second writer took the log directory")
		}
	}
	specs := []string{"random", "onestep"}
	cfg := TournamentConfig{Agents: specs, Games: 3, Seed: 9, Parallel: 2, OnGame: ld.Write}
	res, err := Tournament(context.Background(), g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ld.Close()
	ld.Close()
	sched, err := Schedule(2, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	names, err := LogFiles(dir)
	if err != nil || len(names) != len(sched) || filepath.Base(names[0]) != "game-000001.json" || LogName(2) != "game-000003.json" {
		t.Fatalf("logs %q, %v", names, err)
	}
	played, err := ReadLogDir(dir, g, specs, sched, 9)
	if err != nil || len(played) != len(sched) {
		t.Fatalf("ReadLogDir: %d games, %v", len(played), err)
	}
	if len(res.Games) != len(sched) {
		t.Fatalf("the tournament reports %d games, want %d", len(res.Games), len(sched))
	}
	for i, want := range res.Games {
		got := played[i]
		if !slices.Equal(got.Seats, want.Seats) || !slices.Equal(got.Returns, want.Returns) || got.Length != want.Length {
			t.Errorf("game %d: read %+v, played %+v", i, got, want)
		}
	}
	for _, tc := range []struct {
		name  string
		specs []string
		sched [][]int
		seed  uint64
	}{
		{"other seed", specs, sched, 10},
		{"other agents", []string{"random", "random"}, sched, 9},
		{"a shorter schedule", specs, sched[:2], 9},
	} {
		if _, err := ReadLogDir(dir, g, tc.specs, tc.sched, tc.seed); !errors.Is(err, ErrOtherTournament) || !strings.Contains(err.Error(), "game-00000") {
			t.Errorf("%s: %v, want ErrOtherTournament naming the log", tc.name, err)
		}
	}
	stray := filepath.Join(dir, "game-1.json")
	os.WriteFile(stray, []byte("{}"), 0o644)
	if _, err := ReadLogDir(dir, g, specs, sched, 9); err == nil || errors.Is(err, ErrOtherTournament) || !strings.Contains(err.Error(), stray) {
		t.Errorf("a stray file: %v, want an error naming it", err)
	}
	os.Remove(stray)
	os.WriteFile(filepath.Join(dir, "game-000002.json"), []byte("{"), 0o644)
	if _, err := ReadLogDir(dir, g, specs, sched, 9); err == nil || !strings.Contains(err.Error(), "delete the file") {
		t.Errorf("a damaged log: %v", err)
	}
	if played, err := ReadLogDir(filepath.Join(dir, "none"), g, specs, sched, 9); err != nil || len(played) != 0 {
		t.Errorf("a directory without logs: %v, %v", played, err)
	}
}
