// Command genbook builds the Connect Four opening book (solver.Book): the
// outcome of every position after solver.BookPly plies, solved by the
// built-in solver. It takes about 4 million solver nodes per position and
// ~92,000 positions (several CPU-hours), so it saves its progress to -out
// every -save interval and on SIGINT/SIGTERM/SIGHUP, and a second run with
// the same -out continues where the first stopped.
//
//	go run ./games/connect4/solver/genbook -out runs/c4-book/book.bin -j 2
//
// When every outcome is known it says so; the file is then the book to
// ship (games/connect4/solver/book.bin).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/canopy-go/canopy/games/connect4"
	"github.com/canopy-go/canopy/games/connect4/solver"
	"github.com/canopy-go/canopy/internal/atomicfile"
	"github.com/canopy-go/canopy/internal/runlock"
)

func main() {
	out := flag.String("out", "runs/c4-book/book.bin", "book file to create or continue")
	workers := flag.Int("j", 1, "positions solved at once (one 64 MiB solver table each)")
	save := flag.Duration("save", time.Minute, "how often progress is written to -out")
	limit := flag.Duration("for", 0, "stop (saving) after this long; 0 = until done")
	flag.Parse()
	if err := run(*out, *workers, *save, *limit); err != nil {
		fmt.Fprintln(os.Stderr, "genbook:", err)
		os.Exit(1)
	}
}

func run(out string, workers int, save, limit time.Duration) error {
	if workers < 1 || workers > 64 {
		return fmt.Errorf("-j %d: want 1..64", workers)
	}
	if save < time.Second {
		return fmt.Errorf("-save %v: want at least 1s", save)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	lock, err := runlock.Acquire(filepath.Dir(out))
	if err != nil {
		return err
	}
	defer lock.Release()
	book := solver.NewBook()
	switch data, err := os.ReadFile(out); {
	case err == nil:
		if err := book.UnmarshalBinary(data); err != nil {
			return fmt.Errorf("%s: %w (move it away to start afresh)", out, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	idx := solver.BookIndex()
	order := treeOrder(idx)
	if len(order) != len(idx) {
		return fmt.Errorf("internal error: the tree walk reached %d of %d book positions", len(order), len(idx))
	}
	start, solvedAtStart := time.Now(), book.Solved()
	fmt.Fprintf(os.Stderr, "genbook: %d of %d positions solved in %s; %d workers\n", solvedAtStart, len(idx), out, workers)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}

	var mu sync.Mutex // guards book between workers and the saver
	next := atomic.Int64{}
	var done atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := solver.New()
			for ctx.Err() == nil {
				k := int(next.Add(1) - 1)
				if k >= len(order) {
					return
				}
				i := order[k]
				mu.Lock()
				known := book.At(i) != solver.Unknown
				mu.Unlock()
				if known {
					continue
				}
				v := s.Outcome(idx[i])
				mu.Lock()
				book.Set(i, v)
				mu.Unlock()
				done.Add(1)
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()

	write := func() error {
		mu.Lock()
		data, _ := book.MarshalBinary()
		mu.Unlock()
		return atomicfile.WriteFile(out, data)
	}
	tick := time.NewTicker(save)
	defer tick.Stop()
	for {
		select {
		case <-finished:
			if err := write(); err != nil {
				return err
			}
			n := book.Solved()
			if n == len(idx) {
				fmt.Fprintf(os.Stderr, "genbook: complete, %d positions, in %s\n", n, out)
			} else {
				fmt.Fprintf(os.Stderr, "genbook: stopped at %d of %d; run again to continue\n", n, len(idx))
			}
			return nil
		case <-tick.C:
			if err := write(); err != nil {
				return err
			}
			d := done.Load()
			el := time.Since(start)
			rate := float64(d) / el.Seconds()
			left := len(idx) - solvedAtStart - int(d)
			eta := "?"
			if rate > 0 {
				eta = (time.Duration(float64(left)/rate) * time.Second).Round(time.Minute).String()
			}
			fmt.Fprintf(os.Stderr, "genbook: %d/%d solved (%.2f/s this run), about %s left\n",
				solvedAtStart+int(d), len(idx), rate, eta)
		}
	}
}

// treeOrder returns the indices of idx (every book position) in the order a
// depth-first walk of the game tree from the empty board first reaches
// them, centre columns first. Positions close in that order share most of
// their subtrees (they differ in one or two stones, so their searches
// transpose into each other), and a solver whose table still holds the
// previous searches' bounds needs about 2.5x fewer nodes per position than
// in index (key) order, where neighbours are unrelated.
func treeOrder(idx []connect4.Position) []int {
	at := make(map[uint64]int, len(idx))
	for i, p := range idx {
		at[canonical(p.Key())] = i
	}
	order := make([]int, 0, len(idx))
	expanded := make(map[uint64]bool, len(idx))
	var walk func(p connect4.Position)
	walk = func(p connect4.Position) {
		if p.Moves() == solver.BookPly {
			if i, ok := at[canonical(p.Key())]; ok {
				order = append(order, i)
				delete(at, canonical(p.Key()))
			}
			return
		}
		if p.LastMoverWon() || expanded[p.Key()] {
			return
		}
		expanded[p.Key()] = true
		for _, col := range [...]int{3, 2, 4, 1, 5, 0, 6} {
			if p.CanPlay(col) {
				q := p
				q.Play(col)
				walk(q)
			}
		}
	}
	walk(connect4.Position{})
	return order
}

func canonical(key uint64) uint64 { return min(key, solver.MirrorKey(key)) }
