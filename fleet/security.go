package fleet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Security are the credentials and TLS files of a connection (and of an
// embedded server: it requires what its clients present).
type Security struct {
	// User and PasswordFile: user/password authentication, the password
	// read from a file (its first line) so that it shows in no process
	// list.
	User, PasswordFile string
	// NKeySeedFile holds an NKey user seed ("SU..."): the client signs
	// the server's nonce with it; an embedded server admits its public
	// key.
	NKeySeedFile string
	// CAFile, CertFile, KeyFile: TLS. A client with CAFile verifies the
	// server against it; CertFile and KeyFile are the client's
	// certificate (or the embedded server's).
	CAFile, CertFile, KeyFile string
}

// Authenticated reports whether s asks for credentials.
func (s Security) Authenticated() bool { return s.User != "" || s.NKeySeedFile != "" }

func (s Security) check() error {
	switch {
	case s.User != "" && s.PasswordFile == "", s.User == "" && s.PasswordFile != "":
		return errors.New("--nats-user and --nats-password-file go together")
	case s.User != "" && s.NKeySeedFile != "":
		return errors.New("--nats-user and --nats-nkey exclude each other: choose one way to authenticate")
	case (s.CertFile == "") != (s.KeyFile == ""):
		return errors.New("--nats-tls-cert and --nats-tls-key go together")
	}
	return nil
}

func (s Security) password() (string, error) {
	data, err := os.ReadFile(s.PasswordFile)
	if err != nil {
		return "", fmt.Errorf("--nats-password-file: %v", err)
	}
	pw, _, _ := strings.Cut(string(data), "\n")
	pw = strings.TrimRight(pw, "\r")
	if pw == "" {
		return "", fmt.Errorf("--nats-password-file %s: the first line is empty; write the password there", s.PasswordFile)
	}
	return pw, nil
}

// Connect connects to the NATS server at url with s, waiting for it (a
// line to logf) while it does not answer, until ctx ends. A refusal of
// the credentials or of TLS is returned at once. The connection then
// reconnects for ever (a restarted server is found again) and logs
// disconnections and asynchronous errors to logf.
func Connect(ctx context.Context, url string, s Security, name string, logf func(format string, args ...any)) (*nats.Conn, error) {
	opts, err := s.options(name, logf)
	if err != nil {
		return nil, err
	}
	if s.CAFile != "" {
		opts = append(opts, nats.RootCAs(s.CAFile))
	}
	if s.CertFile != "" {
		opts = append(opts, nats.ClientCert(s.CertFile, s.KeyFile))
	}
	said := false
	for {
		nc, err := nats.Connect(url, opts...)
		if err == nil {
			return nc, nil
		}
		if !errors.Is(err, nats.ErrNoServers) {
			return nil, fmt.Errorf("connecting to NATS at %s: %v (check the URL, the credentials and the TLS files)", url, err)
		}
		if !said {
			logf("nats: no server answers at %s yet: %v (waiting)", url, err)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connecting to NATS at %s: %v", url, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// ConnectInProcess connects to the embedded server srv inside this
// process, with the credentials of s (its TLS files are the server's:
// an in-process connection needs no TLS).
func ConnectInProcess(srv *Server, s Security, name string, logf func(format string, args ...any)) (*nats.Conn, error) {
	opts, err := s.options(name, logf)
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect("", append(opts, nats.InProcessServer(srv.ns))...)
	if err != nil {
		return nil, fmt.Errorf("connecting to the embedded NATS server: %v", err)
	}
	return nc, nil
}

// options are the connection options of s but TLS.
func (s Security) options(name string, logf func(format string, args ...any)) ([]nats.Option, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	opts := []nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectBufSize(64 << 20),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { logf("%v", err) }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				logf("nats: disconnected: %v (reconnecting)", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { logf("nats: reconnected to %s", c.ConnectedUrlRedacted()) })}
	if s.User != "" {
		pw, err := s.password()
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.UserInfo(s.User, pw))
	}
	if s.NKeySeedFile != "" {
		o, err := nats.NkeyOptionFromSeed(s.NKeySeedFile)
		if err != nil {
			return nil, fmt.Errorf("--nats-nkey %s: %v", s.NKeySeedFile, err)
		}
		opts = append(opts, o)
	}
	return opts, nil
}

// serverAuth applies s to an embedded server's options, and the
// workers' user w (when w.User is set) with the permissions of fleet.
func (s Security) serverAuth(o *server.Options, fleet string, w Security) error {
	if err := s.check(); err != nil {
		return err
	}
	if w.User != "" {
		if err := w.check(); err != nil {
			return fmt.Errorf("the workers' credentials: %v", err)
		}
		if !s.Authenticated() {
			return errors.New("--nats-worker-user needs the trainer's own credentials too (--nats-user and --nats-password-file, or --nats-nkey)")
		}
		if w.User == s.User {
			return fmt.Errorf("--nats-worker-user %s is the trainer's user: give the workers a user of their own", w.User)
		}
		if err := CheckName(fleet); err != nil {
			return err
		}
		pw, err := w.password()
		if err != nil {
			return fmt.Errorf("the workers' %v", err)
		}
		o.Users = append(o.Users, &server.User{Username: w.User, Password: pw, Permissions: workerPermissions(fleet)})
	}
	if s.User != "" {
		pw, err := s.password()
		if err != nil {
			return err
		}
		if len(o.Users) == 0 {
			o.Username, o.Password = s.User, pw
		} else {
			o.Users = append(o.Users, &server.User{Username: s.User, Password: pw})
		}
	}
	if s.NKeySeedFile != "" {
		data, err := os.ReadFile(s.NKeySeedFile)
		if err != nil {
			return fmt.Errorf("--nats-nkey: %v", err)
		}
		kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(data))))
		if err != nil {
			return fmt.Errorf("--nats-nkey %s: %v (want an NKey user seed, SU...)", s.NKeySeedFile, err)
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return fmt.Errorf("--nats-nkey %s: %v", s.NKeySeedFile, err)
		}
		o.Nkeys = []*server.NkeyUser{{Nkey: pub}}
	}
	if s.CertFile != "" {
		// With a CA, clients must present a certificate it signed
		// (mutual TLS); without, the server proves itself only, as any
		// TLS server, and clients authenticate with their credentials.
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: s.CertFile, KeyFile: s.KeyFile, CaFile: s.CAFile, Verify: s.CAFile != ""})
		if err != nil {
			return fmt.Errorf("--nats-tls-cert/--nats-tls-key: %v", err)
		}
		o.TLS, o.TLSConfig, o.TLSTimeout, o.TLSVerify = true, tc, 2, s.CAFile != ""
	}
	return nil
}

// workerPermissions confine a worker of fleet n to what it does: read
// the job (a KV watch: an ordered consumer on the bucket's stream) and
// the networks (an object get), take and acknowledge tasks from the
// shared consumer, store large games and publish games. It cannot
// purge or delete a stream, write the job or the lease, delete a
// network, queue tasks or consume games.
func workerPermissions(n string) *server.Permissions {
	nm := names{n}
	api := "$JS.API."
	kv, nets, large := "KV_"+nm.state(), "OBJ_"+nm.nets(), "OBJ_"+nm.large()
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{
			api + "INFO",
			api + "STREAM.INFO." + nm.tasks(), api + "STREAM.INFO." + nm.games(),
			api + "STREAM.INFO." + kv, api + "STREAM.INFO." + nets, api + "STREAM.INFO." + large,
			api + "CONSUMER.INFO." + nm.tasks() + "." + workersConsumer,
			api + "CONSUMER.MSG.NEXT." + nm.tasks() + "." + workersConsumer,
			"$JS.ACK." + nm.tasks() + "." + workersConsumer + ".>",
			// Watches and object reads: ordered consumers of their own.
			api + "CONSUMER.CREATE." + kv + ".>", api + "CONSUMER.DELETE." + kv + ".>",
			api + "CONSUMER.CREATE." + nets + ".>", api + "CONSUMER.DELETE." + nets + ".>",
			api + "STREAM.MSG.GET." + kv, api + "DIRECT.GET." + kv + ".>",
			api + "STREAM.MSG.GET." + nets, api + "DIRECT.GET." + nets + ".>",
			// Large games: a new object (its meta and chunks); Put first
			// looks for an object of the same name.
			"$O." + nm.large() + ".C.>", "$O." + nm.large() + ".M.>",
			api + "STREAM.MSG.GET." + large, api + "DIRECT.GET." + large + ".>",
			n + ".games.>", n + ".results.>",
		}},
		Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>"}},
	}
}

// loopback reports whether host names only the loopback interface.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
