package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestServeUsageErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nosuch")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "extra"}, "unexpected argument"},
		{[]string{"serve", "--max-games", "0"}, "--max-games 0"},
		{[]string{"serve", "--move-timeout", "1ms"}, "--move-timeout"},
		{[]string{"serve", "--addr", "nonsense"}, "--addr"},
		{[]string{"serve", "--run", missing}, "--run: cannot read"},
		{[]string{"serve", "--logs", missing}, "--logs: cannot read"},
		{[]string{"serve", "--run", ""}, "empty value"},
		{[]string{"serve", "--max-streams", "0"}, "--max-streams 0"},
		{[]string{"serve", "--allow-host", "http://evil.example"}, "--allow-host \"http://evil.example\""},
		{[]string{"serve", "--allow-host", "a b"}, "--allow-host \"a b\""},
		{[]string{"serve", "--allow-host", "ok.lan,,x"}, "--allow-host"},
		{[]string{"serve", "--max-games-per-client", "-1"}, "--max-games-per-client -1"},
		{[]string{"serve", "--max-games", "4", "--max-games-per-client", "5"}, "--max-games-per-client 5"},
	} {
		code, _, errs := runCLI(t, "", tt.args...)
		if code != 2 || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: status %d, stderr %q; want 2 with %q", tt.args, code, errs, tt.want)
		}
		if first := strings.SplitN(errs, "\n", 2)[0]; !strings.HasPrefix(first, "canopy serve: ") {
			t.Errorf("%v: first line %q is not one line of error", tt.args, first)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeStartsAndStops runs the server on a free port, fetches the page
// and the catalog, and stops it as SIGINT would; a run watch open then
// (an event stream, which never ends by itself) is ended cleanly, not
// cut when the shutdown grace runs out.
func TestServeStartsAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	old := serveContext
	serveContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	defer func() { serveContext = old }()

	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"serve", "--addr", "127.0.0.1:0", "--run", t.TempDir()}, &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	}()
	re := regexp.MustCompile(`http://[0-9.:]+/`)
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); {
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d: %s", code, errb.String())
		case <-time.After(20 * time.Millisecond):
		}
		url = re.FindString(out.String())
	}
	if url == "" {
		t.Fatalf("no address printed: %q", out.String())
	}
	for _, p := range []string{"", "api/catalog", "api/runs"} {
		resp, err := http.Get(url + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(body) == 0 {
			t.Errorf("GET %s: %d %q", url+p, resp.StatusCode, body)
		}
	}
	runs, err := http.Get(url + "api/runs")
	if err != nil {
		t.Fatal(err)
	}
	var list []struct{ Name string }
	err = json.NewDecoder(runs.Body).Decode(&list)
	runs.Body.Close()
	if err != nil || len(list) != 1 {
		t.Fatalf("api/runs: %v %v", list, err)
	}
	watch, err := http.Get(url + "api/runs/" + list[0].Name + "/watch")
	if err != nil {
		t.Fatal(err)
	}
	if ct := watch.Header.Get("Content-Type"); watch.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("watch: %d %s", watch.StatusCode, ct)
	}
	streamEnd := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(watch.Body)
		watch.Body.Close()
		streamEnd <- err
	}()
	cancel()
	if err := <-streamEnd; err != nil {
		t.Errorf("the watch stream was cut at shutdown (%v), not ended", err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("serve stopped with status %d: %s", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	if strings.Contains(errb.String(), "warning") {
		t.Errorf("loopback address warned: %q", errb.String())
	}
}

// startServe runs serve with args until the test ends and returns the URL
// it prints and its stdout and stderr so far.
func startServe(t *testing.T, args ...string) (string, *syncBuffer, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	old := serveContext
	serveContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	var out, errb syncBuffer
	done := make(chan int, 1)
	exited := make(chan struct{})
	go func() {
		done <- run(append([]string{"serve"}, args...), &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
		close(exited)
	}()
	t.Cleanup(func() {
		cancel()
		serveContext = old
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Error("serve did not stop")
		}
	})
	re := regexp.MustCompile(`http://[0-9.:]+/`)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d: %s", code, errb.String())
		case <-time.After(20 * time.Millisecond):
		}
		if url := re.FindString(out.String()); url != "" {
			serveContext = old // read once serve started
			return url, &out, &errb
		}
	}
	t.Fatalf("no address printed: %q", out.String())
	return "", nil, nil
}

// TestServeAllowHost: the server answers to its listen address, loopback
// names and --allow-host names (repeatable, comma lists), and refuses
// other Host headers (DNS rebinding) with 421.
func TestServeAllowHost(t *testing.T) {
	url, _, _ := startServe(t, "--addr", "127.0.0.1:0", "--allow-host", "canopy.lan, Box.lan", "--allow-host", "other.lan:9000")
	port := strings.TrimSuffix(url[strings.LastIndexByte(url, ':')+1:], "/")
	for host, want := range map[string]int{
		"127.0.0.1:" + port: 200, "localhost:" + port: 200, "canopy.lan:" + port: 200, "box.lan": 200, "other.lan:" + port: 200,
		"evil.example:" + port: http.StatusMisdirectedRequest, "canopy.lan.evil.example": http.StatusMisdirectedRequest,
	} {
		req, _ := http.NewRequest("GET", url+"api/catalog", nil)
		req.Host = host
		req.Header.Set("Origin", "http://"+host)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d %s, want %d", host, resp.StatusCode, body, want)
		}
	}
}

// TestServeIPv4Only: --addr 0.0.0.0:PORT listens on IPv4 only, as asked
// (Go's "tcp" would also take IPv6 connections), and says where.
func TestServeIPv4Only(t *testing.T) {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here (%v): nothing to tell apart", err)
	}
	ln.Close()
	url, out, errb := startServe(t, "--addr", "0.0.0.0:0")
	port := strings.TrimSuffix(url[strings.LastIndexByte(url, ':')+1:], "/")
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second); err != nil {
		t.Errorf("IPv4 loopback: %v", err)
	} else {
		c.Close()
	}
	if c, err := net.DialTimeout("tcp", "[::1]:"+port, 5*time.Second); err == nil {
		c.Close()
		t.Errorf("--addr 0.0.0.0 also takes IPv6 connections on [::1]:%s", port)
	}
	if all := out.String() + errb.String(); !strings.Contains(all, "every IPv4 interface") {
		t.Errorf("serve does not say it listens on every IPv4 interface: %q", all)
	}
}
