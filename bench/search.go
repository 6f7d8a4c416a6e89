package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/cputime"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/selfplay"
)

// SearchConfig is one batched-search throughput measurement: self-play
// with Trees games at once, Sims simulations per move, for Duration.
type SearchConfig struct {
	Game     games.Game
	Backend  nets.Backend
	Trees    int
	Batch    int
	Sims     int
	Leaves   int // leaves in flight per tree (default 1)
	Workers  int // search goroutines (default GOMAXPROCS)
	Wait     time.Duration
	Duration time.Duration
	Seed     uint64
}

// SearchResult reports a measurement. Rates are per wall-clock second;
// NodesPerCPUSec divides by the process's CPU time over the same span
// (the machine may be shared).
type SearchResult struct {
	Game       string  `json:"game"`
	Backend    string  `json:"backend"`
	Trees      int     `json:"trees"`
	Batch      int     `json:"batch"`
	Sims       int     `json:"sims"`
	Leaves     int     `json:"leaves"`
	Workers    int     `json:"workers"`
	GOMAXPROCS int     `json:"gomaxprocs"`
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
	Nodes      int64   `json:"nodes"`
	Evals      int64   `json:"evals"`
	Games      int     `json:"games"`
	Positions  int     `json:"positions"`

	NodesPerSec    float64 `json:"nodes_per_sec"`
	EvalsPerSec    float64 `json:"evals_per_sec"`
	NodesPerCPUSec float64 `json:"nodes_per_cpu_sec"`
	MeanBatch      float64 `json:"mean_batch"`
	Fill           float64 `json:"fill"`
	// BusyFraction is the backend's compute time over the wall time.
	BusyFraction float64 `json:"busy_fraction"`
	QueueP50us   float64 `json:"queue_p50_us"`
	QueueP99us   float64 `json:"queue_p99_us"`
	ComputeP50us float64 `json:"compute_p50_us"`
	ComputeP99us float64 `json:"compute_p99_us"`
}

// Search runs self-play on cfg.Backend for cfg.Duration (or until ctx
// ends) and reports throughput. progress, when non-nil, gets the elapsed
// fraction about every 200 ms.
func Search(ctx context.Context, cfg SearchConfig, progress func(f float64, c engine.Counters)) (SearchResult, error) {
	if cfg.Trees < 1 || cfg.Sims < 1 || cfg.Duration <= 0 {
		return SearchResult{}, fmt.Errorf("bench search: trees %d, sims %d and duration %v must be positive", cfg.Trees, cfg.Sims, cfg.Duration)
	}
	leaves := max(cfg.Leaves, 1)
	e, err := engine.New(cfg.Game, cfg.Backend, engine.Options{
		Workers: cfg.Workers, Leaves: leaves, Batch: cfg.Batch, Wait: cfg.Wait,
		Slots: engine.SlotsFor(cfg.Trees, leaves),
	})
	if err != nil {
		return SearchResult{}, err
	}
	defer e.Close()
	st := selfplay.DefaultSettings()
	st.Sims, st.Leaves = cfg.Sims, leaves
	var nGames, nPos int
	run, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	done := make(chan struct{})
	if progress != nil {
		go func() {
			tk := time.NewTicker(200 * time.Millisecond)
			defer tk.Stop()
			t0 := time.Now()
			for {
				select {
				case <-done:
					return
				case <-tk.C:
					progress(math.Min(1, float64(time.Since(t0))/float64(cfg.Duration)), e.Counters())
				}
			}
		}()
	}
	cpu0, t0 := cputime.Now(), time.Now()
	err = selfplay.Run(run, e, selfplay.Config{Settings: st, Seed: cfg.Seed, NumGames: math.MaxInt32, Trees: cfg.Trees,
		OnGame: func(r *selfplay.GameRecord) error {
			nGames++
			nPos += r.Positions()
			return nil
		}})
	wall, cpu := time.Since(t0), cputime.Now()-cpu0
	close(done)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return SearchResult{}, err
	}
	if ctx.Err() != nil {
		return SearchResult{}, ctx.Err()
	}
	c := e.Counters()
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	r := SearchResult{
		Game: cfg.Game.Spec(), Backend: cfg.Backend.Name(), Trees: cfg.Trees, Batch: e.MaxBatch(), Sims: cfg.Sims,
		Leaves: leaves, Workers: e.Options().Workers, GOMAXPROCS: runtime.GOMAXPROCS(0),
		Seconds: wall.Seconds(), CPUSeconds: cpu.Seconds(), Nodes: c.Nodes, Evals: c.Evals, Games: nGames, Positions: nPos,
		NodesPerSec: float64(c.Nodes) / wall.Seconds(), EvalsPerSec: float64(c.Evals) / wall.Seconds(),
		MeanBatch: c.Batch.Mean, Fill: c.Batch.Fill, BusyFraction: c.Busy.Seconds() / wall.Seconds(),
		QueueP50us: us(c.Batch.QueueWaitP50), QueueP99us: us(c.Batch.QueueWaitP99),
		ComputeP50us: us(c.Batch.ComputeP50), ComputeP99us: us(c.Batch.ComputeP99),
	}
	if cpu > 0 {
		r.NodesPerCPUSec = float64(c.Nodes) / cpu.Seconds()
	}
	return r, nil
}
