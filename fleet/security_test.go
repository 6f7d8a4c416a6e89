package fleet

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestServerRequiresCredentials(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wrong := filepath.Join(dir, "wrong")
	if err := os.WriteFile(wrong, []byte("guess\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sec := Security{User: "trainer", PasswordFile: pw}
	srv, err := StartServer(ServerOptions{StoreDir: filepath.Join(dir, "nats"), Listen: "127.0.0.1:0", Security: sec})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	quiet := func(string, ...any) {}
	for name, s := range map[string]Security{"none": {}, "wrong password": {User: "trainer", PasswordFile: wrong}, "other user": {User: "x", PasswordFile: pw}} {
		nc, err := Connect(ctx, srv.URL(), s, "test", quiet)
		if err == nil {
			nc.Close()
			t.Errorf("%s: connected", name)
		} else if ctx.Err() != nil {
			t.Errorf("%s: Connect waited instead of failing: %v", name, err)
		}
	}
	nc, err := Connect(ctx, srv.URL(), sec, "test", quiet)
	if err != nil {
		t.Fatalf("with the credentials: %v", err)
	}
	nc.Close()
}

func TestServerListensOnLoopbackOnly(t *testing.T) {
	dir := t.TempDir()
	_, err := StartServer(ServerOptions{StoreDir: dir, Listen: "0.0.0.0:0"})
	if err == nil || !strings.Contains(err.Error(), "beyond this machine") {
		t.Fatalf("listening on every interface without credentials: %v, want a refusal", err)
	}
	for host, want := range map[string]bool{"127.0.0.1": true, "::1": true, "localhost": true, "0.0.0.0": false, "10.1.2.3": false, "": false, "example.org": false} {
		if loopback(host) != want {
			t.Errorf("loopback(%q) = %v, want %v", host, !want, want)
		}
	}
}

func TestServerPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = StartServer(ServerOptions{StoreDir: t.TempDir(), Listen: l.Addr().String()})
	if err == nil || !strings.Contains(err.Error(), l.Addr().String()) {
		t.Fatalf("a taken port: %v, want an error naming %s", err, l.Addr())
	}
}

func TestSecurityFlagsGoTogether(t *testing.T) {
	for _, s := range []Security{{User: "u"}, {PasswordFile: "f"}, {User: "u", PasswordFile: "f", NKeySeedFile: "k"}, {CertFile: "c"}, {KeyFile: "k"}} {
		if err := s.check(); err == nil {
			t.Errorf("%+v: accepted", s)
		}
	}
}
