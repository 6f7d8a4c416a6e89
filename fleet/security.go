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

// serverAuth applies s to an embedded server's options.
func (s Security) serverAuth(o *server.Options) error {
	if err := s.check(); err != nil {
		return err
	}
	if s.User != "" {
		pw, err := s.password()
		if err != nil {
			return err
		}
		o.Username, o.Password = s.User, pw
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
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: s.CertFile, KeyFile: s.KeyFile, CaFile: s.CAFile, Verify: s.CAFile != ""})
		if err != nil {
			return fmt.Errorf("--nats-tls-cert/--nats-tls-key: %v", err)
		}
		o.TLS, o.TLSConfig, o.TLSTimeout = true, tc, 2
	}
	return nil
}

// loopback reports whether host names only the loopback interface.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
