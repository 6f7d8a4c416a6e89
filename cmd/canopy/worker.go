package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/canopy-go/canopy/fleet"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/selfplay"
	"github.com/canopy-go/canopy/spec"
	"github.com/canopy-go/canopy/zero"
)

// natsFlags are the connection flags `canopy zero` and `canopy worker`
// share.
type natsFlags struct {
	url, name string
	sec       fleet.Security
}

func (n *natsFlags) register(fs *flag.FlagSet, urlHelp string) {
	spec.Table{
		spec.String("nats", &n.url, "", urlHelp),
		spec.String("nats-name", &n.name, "canopy", "fleet name: prefixes the streams and buckets on the server (one trainer per name)"),
		spec.String("nats-user", &n.sec.User, "", "NATS user name (with --nats-password-file)"),
		spec.File("nats-password-file", &n.sec.PasswordFile, "", "file whose first line is the NATS password"),
		spec.File("nats-nkey", &n.sec.NKeySeedFile, "", "file holding an NKey user seed (SU...) to authenticate with"),
		spec.File("nats-tls-ca", &n.sec.CAFile, "", "CA certificate (PEM) to verify the server with (an embedded server: to verify clients)"),
		spec.File("nats-tls-cert", &n.sec.CertFile, "", "TLS certificate (PEM): the client's, or the embedded server's"),
		spec.File("nats-tls-key", &n.sec.KeyFile, "", "TLS private key (PEM) of --nats-tls-cert"),
	}.Flags(fs)
}

func (n *natsFlags) check() error {
	if err := fleet.CheckName(n.name); err != nil {
		return usagef("--nats-name: %v", err)
	}
	return nil
}

// zeroFleetFlags are `canopy zero`'s fleet flags.
type zeroFleetFlags struct {
	natsFlags
	listen   string
	workers  fleet.Security
	ackWait  time.Duration
	replicas int
	// the workers' consumer's limits (fleet.Setup)
	maxAckPending, maxWaiting int
}

func (z *zeroFleetFlags) register(fs *flag.FlagSet) {
	z.natsFlags.register(fs, "play self-play on canopy worker processes through NATS JetStream: a server URL, or embedded (a server inside this process, its store in the run directory)")
	spec.Table{
		spec.String("nats-listen", &z.listen, "127.0.0.1:4222", "host:port of the embedded server (another host than loopback needs --nats-user or --nats-nkey)"),
		spec.String("nats-worker-user", &z.workers.User, "", "embedded server: the workers' user, confined to taking tasks, reading the job and networks and publishing games (with --nats-worker-password-file; --nats-user is then the trainer's alone)"),
		spec.File("nats-worker-password-file", &z.workers.PasswordFile, "", "embedded server: file whose first line is the workers' password"),
		spec.DurationIn("nats-ack-wait", &z.ackWait, 30*time.Second, time.Second, 24*time.Hour, "how long a dead worker's games wait before other workers take them"),
		spec.Int("nats-replicas", &z.replicas, 1, 1, 5, "replicas of the fleet's streams and buckets in a clustered server (1, 3 or 5; at most the cluster's servers)"),
		spec.Int("nats-max-ack-pending", &z.maxAckPending, fleet.DefaultMaxAckPending, 1, fleet.MaxAckPendingLimit, "tasks in the workers' hands at once, all workers together: at least the sum of their --trees (docs/DISTRIBUTED.md, 1,000 workers)"),
		spec.Int("nats-max-waiting", &z.maxWaiting, 0, 0, fleet.MaxWaitingLimit, "pull requests waiting on the workers' consumer at once: about the number of workers (0: the server's default, 512); fixed when the fleet is first made"),
	}.Flags(fs)
}

// fleet returns the zero.Fleet the flags ask for; nil without --nats.
func (z *zeroFleetFlags) fleet() (*zero.Fleet, error) {
	if z.url == "" {
		return nil, nil
	}
	if err := z.check(); err != nil {
		return nil, err
	}
	if z.replicas > 1 && z.url == "embedded" {
		return nil, usagef("--nats-replicas %d: an embedded server is a single node; point --nats at a cluster", z.replicas)
	}
	if (z.workers.User != "" || z.workers.PasswordFile != "") && z.url != "embedded" {
		return nil, usagef("--nats-worker-user: the workers' user is set on an embedded server (--nats embedded); on your own server, give it permissions in its configuration (docs/DISTRIBUTED.md)")
	}
	if (z.workers.User == "") != (z.workers.PasswordFile == "") {
		return nil, usagef("--nats-worker-user and --nats-worker-password-file go together")
	}
	return &zero.Fleet{URL: z.url, Listen: z.listen, Name: z.name, Security: z.sec, Workers: z.workers, AckWait: z.ackWait, Replicas: z.replicas,
		MaxAckPending: z.maxAckPending, MaxWaiting: z.maxWaiting}, nil
}

func init() {
	register(&command{
		Name:    "worker",
		Summary: "self-play worker of a distributed `canopy zero --nats` run: plays the games the trainer queues, on this machine's backend",
		Usage:   "--nats URL [--nats-name N] [--backend B] [--trees N] [--cache DIR] [credentials, TLS]",
		Help: `Connects to the NATS server of a ` + "`canopy zero --nats`" + ` run, fetches the current
network from its object store, plays the self-play games the trainer
queues (up to --trees at once, on the batched search engine with
--backend) and publishes each finished game; it picks up every new
network as the trainer publishes it. Any number of workers may join and
leave at any time: a worker that dies hands its unfinished games back to
the others after the trainer's --nats-ack-wait. Stop it with Ctrl-C or
SIGTERM. A line of throughput (games/s, positions/s, simulations/s, the
share of time spent publishing) is printed every --report-every.

The games are exactly those in-process self-play would write: game i of an
iteration is seeded from (iteration seed, i) wherever it is played.

Example, with a trainer on the same machine:
  canopy zero --out runs/z --nats embedded &
  canopy worker --nats nats://127.0.0.1:4222`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			var nf natsFlags
			nf.register(fs, "URL of the NATS server (nats://host:4222, tls://host:4222; several separated by commas)")
			var wo fleet.WorkerOptions
			var report time.Duration
			t := workerTable(&wo, &report)
			t.Reset()
			t.Register(fs)
			aliasFlag(fs, "report", "report-every") // arena's --report is a yes/no
			return func(e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if strings.TrimSpace(nf.url) == "" || nf.url == "embedded" {
					return usagef("--nats: give the URL of the trainer's server (nats://HOST:4222); `embedded` is for canopy zero")
				}
				if err := nf.check(); err != nil {
					return err
				}
				if _, err := nets.ParseBackendSpec(wo.Backend); err != nil {
					return backendError(wo.Backend, err)
				}
				logf := func(format string, args ...any) { fmt.Fprintf(e.Stderr, format+"\n", args...) }
				ctx, stop := signalContext()
				defer stop()
				host, _ := os.Hostname()
				nc, err := fleet.Connect(ctx, nf.url, nf.sec, fmt.Sprintf("canopy worker %s/%d", host, os.Getpid()), logf)
				if err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return err
				}
				defer nc.Close()
				wo.Name, wo.Log, wo.Report = nf.name, e.Stderr, report
				if report == 0 {
					wo.Report = -1 // none
				}
				w, err := fleet.NewWorker(nc, wo)
				if err != nil {
					return err
				}
				logf("worker: connected to %s, fleet %q", nc.ConnectedUrlRedacted(), nf.name)
				err = w.Run(ctx)
				g, p, _, _ := w.Counts()
				logf("worker: stopped after publishing %d games (%d positions)", g, p)
				return err
			}
		},
	})
}

// workerTable declares the options of `canopy worker` that configure
// its fleet.WorkerOptions, bound to o, and the interval of its
// throughput lines, bound to report.
func workerTable(o *fleet.WorkerOptions, report *time.Duration) spec.Table {
	return spec.Table{
		backendOption(&o.Backend, ""),
		selfplay.TreesOption(&o.Trees),
		spec.String("cache", &o.Cache, "", "directory for downloaded networks (default: the system's temporary directory)"),
		spec.Duration("report-every", report, 30*time.Second, 24*time.Hour, "interval of the throughput lines (0 = none)"),
	}
}
