package fleet

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Server is an embedded NATS server with JetStream, for a fleet that
// lives on one machine (or whose workers reach the trainer's machine).
type Server struct {
	ns  *server.Server
	url string
}

// ServerOptions configure StartServer.
type ServerOptions struct {
	// StoreDir holds JetStream's files (streams, buckets); a restarted
	// server finds there what was stored before.
	StoreDir string
	// Listen is host:port for clients; default 127.0.0.1:4222. A host
	// other than loopback requires credentials in Security.
	Listen   string
	Security Security
	// Fleet is the fleet name, for the workers' permissions.
	Fleet string
	// Workers, when its User is set, are the workers' credentials
	// (User, PasswordFile): a user confined to what a worker does (see
	// workerPermissions), while Security's user, the trainer's, may do
	// anything. Without it workers use the trainer's credentials.
	Workers Security
	// MaxPayload bounds a message (a game); default 8 MiB.
	MaxPayload int32
}

// StartServer starts an embedded server and waits until it accepts
// connections.
func StartServer(o ServerOptions) (*Server, error) {
	if o.Listen == "" {
		o.Listen = "127.0.0.1:4222"
	}
	host, portText, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return nil, fmt.Errorf("--nats-listen %q: %v (want host:port, e.g. 127.0.0.1:4222)", o.Listen, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("--nats-listen %q: bad port (want 0..65535; 0 picks a free one)", o.Listen)
	}
	if host == "" {
		return nil, fmt.Errorf("--nats-listen %q: name the host (127.0.0.1 for this machine only, 0.0.0.0 for every interface)", o.Listen)
	}
	if !loopback(host) && (!o.Security.Authenticated() || o.Security.CertFile == "") {
		return nil, fmt.Errorf("--nats-listen %s listens beyond this machine: add --nats-user and --nats-password-file (or --nats-nkey), and TLS (--nats-tls-cert, --nats-tls-key), so that only your workers get in and nobody reads the passwords on the way", o.Listen)
	}
	if port != 0 {
		// The server reports a taken port only in its log: find out first.
		l, err := net.Listen("tcp", o.Listen)
		if err != nil {
			return nil, fmt.Errorf("--nats-listen %s: %v (another server there? choose another port)", o.Listen, err)
		}
		l.Close()
	}
	if o.MaxPayload <= 0 {
		o.MaxPayload = 8 << 20
	}
	so := &server.Options{ServerName: "canopy", Host: host, Port: port, JetStream: true, StoreDir: o.StoreDir,
		NoSigs: true, NoLog: true, MaxPayload: o.MaxPayload, HTTPPort: 0}
	if err := o.Security.serverAuth(so, o.Fleet, o.Workers); err != nil {
		return nil, err
	}
	ns, err := server.NewServer(so)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS server: %v", err)
	}
	go ns.Start()
	// Generous: on a machine loaded ten times over its cores, starting
	// JetStream once took more than 30 s.
	const ready = 90 * time.Second
	if !ns.ReadyForConnections(ready) {
		ns.Shutdown()
		return nil, fmt.Errorf("embedded NATS server on %s did not start in %v (is the port taken?)", o.Listen, ready)
	}
	scheme := "nats"
	if so.TLS {
		scheme = "tls"
	}
	return &Server{ns: ns, url: scheme + "://" + ns.Addr().String()}, nil
}

// URL is the address clients connect to.
func (s *Server) URL() string { return s.url }

// Close shuts the server down and waits until it has.
func (s *Server) Close() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}
