package fleet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/selfplay"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Trainer is the trainer's side of a fleet: it publishes jobs and
// collects their games into run directories, and has the workers play
// evaluation games (Evaluate). It is used by one goroutine at a time,
// except that one Evaluate may run beside SelfPlay.
type Trainer struct {
	nc    *nats.Conn
	setup Setup
	log   io.Writer
	// mu guards h and lease, which recreate replaces while Evaluate may
	// run in another goroutine.
	mu    sync.Mutex
	h     *handles
	lease *lease
	// netMu serializes publishNet: SelfPlay and Evaluate may publish the
	// same network at once, and a second Put of a name replaces the
	// first object, purging its chunks under a worker that is reading
	// them (that worker then waits for chunks that never come).
	netMu sync.Mutex
	// FetchWait bounds one wait for games; it also paces the flushes of
	// games buffered for longer than the Output's FlushEvery.
	FetchWait time.Duration
	// Newest, when set, is asked for the newest network between fetches
	// of an asynchronous job (Job.Async): its file and that file's
	// SHA-256, or "" to keep the job's. SelfPlay publishes a new one as
	// the job's network. It takes the games of an asynchronous job
	// whatever their network (each game records its own): only this
	// run's trainer publishes its jobs. It is called from SelfPlay's
	// goroutine.
	Newest func() (file, sha256 string)
}

// NewTrainer creates the fleet s on nc's server (streams, buckets and
// consumers; those that exist are updated to s), takes the fleet name's
// lease for s.Run (an error names the trainer of another run that holds
// it) and returns its trainer, which Close releases. log receives one
// line per notable event (nil discards).
func NewTrainer(ctx context.Context, nc *nats.Conn, s Setup, log io.Writer) (*Trainer, error) {
	if err := CheckName(s.Name); err != nil {
		return nil, err
	}
	if s.Run == "" {
		return nil, errors.New("fleet: Setup.Run is empty: the trainer needs its run's id")
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	if log == nil {
		log = io.Discard
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	h, err := create(ctx, js, s)
	if err != nil {
		return nil, err
	}
	t := &Trainer{nc: nc, h: h, setup: s, log: log, FetchWait: 500 * time.Millisecond}
	if mp := nc.MaxPayload(); mp > 0 {
		t.logf("  fleet: the server's max_payload is %s: games larger than %s travel through object store %s",
			byteSize(mp), byteSize(messageLimit(mp)), h.n.large())
	}
	t.lease, err = acquireLease(ctx, h.state, s.Name, leaseHolder{Run: s.Run, Holder: s.Holder, TTL: s.LeaseTTL}, t.logf)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// hs returns the fleet's handles; ls the lease.
func (t *Trainer) hs() *handles {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.h
}

func (t *Trainer) ls() *lease {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lease
}

// Close releases the fleet name's lease (another run's trainer may then
// start at once). The trainer is not used after Close.
func (t *Trainer) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	t.ls().release(ctx)
}

func (t *Trainer) logf(format string, args ...any) { fmt.Fprintf(t.log, format+"\n", args...) }

// Stats count what a SelfPlay call received.
type Stats struct {
	Games      int // games added to the run directory
	Duplicates int // games whose id the run already had (or had buffered)
	Stale      int // games of another run, iteration or network, dropped
	Bad        int // messages that were not games (terminated, never redelivered)
	Invalid    int // games that do not fit the job's game (terminated, never redelivered)
	Mismatched int // games of another self-play semantics (Job.Semantics; terminated)
	Failed     int // tasks a worker gave up on after repeated failures
}

// SelfPlay has the fleet play job's games that o still lacks and writes
// them to o: it stores the network file netFile as job.Network (unless the
// object store holds those bytes already), publishes job, queues one task
// per pending game and consumes finished games until o has them all.
// job.NetworkSHA256 must be the file's SHA-256, and o the output of the
// self-play run job describes (the same settings, seed and game count).
// onGame, when set, sees every game added (with who played it and with
// which network) and the counts so far. Games are acknowledged to the server only after they are on
// disk (see the package doc). A job.Semantics of 0 means this build's
// selfplay.Semantics.
//
// When ctx ends, the games received so far are flushed, acknowledged,
// and ctx.Err() is returned; the tasks stay queued for the next call.
func (t *Trainer) SelfPlay(ctx context.Context, job Job, netFile string, o *selfplay.Output, onGame func(*Game, Stats)) (Stats, error) {
	var st Stats
	if job.Semantics == 0 {
		job.Semantics = selfplay.Semantics
	}
	if job.Build == "" {
		job.Build = build()
	}
	if err := t.ls().err(); err != nil {
		return st, err
	}
	g, err := games.New(job.Game)
	if err != nil {
		return st, fmt.Errorf("fleet: the job's game: %w", err)
	}
	if m := o.Manifest(); m.Game != job.Game {
		return st, fmt.Errorf("fleet: the job plays %s, but its self-play directory holds %s", job.Game, m.Game)
	}
	var gone backoff
	for {
		if err := t.ls().err(); err != nil {
			return st, err
		}
		if err := t.publishNet(ctx, job, netFile); err != nil {
			return st, err
		}
		data, err := json.Marshal(job)
		if err != nil {
			return st, err
		}
		if _, err := t.hs().state.Put(ctx, jobKey, data); err != nil {
			return st, fmt.Errorf("fleet: publishing the job: %w", err)
		}
		pending := o.Pending()
		if err := t.queue(ctx, job, pending); err != nil {
			return st, err
		}
		t.logf("  fleet: %d games queued for the workers (job %s iteration %d, network %s)", len(pending), job.Run, job.Iteration, job.Network)
		// A collect of an asynchronous job may change its network: each
		// round starts from the first (whose file is netFile) and
		// collect publishes the newest again.
		cur := job
		err = t.collect(ctx, &cur, shapeOf(g), pending, o, &st, onGame)
		if !errors.Is(err, errFleetGone) || ctx.Err() != nil {
			if err != nil {
				return st, err
			}
			break
		}
		// The server lost the fleet's streams (its store): make them
		// again and queue what is still missing.
		t.logf("  fleet: the fleet's streams are gone from the server (store lost?): creating them again")
		for {
			err := t.recreate(ctx)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return st, ctx.Err()
			}
			if errors.Is(err, ErrNameInUse) {
				return st, err
			}
			gone.fail(ctx, t.logf, "creating the fleet again", err)
		}
		gone.ok(t.logf, "creating the fleet again")
	}
	// Every game is on disk: the tasks left (duplicates of played games)
	// are of no use.
	if err := t.hs().tasks.Purge(ctx, jetstream.WithPurgeSubject(t.hs().n.taskSubject(job.Iteration))); err != nil {
		t.logf("  fleet: warning: cannot purge iteration %d's remaining tasks: %v (workers will drop them)", job.Iteration, err)
	}
	return st, nil
}

// publishNet stores netFile's bytes as job.Network after checking their
// SHA-256, unless an object of that name and digest is there.
func (t *Trainer) publishNet(ctx context.Context, job Job, netFile string) error {
	t.netMu.Lock()
	defer t.netMu.Unlock()
	if info, err := t.hs().nets.GetInfo(ctx, job.Network); err == nil && info.Metadata["sha256"] == job.NetworkSHA256 {
		return nil
	}
	data, err := os.ReadFile(netFile)
	if err != nil {
		return err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != job.NetworkSHA256 {
		return fmt.Errorf("fleet: %s has SHA-256 %x, the job says %s", netFile, sum, job.NetworkSHA256)
	}
	meta := jetstream.ObjectMeta{Name: job.Network, Description: "canopy network", Metadata: map[string]string{"sha256": job.NetworkSHA256},
		Opts: &jetstream.ObjectMetaOptions{ChunkSize: chunkSize(t.nc.MaxPayload())}}
	if _, err := t.hs().nets.Put(ctx, meta, bytes.NewReader(data)); err != nil {
		return fmt.Errorf("fleet: storing network %s: %w", job.Network, err)
	}
	return nil
}

// queue makes the queue of job's iteration one task per id: it purges
// the tasks of the iteration left on the server, then publishes each
// task with a Nats-Msg-Id of a new generation (task.Again), which its
// game's message carries too.
//
// Not the ids of an earlier queueing: a server killed (kill -9) may come
// back with tasks in its stream that its consumer's stored state has
// moved past, never delivered again, and within the duplicate window
// their ids would drop the new tasks as duplicates, leaving the trainer
// waiting for ever (TestRestartedTrainerQueuesStrandedTasksAgain). The
// purge removes those and the copies still deliverable, whose games
// would be played twice; a game of an earlier generation that still
// arrives (a worker was playing it) is taken all the same, and its
// second copy dropped by id.
func (t *Trainer) queue(ctx context.Context, job Job, ids []int) error {
	h := t.hs()
	subj := h.n.taskSubject(job.Iteration)
	if err := h.tasks.Purge(ctx, jetstream.WithPurgeSubject(subj)); err != nil {
		return fmt.Errorf("fleet: removing iteration %d's earlier tasks: %w", job.Iteration, err)
	}
	again := generation()
	const window = 1024 // publishes in flight at once
	for lo := 0; lo < len(ids); lo += window {
		var acks []jetstream.PubAckFuture
		for _, id := range ids[lo:min(lo+window, len(ids))] {
			body, _ := json.Marshal(task{Run: job.Run, Iteration: job.Iteration, ID: id, Again: again})
			f, err := h.js.PublishAsync(subj, body, jetstream.WithMsgID(msgID(job.Run, job.Iteration, id)+again))
			if err != nil {
				return fmt.Errorf("fleet: queueing tasks: %w", err)
			}
			acks = append(acks, f)
		}
		for _, f := range acks {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				return fmt.Errorf("fleet: queueing tasks: %w", err)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// generation returns a new task.Again suffix for a queueing of tasks:
// ".g" and 64 random bits, unique to it.
func generation() string {
	return ".g" + strconv.FormatUint(rand.Uint64(), 36)
}

// requeue queues game id's task again after its game message m was
// dropped. The message id names m's stream sequence: a second requeue
// for m (m redelivered after a crash) adds nothing.
func (t *Trainer) requeue(ctx context.Context, job Job, id int, m jetstream.Msg) {
	again := ".again." + strconv.FormatInt(time.Now().UnixNano(), 36)
	if md, err := m.Metadata(); err == nil {
		again = ".again." + strconv.FormatUint(md.Sequence.Stream, 10)
	}
	body, _ := json.Marshal(task{Run: job.Run, Iteration: job.Iteration, ID: id, Again: again})
	if _, err := t.hs().js.Publish(ctx, t.hs().n.taskSubject(job.Iteration), body,
		jetstream.WithMsgID(msgID(job.Run, job.Iteration, id)+again)); err != nil && ctx.Err() == nil {
		t.logf("  fleet: warning: cannot queue game %d again: %v (the next trainer start queues it)", id, err)
	}
}

// heldMsg is a message delivered but not yet acknowledged, with the
// object in N-large holding its game, if any, deleted once it is
// acknowledged.
type heldMsg struct {
	m      jetstream.Msg
	object string
}

// collect consumes games until o holds every id of pending; a game
// that does not fit shape is dropped.
//
// held are messages delivered but not yet acknowledged: games in o's
// buffer, and duplicates of those (or of games on disk). They are
// acknowledged right after the next flush writes the buffer.
//
// It returns an error wrapping errFleetGone when a stream, bucket or
// consumer of the fleet is no longer on the server.
//
// For an asynchronous job, it publishes the network t.Newest names when
// it changes, updating *job, and takes the games of any network.
func (t *Trainer) collect(ctx context.Context, job *Job, shape gameShape, pending []int, o *selfplay.Output, st *Stats, onGame func(*Game, Stats)) error {
	cons, err := t.hs().js.Consumer(ctx, t.hs().n.games(), trainerConsumer)
	if notYet(err) {
		return fmt.Errorf("%w: %v", errFleetGone, err)
	}
	if err != nil {
		return fmt.Errorf("fleet: the trainer's consumer: %w", err)
	}
	need := make(map[int]bool, len(pending))
	for _, id := range pending {
		need[id] = true
	}
	wanted := len(need) // len(need) when a game last came
	var held []heldMsg
	var heldSince time.Time
	flushed := o.Manifest().Totals.Games
	ackHeld := func() {
		for _, h := range held {
			h.m.Ack() // a lost ack means a redelivery, which the id check drops
			if h.object != "" {
				t.dropObject(ctx, h.object)
			}
		}
		held = held[:0]
		flushed = o.Manifest().Totals.Games
	}
	flush := func() error {
		if err := o.Flush(); err != nil {
			return err
		}
		ackHeld()
		return nil
	}
	hold := func(m jetstream.Msg, object string) {
		if len(held) == 0 {
			heldSince = time.Now()
		}
		held = append(held, heldMsg{m, object})
	}
	// drop terminates m, whose game id was wanted but cannot be taken,
	// and queues its task again: this may have been its only copy.
	drop := func(m jetstream.Msg, id int, object string) {
		t.requeue(ctx, *job, id, m)
		m.Term()
		if object != "" {
			t.dropObject(ctx, object)
		}
	}
	// mismatched are the (worker, semantics) pairs already logged.
	mismatched := map[string]bool{}
	newest := func() error {
		if !job.Async || t.Newest == nil {
			return nil
		}
		file, sum := t.Newest()
		if file == "" || sum == job.NetworkSHA256 {
			return nil
		}
		next := *job
		next.Network, next.NetworkSHA256 = filepath.Base(file), sum
		if err := t.publishNet(ctx, next, file); err != nil {
			return err
		}
		data, err := json.Marshal(next)
		if err != nil {
			return err
		}
		if _, err := t.hs().state.Put(ctx, jobKey, data); err != nil {
			return fmt.Errorf("fleet: publishing the job: %w", err)
		}
		*job = next
		t.logf("  fleet: iteration %d's games now played with network %s", job.Iteration, job.Network)
		return nil
	}
	// lostFleet flushes what is buffered (a failed flush is the error:
	// the disk comes first) and reports the fleet gone.
	lostFleet := func(err error) error {
		if ferr := flush(); ferr != nil {
			return ferr
		}
		if err == nil {
			return errFleetGone
		}
		return fmt.Errorf("%w: %v", errFleetGone, err)
	}
	// A server that cannot answer fails each fetch at once: back off.
	var lost, large, publishing backoff
	// While no game comes, the trainer checks every goneEvery that the
	// fleet is still whole on the server (a server that lost part of its
	// store answers the fetches of what is left).
	checked := time.Now()
	// Once no game has come for strandedAfter, the trainer asks the
	// server (then every goneEvery) whether the workers' consumer has
	// anything left to deliver or in flight: nothing, while games are
	// missing, means their tasks are stranded (a server restarted under
	// a live trainer) or lost, and queueing them again is the only way
	// on.
	lastGame, probed := time.Now(), time.Time{}
	strandedAfter := 3 * t.ackWait()
	check := func(err error) bool {
		if ctx.Err() != nil || (time.Since(checked) < goneEvery && !notYet(err) && !errors.Is(err, jetstream.ErrConsumerDeleted)) {
			return false
		}
		checked = time.Now()
		return t.gone(ctx)
	}
	for len(need) > 0 {
		if ctx.Err() != nil {
			return errors.Join(ctx.Err(), flush())
		}
		if err := t.ls().err(); err != nil {
			return errors.Join(err, flush())
		}
		if err := newest(); err != nil {
			if ctx.Err() == nil {
				publishing.fail(ctx, t.logf, "publishing a newer network", err)
			}
		} else {
			publishing.ok(t.logf, "publishing a newer network")
		}
		// Not FetchContext: its deadline ends the fetch just after the
		// server's expiry of the request, and a game the server sends
		// near the expiry would reach a fetch no longer reading, lost
		// until AckWait. FetchMaxWait reads until the server says the
		// request expired (or a second more).
		batch, err := cons.Fetch(256, jetstream.FetchMaxWait(t.FetchWait))
		if err != nil {
			if ctx.Err() == nil {
				lost.fail(ctx, t.logf, "fetching games", err)
				if check(err) {
					return lostFleet(err)
				}
			}
			continue
		}
		n := 0
		for m := range batch.Messages() {
			n++
			data := m.Data()
			var g *Game
			var ref gameRef
			var err error
			switch {
			case bytes.HasPrefix(data, []byte(failMagic)):
				var f taskFailure
				if err := decodeJSON(data, failMagic, &f); err != nil {
					st.Bad++
					t.logf("  fleet: dropped message %s: %v", m.Subject(), err)
					m.Term()
					continue
				}
				if f.Run != job.Run || f.Iteration != job.Iteration || !need[f.ID] {
					m.Ack()
					continue
				}
				st.Failed++
				t.logf("  fleet: worker %s (%s) gave up game %d after %d deliveries: %s; queued it again", f.Origin.Worker, f.Origin.Backend, f.ID, f.Deliveries, f.Error)
				drop(m, f.ID, "")
				continue
			case bytes.HasPrefix(data, []byte(refMagic)):
				if err = decodeJSON(data, refMagic, &ref); err == nil {
					g = &Game{Run: ref.Run, Iteration: ref.Iteration, NetworkSHA256: ref.NetworkSHA256, Semantics: ref.Semantics,
						Origin: ref.Origin, Record: &selfplay.GameRecord{ID: ref.ID}}
				}
			default:
				g, err = DecodeGame(data)
			}
			if err != nil {
				st.Bad++
				t.logf("  fleet: dropped message %s: %v", m.Subject(), err)
				m.Term()
				continue
			}
			id := g.Record.ID
			switch {
			case g.Run != job.Run || g.Iteration != job.Iteration || (!job.Async && g.NetworkSHA256 != job.NetworkSHA256):
				// An asynchronous job's games may be of any network the
				// run's trainer published for it, also one of a session
				// that was killed before this one published it again:
				// dropping those would lose the games (their tasks are
				// acknowledged, and queueing them again falls in the
				// duplicate window).
				st.Stale++
				m.Ack()
				if ref.Object != "" {
					t.dropObject(ctx, ref.Object)
				}
				continue
			case !need[id]:
				st.Duplicates++
				hold(m, ref.Object)
				continue
			case g.Semantics != job.Semantics:
				// Another build's self-play: its games may differ from
				// this build's for the same seed.
				st.Mismatched++
				if key := fmt.Sprint(g.Origin.Worker, "\x00", g.Semantics); !mismatched[key] {
					mismatched[key] = true
					t.logf("  fleet: dropping the games of worker %s (backend %s): %s",
						g.Origin.Worker, g.Origin.Backend, semanticsAdvice(job.Build, job.Semantics, g.Origin.Build, g.Semantics))
				}
				drop(m, id, ref.Object)
				continue
			}
			if ref.Object != "" {
				data, err := t.fetchLarge(ctx, ref)
				switch {
				case errors.Is(err, jetstream.ErrObjectNotFound) || errors.Is(err, errBadObject):
					st.Invalid++
					t.logf("  fleet: dropped game %d (%s): %v; queued it again", id, m.Subject(), err)
					drop(m, id, ref.Object)
					continue
				case err != nil:
					// The store does not answer: the game comes back.
					m.NakWithDelay(time.Second)
					large.fail(ctx, t.logf, "fetching large games", err)
					continue
				}
				large.ok(t.logf, "fetching large games")
				big, err := DecodeGame(data)
				if err == nil && (big.Run != ref.Run || big.Iteration != ref.Iteration || big.Record.ID != ref.ID ||
					big.NetworkSHA256 != ref.NetworkSHA256 || big.Semantics != ref.Semantics) {
					err = errors.New("the object holds another game than its reference says")
				}
				if err != nil {
					st.Invalid++
					t.logf("  fleet: dropped game %d (object %s): %v; queued it again", id, ref.Object, err)
					drop(m, id, ref.Object)
					continue
				}
				g = big
			}
			if err := shape.check(g.Record); err != nil {
				// Never written, never redelivered: a bad game must not
				// reach a shard, which training would refuse. Its task
				// is queued again: this may have been the only copy (a
				// broken worker's).
				st.Invalid++
				t.logf("  fleet: dropped invalid game %d (%s): %v; queued it again", id, m.Subject(), err)
				drop(m, id, ref.Object)
				continue
			}
			delete(need, id)
			hold(m, ref.Object)
			if err := o.Add(g.Record); err != nil {
				return err
			}
			st.Games++
			if onGame != nil {
				onGame(g, *st)
			}
			if o.Manifest().Totals.Games != flushed { // Add wrote a shard
				ackHeld()
			}
		}
		err = batch.Error()
		if n == 0 && err == nil && check(nil) {
			return lostFleet(nil)
		}
		if len(need) < wanted {
			wanted, lastGame = len(need), time.Now()
		}
		if len(need) > 0 && ctx.Err() == nil && time.Since(lastGame) >= strandedAfter && time.Since(probed) >= goneEvery {
			probed = time.Now()
			if t.stranded(ctx) {
				ids := make([]int, 0, len(need))
				for id := range need {
					ids = append(ids, id)
				}
				slices.Sort(ids)
				if err := t.queue(ctx, *job, ids); err != nil {
					t.logf("  fleet: warning: cannot queue the %d missing games again: %v (retrying)", len(ids), err)
				} else {
					t.logf("  fleet: no game for %s and nothing left on the server for the workers: queued the %d missing games again (their tasks were stranded or lost: a server restart?)",
						time.Since(lastGame).Round(time.Second), len(ids))
					lastGame = time.Now()
				}
			}
		}
		if len(held) > 0 && time.Since(heldSince) >= o.FlushEvery {
			if err := flush(); err != nil {
				return err
			}
		}
		switch {
		case ctx.Err() != nil:
		case err == nil || errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded):
			lost.ok(t.logf, "fetching games")
		default:
			lost.fail(ctx, t.logf, "fetching games", err)
			if check(err) {
				return lostFleet(err)
			}
		}
	}
	return flush()
}

// ackWait is the AckWait of the fleet's consumers.
func (t *Trainer) ackWait() time.Duration {
	if t.setup.AckWait > 0 {
		return t.setup.AckWait
	}
	return defaultAckWait
}

// stranded reports whether the server says that the workers' consumer
// has no task to deliver and none delivered and not yet acknowledged (a
// server that does not answer is not that).
func (t *Trainer) stranded(ctx context.Context) bool {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	h := t.hs()
	c, err := h.js.Consumer(cctx, h.n.tasks(), workersConsumer)
	if err != nil {
		return false
	}
	info, err := c.Info(cctx)
	return err == nil && info.NumPending == 0 && info.NumAckPending == 0
}

// goneEvery is how often a trainer that receives no games checks that
// the fleet is whole on the server.
const goneEvery = 5 * time.Second

// errFleetGone marks a fleet whose streams the server no longer has.
var errFleetGone = errors.New("fleet: the fleet's streams are gone from the server")

// gone reports whether the server answers that a stream, bucket or
// consumer of the fleet does not exist (a server that does not answer is
// not that).
func (t *Trainer) gone(ctx context.Context) bool {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := open(cctx, t.hs().js, t.hs().n.fleet)
	if err == nil {
		_, err = t.hs().js.Consumer(cctx, t.hs().n.tasks(), workersConsumer)
	}
	if err == nil {
		_, err = t.hs().js.Consumer(cctx, t.hs().n.games(), trainerConsumer)
	}
	return notYet(err)
}

// recreate makes the fleet's streams, buckets and consumers again and
// takes the lease anew (the bucket holding it may be new too).
func (t *Trainer) recreate(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lease.stop()
	h, err := create(ctx, t.h.js, t.setup)
	if err != nil {
		return err
	}
	l, err := acquireLease(ctx, h.state, t.setup.Name, t.lease.me, t.logf)
	if err != nil {
		return err
	}
	t.h, t.lease = h, l
	return nil
}

// errBadObject marks a large game's object that is not what its
// reference says.
var errBadObject = errors.New("the object does not match its reference")

// fetchLarge returns the bytes of ref's object, checked against its size
// and SHA-256.
func (t *Trainer) fetchLarge(ctx context.Context, ref gameRef) ([]byte, error) {
	if ref.Size < 0 || ref.Size > maxLargeGame {
		return nil, fmt.Errorf("%w: %d bytes", errBadObject, ref.Size)
	}
	data, err := t.hs().large.GetBytes(ctx, ref.Object)
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", ref.Object, err)
	}
	if int64(len(data)) != ref.Size || sha(data) != ref.SHA256 {
		return nil, fmt.Errorf("%w: object %s of %d bytes, SHA-256 %s; the reference says %d bytes, %s", errBadObject, ref.Object, len(data), sha(data), ref.Size, ref.SHA256)
	}
	return data, nil
}

// dropObject deletes a large game's object once its message is
// acknowledged (what it misses, N-large's MaxAge removes).
func (t *Trainer) dropObject(ctx context.Context, name string) {
	if err := t.hs().large.Delete(ctx, name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) && ctx.Err() == nil {
		t.logf("  fleet: warning: cannot delete large game object %s: %v (it expires after %s)", name, err, largeMaxAge)
	}
}

// gameShape is what every game of one job's game must have.
type gameShape struct {
	obs, actions, players int
}

func shapeOf(g games.Game) gameShape {
	return gameShape{obs: games.ObservationSize(g), actions: g.NumActions(), players: g.NumPlayers()}
}

// check reports why r cannot be a game of s's game, or nil: every array
// must hold s's widths for each of its positions, each position must be
// one training accepts (selfplay.CheckPositions, the one definition of a
// valid position), plies and simulations must be >= 0, there must
// be one return in [-1, 1] per player, and games of three or more players
// must carry their per-player value targets (selfplay.CheckValues).
func (s gameShape) check(r *selfplay.GameRecord) error {
	p := r.Positions()
	switch {
	case len(r.Obs) != p*s.obs || len(r.Policy) != p*s.actions || len(r.Legal) != p*s.actions:
		return fmt.Errorf("%d positions with %d observation values, %d policy and %d legal entries; the game has %d observation values and %d actions a position",
			p, len(r.Obs), len(r.Policy), len(r.Legal), s.obs, s.actions)
	case len(r.RootQ) != p || len(r.Ply) != p:
		return fmt.Errorf("%d positions with %d root values and %d plies", p, len(r.RootQ), len(r.Ply))
	case len(r.Returns) != s.players:
		return fmt.Errorf("%d returns for a game of %d players", len(r.Returns), s.players)
	case r.Nodes < 0:
		return fmt.Errorf("%d simulations", r.Nodes)
	}
	for i, v := range r.Returns {
		if !(v >= -1 && v <= 1) {
			return fmt.Errorf("player %d's return is %v, outside [-1, 1]", i, v)
		}
	}
	for i, ply := range r.Ply {
		if ply < 0 {
			return fmt.Errorf("position %d: ply %d", i, ply)
		}
	}
	if err := selfplay.CheckPositions(p, s.obs, s.actions, r.Obs, r.Policy, r.Legal, r.Value, r.RootQ); err != nil {
		return err
	}
	// Games of three or more players carry every player's value target
	// (and, from self-play, root value), as in-process self-play writes
	// them; two-player games carry neither.
	if s.players < 3 {
		if len(r.Values) != 0 || len(r.RootValues) != 0 {
			return fmt.Errorf("per-player values in a game of %d players", s.players)
		}
		return nil
	}
	if p == 0 {
		return nil
	}
	if err := selfplay.CheckValues(p, s.players, r.Value, r.Values); err != nil {
		return err
	}
	if len(r.RootValues) != 0 {
		if err := selfplay.CheckValues(p, s.players, r.RootQ, r.RootValues); err != nil {
			return fmt.Errorf("root values: %w", err)
		}
	}
	return nil
}
