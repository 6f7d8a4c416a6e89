package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/canopy-go/canopy/spec"
	"github.com/canopy-go/canopy/web"
)

func init() {
	register(&command{
		Name:    "serve",
		Summary: "the browser UI: play and analyse games, replay logs, look at runs",
		Usage:   "[--addr HOST:PORT] [--allow-host NAME]... [--run DIR]... [--logs DIR] [--max-games N] [--max-games-per-client N] [--move-timeout D] [--max-sims N] [--max-streams N]",
		Help: `Serves Canopy's web page (embedded in the binary; nothing is loaded from
elsewhere) and its JSON API:
  Play     any game (a spec, as in --game) between agents or people
           ("human" seats); boards drawn for connect4, tictactoe and hex,
           every other game as text with its legal moves as buttons.
  Analyse  visits, Q and prior per move of mcts, az, policy or solver,
           overlaid on the board; mcts and az stream them live (every
           200ms) with the principal variation while they search.
  Replay   a JSON game log (canopy play --log) uploaded from the page or
           named from --logs DIR, step by step.
  Runs     metrics.jsonl as a table and plots/*.svg of each --run DIR,
           updated live while zero or selfplay writes the directory
           (metrics.jsonl, the self-play manifest, logs/*.json games).

It listens on 127.0.0.1:8080 (this machine only) unless --addr says
otherwise (an IPv4 address listens on IPv4 only, an IPv6 one on IPv6
only, an empty host on both); there are no accounts and no TLS, so to
reach it from elsewhere put it behind a reverse proxy with authentication.
It answers only to the Host names localhost, 127.0.0.1, [::1], the
listen address (every interface's address for 0.0.0.0) and --allow-host
names: a page on another name (DNS rebinding) is refused with 421.
Only files inside the --run and --logs directories are read. Agent specs
are capped (--max-sims; time= at --move-timeout), every agent move runs
under --move-timeout, and one client (IP address) holds at most
--max-games-per-client games. While a person plays a game with hidden
cards, only that seat's view is served. Ctrl-C or SIGTERM stops it
gracefully.

Example:
  canopy serve --run runs/zero-demo --logs runs/logs
  then open http://127.0.0.1:8080/`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			var cfg web.Config
			var addr, netBackend string
			var allowHosts []string
			spec.Table{
				spec.String("addr", &addr, "127.0.0.1:8080", "address to listen on, HOST:PORT (port 0: any free port)"),
				spec.Strings("allow-host", &allowHosts, "another name the server answers to (the Host header; e.g. a proxy's name), NAME or NAME:PORT; repeatable or a comma list"),
				backendOption(&netBackend, agentBackendNote),
			}.Flags(fs)
			cfg.Table().Flags(fs) // --run, --logs, --max-games, --idle, --move-timeout, ... (web.Config's)
			return func(e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if cfg.MaxClientGames > cfg.MaxGames {
					return usagef("--max-games-per-client %d: want 1..%d (--max-games), or 0 for half of it", cfg.MaxClientGames, cfg.MaxGames)
				}
				hosts, err := parseAllowHosts(allowHosts)
				if err != nil {
					return err
				}
				host, _, err := net.SplitHostPort(addr)
				if err != nil {
					return usagef("--addr %q: want HOST:PORT, e.g. 127.0.0.1:8080", addr)
				}
				aenv, err := agentEnv(netBackend, e.Stderr)
				if err != nil {
					return err
				}
				logger := log.New(e.Stderr, "", log.LstdFlags)
				own := listenHosts(host)
				cfg.MaxTime, cfg.Logf, cfg.Agents = cfg.MoveTimeout, logger.Printf, aenv
				cfg.Hosts = append(own, hosts...)
				srv, err := web.New(cfg)
				if err != nil {
					return usageError{err.Error()}
				}
				defer srv.Close()
				network, where := listenNetwork(host)
				ln, err := net.Listen(network, addr)
				if err != nil {
					return fmt.Errorf("cannot listen on %s: %v", addr, err)
				}
				if !web.IsLoopback(addr) {
					if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
						where += ": " + strings.Join(own, ", ")
					}
					fmt.Fprintf(e.Stderr, "canopy serve: warning: listening on %s (%s), reachable from other machines; the server has no accounts and no TLS: put it behind a reverse proxy with authentication\n", ln.Addr(), where)
				}
				ctx, stop := serveContext()
				defer stop()
				return serveUntil(ctx, ln, srv.Handler(), srv.EndStreams, logger, e)
			}
		},
	})
}

// serveContext returns the context whose end stops the server: SIGINT or
// SIGTERM. Tests replace it.
var serveContext = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// shutdownGrace is how long a stopping server waits for requests in
// flight (an agent move may take up to --move-timeout).
const shutdownGrace = 5 * time.Second

// serveUntil serves h on ln until ctx ends, then shuts down gracefully;
// onShutdown ends the requests that would not end by themselves (event
// streams).
func serveUntil(ctx context.Context, ln net.Listener, h http.Handler, onShutdown func(), logger *log.Logger, e *env) error {
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          logger,
	}
	hs.RegisterOnShutdown(onShutdown)
	fmt.Fprintf(e.Stdout, "canopy serve: http://%s/ (Ctrl-C to stop)\n", displayAddr(ln.Addr()))
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(e.Stderr, "canopy serve: stopping")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// listenNetwork is the network to listen on for --addr's host, and the
// words that say what it covers: an IPv4 address listens on IPv4 only
// ("tcp" would take IPv6 connections too on a dual-stack 0.0.0.0), an IPv6
// address on IPv6 only, a name or an empty host on both.
func listenNetwork(host string) (network, where string) {
	ip := net.ParseIP(host)
	switch {
	case host == "":
		return "tcp", "every IPv4 and IPv6 interface"
	case ip == nil:
		return "tcp", "the address " + host + " resolves to"
	case ip.To4() != nil && ip.IsUnspecified():
		return "tcp4", "every IPv4 interface"
	case ip.To4() != nil:
		return "tcp4", "IPv4 only"
	case ip.IsUnspecified():
		return "tcp6", "every IPv6 interface"
	}
	return "tcp6", "IPv6 only"
}

// listenHosts are the Host names the listen address gives the server
// besides loopback: the address itself, or for an unspecified one (every
// interface) the addresses of this machine's interfaces of that family.
func listenHosts(host string) []string {
	ip := net.ParseIP(host)
	if host != "" && (ip == nil || !ip.IsUnspecified()) {
		return []string{host}
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		if ip == nil || (ip.To4() != nil) == (ipn.IP.To4() != nil) {
			out = append(out, ipn.IP.String())
		}
	}
	return out
}

// parseAllowHosts splits and checks the --allow-host values: host names
// or addresses, with an optional port, one per value or comma-separated.
func parseAllowHosts(values []string) ([]string, error) {
	var out []string
	for _, v := range values {
		for _, h := range strings.Split(v, ",") {
			h = strings.TrimSpace(h)
			bad := h == "" || strings.Trim(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:[]") != ""
			if !bad && strings.ContainsAny(h, "[]") {
				bad = !strings.HasPrefix(h, "[") || strings.Count(h, "]") != 1
			}
			if bad {
				return nil, usagef("--allow-host %q: want host names or addresses, with an optional :PORT, separated by commas (e.g. canopy.lan,10.0.0.5:8080), without http:// or a path", v)
			}
			out = append(out, h)
		}
	}
	return out, nil
}

// displayAddr is addr as a URL host: an unspecified IP (listening on
// every interface) is shown as the loopback one.
func displayAddr(addr net.Addr) string {
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return addr.String()
	}
	host := ta.IP.String()
	if ta.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, fmt.Sprint(ta.Port))
}
