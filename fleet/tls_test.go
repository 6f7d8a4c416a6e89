package fleet

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeCert writes a PEM certificate and key for cn to dir, signed by
// parent (self-signed, a CA, when parent is nil); it returns the paths,
// the certificate and the key.
func writeCert(t *testing.T, dir, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (certFile, keyFile string, cert *x509.Certificate, key *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign
		parent, parentKey = tmpl, key
	} else {
		// An ordinary server certificate: a DNS name, serverAuth only,
		// no IP address, no clientAuth.
		tmpl.DNSNames, tmpl.ExtKeyUsage = []string{cn}, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err = x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, cn+".pem"), filepath.Join(dir, cn+"-key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, cert, key
}

// TestPlainServerTLS runs an iteration on an embedded server with plain
// server TLS: an ordinary certificate (a DNS name, serverAuth only) and
// no client certificates. The trainer connects in process; a worker
// verifies the server against the CA and authenticates with its
// password. Before, the trainer dialled the listen address with the
// server's certificate as its client certificate, which only a
// serverAuth+clientAuth certificate with an IP address passed. A client
// without the CA, or without TLS, is refused; an embedded server on
// another interface without TLS is refused.
func TestPlainServerTLS(t *testing.T) {
	dir := t.TempDir()
	caFile, _, ca, caKey := writeCert(t, dir, "test-ca", nil, nil)
	certFile, keyFile, _, _ := writeCert(t, dir, "localhost", ca, caKey)
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sec := Security{User: "trainer", PasswordFile: pw, CertFile: certFile, KeyFile: keyFile}
	if _, err := StartServer(ServerOptions{StoreDir: filepath.Join(dir, "x"), Listen: "0.0.0.0:0", Security: Security{User: "trainer", PasswordFile: pw}}); err == nil ||
		!strings.Contains(err.Error(), "TLS") {
		t.Errorf("listening on every interface without TLS: %v, want a refusal naming TLS", err)
	}
	srv, err := StartServer(ServerOptions{StoreDir: filepath.Join(dir, "nats"), Listen: "127.0.0.1:0", Security: sec})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	quiet := func(string, ...any) {}
	tnc, err := ConnectInProcess(srv, sec, "trainer", quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer tnc.Close()
	tr, err := NewTrainer(ctx, tnc, Setup{Name: "test", Run: "r1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	tr.FetchWait = 100 * time.Millisecond
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL(), "tls://"))
	url := "tls://localhost:" + port
	worker := Security{User: "trainer", PasswordFile: pw, CAFile: caFile}
	for what, s := range map[string]Security{"without the CA": {User: "trainer", PasswordFile: pw}} {
		if nc, err := Connect(ctx, url, s, "test", quiet); err == nil {
			nc.Close()
			t.Errorf("a client %s connected", what)
		}
	}
	if nc, err := Connect(ctx, "nats://localhost:"+port, worker, "test", quiet); err == nil {
		// The client library upgrades to TLS when the server asks:
		// what matters is that the connection is encrypted.
		if _, err := nc.TLSConnectionState(); err != nil {
			t.Errorf("a nats:// client connected without TLS")
		}
		nc.Close()
	}
	wnc, err := Connect(ctx, url, worker, "worker", quiet)
	if err != nil {
		t.Fatalf("a worker with the CA: %v", err)
	}
	defer wnc.Close()
	if _, err := wnc.TLSConnectionState(); err != nil {
		t.Fatalf("the worker's connection: %v", err)
	}
	w, err := NewWorker(wnc, WorkerOptions{Name: "test", Backend: "cpu", Trees: 4, Cache: t.TempDir(), Report: -1})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	job, netPath := tinyJob(t, dir, 4)
	o := openOutput(t, filepath.Join(dir, "sp"), job)
	if _, err := tr.SelfPlay(ctx, job, netPath, o, nil); err != nil {
		t.Fatal(err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("worker: %v", err)
	}
	if got := o.Manifest().Totals.Games; got != job.Games {
		t.Fatalf("%d games on disk, want %d", got, job.Games)
	}
}
