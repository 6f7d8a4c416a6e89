package fleet

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/canopy-go/canopy/selfplay"
	"github.com/nats-io/nats.go/jetstream"
)

// Job is what the workers play: the trainer publishes it under the key
// "job" of the KV bucket N-state, and workers follow it.
type Job struct {
	// Run identifies the run directory's run (random, kept in the run
	// directory), so that games of another run sharing the fleet name are
	// never taken for this one's.
	Run       string `json:"run"`
	Iteration int    `json:"iteration"`
	Game      string `json:"game"`
	// Settings, Seed and Games are the iteration's self-play manifest's:
	// game i of the iteration is seeded from (Seed, i), i < Games.
	Settings selfplay.Settings `json:"settings"`
	// Semantics is the trainer's selfplay.Semantics: workers of another
	// refuse the job, and games of another are dropped.
	Semantics int `json:"semantics"`
	// Build is the trainer's build (module version and VCS revision),
	// named in the messages about a worker of another semantics; empty
	// from trainers before it was sent.
	Build string `json:"build,omitempty"`
	// Async marks a job of an asynchronous run: the trainer changes its
	// network (Network, NetworkSHA256) while its games are played, and a
	// worker finishes the games in hand with the network it started them
	// with (each game records its network) instead of starting them again.
	Async bool   `json:"async,omitempty"`
	Seed  uint64 `json:"seed"`
	Games int    `json:"games"`
	// Network names the object in N-nets holding the weights;
	// NetworkSHA256 is the SHA-256 of its bytes.
	Network       string `json:"network"`
	NetworkSHA256 string `json:"network_sha256"`
}

// same reports whether two jobs ask for the same games with the same
// network.
func (j Job) same(k Job) bool {
	return j.sameGames(k) && j.NetworkSHA256 == k.NetworkSHA256
}

// sameGames reports whether two jobs ask for the same games, whatever
// their networks.
func (j Job) sameGames(k Job) bool {
	return j.Run == k.Run && j.Iteration == k.Iteration && j.Semantics == k.Semantics && j.Async == k.Async &&
		j.Settings == k.Settings && j.Seed == k.Seed && j.Game == k.Game
}

// semanticsAdvice says what to do about a worker and a trainer of other
// self-play semantics, naming both builds and the side to upgrade. A
// trainer's semantics of 0 is one from before semantics were sent.
func semanticsAdvice(trainerBuild string, trainer int, workerBuild string, worker int) string {
	if trainerBuild == "" {
		trainerBuild = "unknown build"
	}
	switch {
	case trainer == 0:
		return fmt.Sprintf("the trainer (%s) is older than self-play semantics versions (its job names none); the worker (%s) plays semantics %d: upgrade the trainer to the worker's build, or run a worker of the trainer's build",
			trainerBuild, workerBuild, worker)
	case trainer < worker:
		return fmt.Sprintf("the trainer (%s) plays self-play semantics %d, the worker (%s) plays %d, newer: upgrade the trainer to the worker's build, or run a worker of the trainer's build",
			trainerBuild, trainer, workerBuild, worker)
	default:
		return fmt.Sprintf("the trainer (%s) plays self-play semantics %d, the worker (%s) plays %d, older: upgrade the worker to the trainer's build",
			trainerBuild, trainer, workerBuild, worker)
	}
}

// task is one game to play, the body of a message on N.tasks.ITER.
type task struct {
	Run       string `json:"run"`
	Iteration int    `json:"iteration"`
	ID        int    `json:"id"`
	// Again suffixes the Nats-Msg-Id of the task and of its game's
	// message, so that the duplicate window, which holds the ids of
	// earlier copies, lets them through: the generation of the queueing
	// (".gXXXX", Trainer.queue: a new one each time the trainer queues
	// an iteration's tasks), or ".again.SEQ" on a task the trainer
	// queued again after dropping an invalid copy of its game. Empty
	// from trainers before generations.
	Again string `json:"again,omitempty"`
	// Eval, on an evaluation task (subject N.tasks.eval.ITER), is the
	// match whose game ID (schedule index) to play.
	Eval *EvalJob `json:"eval,omitempty"`
}

// msgID is the Nats-Msg-Id of game id's message (and of its task) in
// iteration iter of run: JetStream drops a second message with the same
// id within the stream's duplicate window.
func msgID(run string, iter, id int) string {
	return run + "." + strconv.Itoa(iter) + "." + strconv.Itoa(id)
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// CheckName reports whether name can be a fleet name: 1 to 32 letters,
// digits, '-' or '_' (it prefixes stream, bucket and subject names).
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("fleet name %q: want 1-32 letters, digits, '-' or '_'", name)
	}
	return nil
}

// names are the server-side names of fleet N.
type names struct{ fleet string }

func (n names) state() string { return n.fleet + "-state" }
func (n names) nets() string  { return n.fleet + "-nets" }
func (n names) tasks() string { return n.fleet + "-tasks" }
func (n names) games() string { return n.fleet + "-games" }
func (n names) large() string { return n.fleet + "-large" }

// results is the stream of evaluation results (eval.go).
func (n names) results() string { return n.fleet + "-results" }
func (n names) taskSubject(iter int) string {
	return n.fleet + ".tasks." + strconv.Itoa(iter)
}
func (n names) gameSubject(iter int) string {
	return n.fleet + ".games." + strconv.Itoa(iter)
}

// evalTaskSubject is the subject of iteration iter's evaluation tasks:
// on the tasks stream, taken by the same consumer as self-play tasks.
func (n names) evalTaskSubject(iter int) string {
	return n.fleet + ".tasks.eval." + strconv.Itoa(iter)
}
func (n names) resultSubject(iter int) string {
	return n.fleet + ".results." + strconv.Itoa(iter)
}

const (
	jobKey           = "job"
	workersConsumer  = "workers"
	trainerConsumer  = "trainer"
	evalConsumer     = "evaluator" // the trainer's, on N-results
	defaultAckWait   = 30 * time.Second
	defaultDuplicate = 10 * time.Minute
	// largeMaxAge is how long a large game's object stays in N-large
	// when no trainer deletes it (its reference was a duplicate).
	largeMaxAge = 24 * time.Hour
	// maxLargeGame bounds a game sent through N-large.
	maxLargeGame = 1 << 30
)

// Setup are the server-side settings the trainer creates the fleet with.
type Setup struct {
	// Name is the fleet name (CheckName).
	Name string
	// Run is the id of the trainer's run (Job.Run): the trainer takes the
	// fleet name's lease for it (see lease.go), refusing to start while a
	// trainer of another run holds it. Required.
	Run string
	// Holder describes the trainer to another one it refuses (the run
	// directory); the host and process id are added.
	Holder string
	// LeaseTTL is how long after its last renewal the lease of a trainer
	// that stopped (killed, cut off) may be taken by another run's
	// trainer; it is renewed every quarter of that. Default 20 s.
	LeaseTTL time.Duration
	// AckWait is how long a delivered task or game may stay
	// unacknowledged before the server gives it to another consumer
	// client: how long a dead worker's games wait. Workers in good health
	// renew it while they play. Default 30 s.
	AckWait time.Duration
	// Duplicates is the streams' duplicate window (Nats-Msg-Id). Default
	// 10 minutes; the trainer's id check covers what falls outside it.
	Duplicates time.Duration
	// Replicas is the streams' replication in a clustered server
	// (default 1; 3 in a 3-node cluster survives the loss of one node).
	Replicas int
	// MaxAckPending bounds the tasks the workers' consumer has delivered
	// and not yet seen acknowledged, all workers together: at least the
	// workers' Trees summed, or some wait (default 65,536; 1..MaxAckPendingLimit).
	MaxAckPending int
	// MaxWaiting bounds the pull requests waiting on the workers'
	// consumer at once: about one per idle worker; beyond it a worker's
	// fetch is refused and retried (default 0: the server's, 512;
	// 1..MaxWaitingLimit). The server fixes it when it creates the
	// consumer: changing it later needs the consumer deleted (a new
	// --nats-name, or the fleet's streams removed).
	MaxWaiting int
}

// Bounds of Setup.MaxAckPending and Setup.MaxWaiting.
const (
	DefaultMaxAckPending = 1 << 16
	MaxAckPendingLimit   = 1 << 24
	MaxWaitingLimit      = 1 << 20
)

// Check reports a setting out of range.
func (s *Setup) Check() error {
	switch {
	case s.MaxAckPending < 0 || s.MaxAckPending > MaxAckPendingLimit:
		return fmt.Errorf("fleet: max ack pending %d, want 1..%d tasks in flight (0: %d)", s.MaxAckPending, MaxAckPendingLimit, DefaultMaxAckPending)
	case s.MaxWaiting < 0 || s.MaxWaiting > MaxWaitingLimit:
		return fmt.Errorf("fleet: max waiting %d, want 1..%d pull requests (0: the server's default, 512)", s.MaxWaiting, MaxWaitingLimit)
	}
	return nil
}

func (s *Setup) defaults() {
	if s.AckWait <= 0 {
		s.AckWait = defaultAckWait
	}
	if s.Duplicates <= 0 {
		s.Duplicates = defaultDuplicate
	}
	if s.Replicas <= 0 {
		s.Replicas = 1
	}
	if s.MaxAckPending <= 0 {
		s.MaxAckPending = DefaultMaxAckPending
	}
}

// handles are the JetStream objects of one fleet.
type handles struct {
	n       names
	js      jetstream.JetStream
	state   jetstream.KeyValue
	nets    jetstream.ObjectStore
	large   jetstream.ObjectStore // games too large for one message
	tasks   jetstream.Stream
	games   jetstream.Stream
	results jetstream.Stream // evaluation results (trainer only)
}

// create makes (or updates) the fleet's streams, buckets and consumers.
func create(ctx context.Context, js jetstream.JetStream, s Setup) (*handles, error) {
	s.defaults()
	h := &handles{n: names{s.Name}, js: js}
	var err error
	if h.state, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: h.n.state(),
		Description: "canopy fleet: the job workers play", Storage: jetstream.FileStorage, Replicas: s.Replicas}); err != nil {
		return nil, fmt.Errorf("fleet: creating KV bucket %s: %w", h.n.state(), err)
	}
	if h.nets, err = js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: h.n.nets(),
		Description: "canopy fleet: networks by checkpoint name", Storage: jetstream.FileStorage, Replicas: s.Replicas}); err != nil {
		return nil, fmt.Errorf("fleet: creating object store %s: %w", h.n.nets(), err)
	}
	if h.large, err = js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: h.n.large(),
		Description: "canopy fleet: games larger than a message", Storage: jetstream.FileStorage, Replicas: s.Replicas,
		TTL: largeMaxAge}); err != nil {
		return nil, fmt.Errorf("fleet: creating object store %s: %w", h.n.large(), err)
	}
	for _, st := range []struct {
		stream  *jetstream.Stream
		name    string
		subject string
		cons    string
	}{{&h.tasks, h.n.tasks(), h.n.fleet + ".tasks.>", workersConsumer}, {&h.games, h.n.games(), h.n.fleet + ".games.>", trainerConsumer},
		{&h.results, h.n.results(), h.n.fleet + ".results.>", evalConsumer}} {
		*st.stream, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: st.name, Subjects: []string{st.subject},
			Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Duplicates: s.Duplicates, Replicas: s.Replicas})
		if err != nil {
			return nil, fmt.Errorf("fleet: creating stream %s: %w", st.name, err)
		}
		cc := jetstream.ConsumerConfig{Durable: st.cons, AckPolicy: jetstream.AckExplicitPolicy, AckWait: s.AckWait,
			MaxAckPending: DefaultMaxAckPending, MaxRequestBatch: 4096, Replicas: s.Replicas}
		if st.cons == workersConsumer {
			cc.MaxAckPending, cc.MaxWaiting = s.MaxAckPending, s.MaxWaiting
			// MaxWaiting is fixed when the consumer is created: unset,
			// keep what it has; set to something else, say how.
			if ci, err := js.Consumer(ctx, st.name, st.cons); err == nil {
				have := ci.CachedInfo().Config.MaxWaiting
				switch {
				case s.MaxWaiting == 0:
					cc.MaxWaiting = have
				case s.MaxWaiting != have:
					return nil, fmt.Errorf("fleet: the workers' consumer %s on stream %s was made with max waiting %d, and the server cannot change it to %d: use another fleet name, or delete the consumer first (nats consumer rm %s %s)",
						st.cons, st.name, have, s.MaxWaiting, st.name, st.cons)
				}
			}
		}
		if _, err := js.CreateOrUpdateConsumer(ctx, st.name, cc); err != nil {
			return nil, fmt.Errorf("fleet: creating consumer %s on %s: %w", st.cons, st.name, err)
		}
	}
	return h, nil
}

// open finds the fleet's streams and buckets, which the trainer creates.
func open(ctx context.Context, js jetstream.JetStream, name string) (*handles, error) {
	h := &handles{n: names{name}, js: js}
	var err error
	if h.state, err = js.KeyValue(ctx, h.n.state()); err != nil {
		return nil, err
	}
	if h.nets, err = js.ObjectStore(ctx, h.n.nets()); err != nil {
		return nil, err
	}
	if h.large, err = js.ObjectStore(ctx, h.n.large()); err != nil {
		return nil, err
	}
	if h.tasks, err = js.Stream(ctx, h.n.tasks()); err != nil {
		return nil, err
	}
	if h.games, err = js.Stream(ctx, h.n.games()); err != nil {
		return nil, err
	}
	return h, nil
}

// notYet reports whether err means that the trainer has not created the
// fleet yet.
func notYet(err error) bool {
	return errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) ||
		errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrConsumerNotFound)
}

// messageLimit is the largest game message sent as such to a server of
// max_payload mp; larger games go through N-large. The rest of mp is
// left to the message's headers (Nats-Msg-Id).
func messageLimit(mp int64) int64 { return mp - min(1024, mp/8) }

// chunkSize is the chunk size of objects put on a server of max_payload
// mp: the object store's default, 128 KiB, or less where mp is smaller.
func chunkSize(mp int64) uint32 {
	if mp <= 0 {
		return 128 << 10
	}
	return uint32(min(128<<10, messageLimit(mp)))
}

// byteSize writes n bytes for people: "1.0 MiB", "900 B".
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
