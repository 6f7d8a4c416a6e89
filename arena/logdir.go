package arena

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/rundir"
)

// A tournament's log directory holds one game log per finished game,
//
//	game-NNNNNN.json    the log (WriteLog) of game NNNNNN, numbered from 1
//
// each written atomically once its game ends, so that a tournament
// interrupted at any moment (kill -9 included) resumes from the games it
// finished (ReadLogDir, TournamentConfig.Played) and a running one's logs
// can be read at any time (`canopy arena --report`).

// ErrOtherTournament is wrapped by ReadLogDir's error for a log that is
// not a game of the tournament asked for (another game, other players or
// seed, a number beyond its schedule): the request, not the directory, is
// wrong.
var ErrOtherTournament = errors.New("a game of another tournament")

// otherTournament is an error that is ErrOtherTournament, with its own
// message.
type otherTournament string

func (e otherTournament) Error() string        { return string(e) }
func (e otherTournament) Is(target error) bool { return target == ErrOtherTournament }

// LogDir is a tournament's log directory held by this process (one
// writer at a time: internal/rundir). Write is safe for concurrent use.
type LogDir struct {
	g  games.Game
	rd *rundir.Dir
}

// OpenLogDir creates dir when missing and takes it for the logs of a
// tournament of g; the lock lasts until Close. A directory held by
// another process is a *runlock.BusyError naming it.
func OpenLogDir(dir string, g games.Game) (*LogDir, error) {
	rd, err := rundir.Open(dir)
	if err != nil {
		return nil, err
	}
	return &LogDir{g: g, rd: rd}, nil
}

// LogName is the file name of game i's log (i from 0).
func LogName(i int) string { return fmt.Sprintf("game-%06d.json", i+1) }

// Write saves game i's log, made from its record and chance seed,
// atomically; its signature is TournamentConfig.OnGame's.
func (d *LogDir) Write(i int, rec *Record, chanceSeed uint64) error {
	l, err := LogFromRecord(d.g, rec, chanceSeed)
	if err != nil {
		return fmt.Errorf("game log %d: %w", i+1, err)
	}
	var buf bytes.Buffer
	if err := WriteLog(&buf, l); err != nil {
		return fmt.Errorf("game log %d: %w", i+1, err)
	}
	return d.rd.WriteFile(LogName(i), buf.Bytes())
}

// Close releases the directory. Calls on nil do nothing.
func (d *LogDir) Close() error {
	if d == nil {
		return nil
	}
	return d.rd.Close()
}

// LogFiles lists the game logs in dir (their paths, in name order).
func LogFiles(dir string) ([]string, error) {
	return filepath.Glob(filepath.Join(dir, "game-*.json"))
}

// ReadLogDir reads the game logs in dir of the tournament of g between
// specs, whose game i seats sched[i] under seed, and returns their
// results by game index. Each log must be a finished game of this very
// tournament: its name game-NNNNNN.json with NNNNNN a game of sched, its
// game, players (sched's seats) and chance seed those of that game (an
// error wrapping ErrOtherTournament otherwise), its moves replaying
// legally to its recorded returns (ReadLog). Any other problem is an
// error naming the file. ReadLogDir takes no lock: logs are written
// atomically, so a running tournament's are safe to read.
func ReadLogDir(dir string, g games.Game, specs []string, sched [][]int, seed uint64) (map[int]GameResult, error) {
	names, err := LogFiles(dir)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	played := make(map[int]GameResult, len(names))
	for _, name := range names {
		base := filepath.Base(name)
		var n int
		if _, err := fmt.Sscanf(base, "game-%06d.json", &n); err != nil || base != LogName(n-1) {
			return nil, fmt.Errorf("%s is not named game-NNNNNN.json: move it out of %s", name, dir)
		}
		if n < 1 || n > len(sched) {
			return nil, otherTournament(fmt.Sprintf("%s is game %d, but this tournament has %d games: use the earlier run's --agents and --games, or choose another --logs directory", name, n, len(sched)))
		}
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		l, _, err := ReadLog(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %v (delete the file to play that game again)", name, err)
		}
		i := n - 1
		want := make([]string, len(sched[i]))
		for s, a := range sched[i] {
			want[s] = specs[a]
		}
		if l.Game != g.Spec() || !slices.Equal(l.Players, want) || l.Seed != ChanceSeed(seed, i) {
			return nil, otherTournament(fmt.Sprintf("%s was played with other settings (game %s, players %q, chance seed %d; this run's game %d is %s, %q, %d): use the earlier run's --game, --agents, --games and --seed, or choose another --logs directory",
				name, l.Game, l.Players, l.Seed, n, g.Spec(), want, ChanceSeed(seed, i)))
		}
		r, err := l.Result(sched[i])
		if err != nil {
			return nil, fmt.Errorf("%s: %v (delete the file to play that game again)", name, err)
		}
		played[i] = r
	}
	return played, nil
}
