package zero

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/canopy-go/canopy/fleet"
	"github.com/canopy-go/canopy/selfplay"
	"github.com/nats-io/nats.go"
)

// Fleet has a run's self-play played by `canopy worker` processes
// through NATS JetStream (package fleet) instead of in this process. The
// games are the ones in-process self-play would write (game i of an
// iteration is seeded from the iteration's seed and i wherever it is
// played), so a run may switch between the two at any restart. The run
// directory gains fleet.json (the run's id on the server) and, with an
// embedded server, nats/ (its JetStream store).
type Fleet struct {
	// URL is the NATS server's URL, or "embedded": a server started in
	// the run's process, its store in the run directory's nats/, listening
	// on Listen.
	URL    string
	Listen string // embedded only: host:port; default 127.0.0.1:4222
	// Name prefixes the streams and buckets on the server (default
	// "canopy"); one trainer per name.
	Name     string
	Security fleet.Security
	// Workers, embedded only: the workers' user and password file, a user
	// confined to what workers do (fleet.ServerOptions.Workers); Security
	// is then the trainer's alone.
	Workers fleet.Security
	// AckWait is how long a dead worker's games wait before others take
	// them (default 30 s).
	AckWait time.Duration
	// Replicas is the replication of the fleet's streams and buckets on
	// a clustered server (default 1).
	Replicas int
	// MaxAckPending and MaxWaiting are the workers' consumer's limits
	// (fleet.Setup; 0: the defaults).
	MaxAckPending, MaxWaiting int
}

// fleetName is the file in the run directory holding the run's fleet
// identity.
const fleetName = "fleet.json"

// originsName is the file of a fleet iteration's self-play directory
// saying who played each game: JSON lines of gameOrigin.
const originsName = "origins.jsonl"

// gameOrigin is a line of origins.jsonl.
type gameOrigin struct {
	ID int `json:"id"`
	// Network is the SHA-256 of the network that played the game (in an
	// asynchronous run, not always the manifest's).
	Network string `json:"network"`
	fleet.Origin
}

// fleetState is what fleet.json holds.
type fleetState struct {
	// Run is a random id that tags the run's jobs, tasks and games on
	// the server, so that games of another run are never taken for this
	// one's.
	Run string `json:"run"`
}

// startFleet starts (for "embedded") and connects to the server and
// creates the fleet; the returned function stops them.
func (r *runner) startFleet(ctx context.Context) (stop func(), err error) {
	f := *r.opt.Fleet
	if f.Name == "" {
		f.Name = "canopy"
	}
	// The connection's callbacks log from goroutines of their own.
	r.opt.Log = &lockedWriter{w: r.opt.Log}
	var st fleetState
	path := r.path(fleetName)
	if ok, err := readJSON(path, &st); err != nil {
		return nil, err
	} else if !ok || st.Run == "" {
		var b [8]byte
		rand.Read(b[:])
		st.Run = hex.EncodeToString(b[:])
		if err := writeJSON(path, st); err != nil {
			return nil, err
		}
	}
	r.fleetRun = st.Run
	url := f.URL
	var srv *fleet.Server
	if url == "embedded" {
		srv, err = fleet.StartServer(fleet.ServerOptions{StoreDir: r.path("nats"), Listen: f.Listen, Security: f.Security,
			Fleet: f.Name, Workers: f.Workers})
		if err != nil {
			return nil, err
		}
		url = srv.URL()
		r.logf("fleet: embedded NATS server on %s (store %s); start workers with: canopy worker --nats %s --nats-name %s", url, r.path("nats"), url, f.Name)
	}
	stopSrv := func() {
		if srv != nil {
			srv.Close()
		}
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var nc *nats.Conn
	if srv != nil {
		// In process: no network, no TLS (which the server's
		// certificate, a server's, need not allow a client).
		nc, err = fleet.ConnectInProcess(srv, f.Security, "canopy zero "+filepath.Base(r.dir), r.logf)
	} else {
		nc, err = fleet.Connect(cctx, url, f.Security, "canopy zero "+filepath.Base(r.dir), r.logf)
	}
	if err != nil {
		stopSrv()
		return nil, err
	}
	t, err := fleet.NewTrainer(cctx, nc, fleet.Setup{Name: f.Name, Run: st.Run, Holder: r.dir,
		AckWait: f.AckWait, Replicas: f.Replicas, MaxAckPending: f.MaxAckPending, MaxWaiting: f.MaxWaiting}, r.opt.Log)
	if err != nil {
		nc.Close()
		stopSrv()
		if errors.Is(err, fleet.ErrNameInUse) {
			return nil, err
		}
		return nil, fmt.Errorf("%v (is the NATS server at %s running with JetStream enabled?)", err, url)
	}
	r.trainer = t
	return func() {
		t.Close()
		nc.Drain()
		waitClosed(nc)
		stopSrv()
	}, nil
}

// lockedWriter serialises the writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// waitClosed waits (a little) until a draining connection has closed.
func waitClosed(nc *nats.Conn) {
	for range 50 {
		if nc.IsClosed() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	nc.Close()
}

// fleetSelfPlay has the workers play iteration i's games that dir (with
// manifest m) lacks, with network file netPath.
func (r *runner) fleetSelfPlay(ctx context.Context, i int, dir, netPath string, m selfplay.Manifest) (SelfPlayRecord, error) {
	var out SelfPlayRecord
	m.Backend = "fleet"
	o, err := selfplay.OpenOutput(dir, m, true)
	if err != nil {
		return out, err
	}
	for _, w := range o.Warnings() {
		r.logf("  warning: %s", w)
	}
	// The trainer acknowledges games when their shard is written: flush
	// well within AckWait, or the server would deliver them again.
	if aw := r.opt.Fleet.AckWait; aw > 0 {
		o.FlushEvery = min(o.FlushEvery, aw/3)
	}
	job := fleet.Job{Run: r.fleetRun, Iteration: i, Game: m.Game, Settings: m.Settings, Semantics: selfplay.Semantics,
		Seed: m.Seed, Games: m.Games, Network: filepath.Base(netPath), NetworkSHA256: m.NetworkSHA256, Async: r.cfg.Async}
	// The networks' names by SHA-256, for the log.
	netNames := map[string]string{m.NetworkSHA256: filepath.Base(netPath)}
	r.trainer.Newest = nil
	if r.newest != nil {
		r.trainer.Newest = func() (string, string) {
			_, file, sum := r.newest.get()
			return file, sum
		}
	}
	// Who played each game, one JSON line per game added (a game played
	// again after a crash has a later line).
	origins, err := os.OpenFile(filepath.Join(dir, originsName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return out, err
	}
	defer origins.Close()
	enc := json.NewEncoder(origins)
	t0 := time.Now()
	pending := len(o.Pending())
	var done, positions int
	var nodes int64
	byNet := map[string]int{}
	st, err := r.trainer.SelfPlay(ctx, job, netPath, o, func(fg *fleet.Game, st fleet.Stats) {
		g := fg.Record
		done++
		positions += g.Positions()
		nodes += g.Nodes
		byNet[fg.NetworkSHA256]++
		if _, ok := netNames[fg.NetworkSHA256]; !ok && r.newest != nil {
			if _, file, sum := r.newest.get(); sum == fg.NetworkSHA256 {
				netNames[sum] = filepath.Base(file)
			}
		}
		enc.Encode(gameOrigin{ID: g.ID, Network: fg.NetworkSHA256, Origin: fg.Origin})
		el := time.Since(t0).Seconds()
		dropped := ""
		if n := st.Invalid + st.Mismatched + st.Failed; n > 0 {
			dropped = fmt.Sprintf("; dropped %d invalid, %d of another self-play version, %d failed", st.Invalid, st.Mismatched, st.Failed)
		}
		r.opt.Status(fmt.Sprintf("iteration %d self-play (fleet): %d/%d games, %.1f games/s, %.0f simulations/s%s", i, done, pending, float64(done)/el, float64(nodes)/el, dropped))
	})
	if err != nil {
		return out, err
	}
	mf := o.Manifest()
	el := time.Since(t0).Seconds()
	out = SelfPlayRecord{Games: mf.Totals.Games, Positions: mf.Totals.Positions, Seconds: el, NewGames: st.Games}
	r.logf("  self-play (fleet): %d games, %d positions (%d games this session, %.1f games/s; dropped: %d duplicates, %d stale, %d invalid, %d of another self-play version; %d tasks failed)",
		out.Games, out.Positions, st.Games, float64(st.Games)/max(el, 1e-9), st.Duplicates, st.Stale, st.Invalid, st.Mismatched, st.Failed)
	if r.cfg.Async && len(byNet) > 0 {
		var parts []string
		for sum, n := range byNet {
			name := netNames[sum]
			if name == "" {
				name = sum[:min(12, len(sum))]
			}
			parts = append(parts, fmt.Sprintf("%s %d", name, n))
		}
		sort.Strings(parts)
		r.logf("  games of this session by network: %s", strings.Join(parts, ", "))
	}
	return out, nil
}
