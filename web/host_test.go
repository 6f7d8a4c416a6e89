package web

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostRefused: a page on a rebinding domain (evil.example resolving
// to 127.0.0.1) sends Host: evil.example and Origin: http://evil.example,
// which agree with each other; the server answers only to its own names.
func TestHostRefused(t *testing.T) {
	run := filepath.Join(t.TempDir(), "demo")
	must(t, os.MkdirAll(run, 0o755))
	must(t, os.WriteFile(filepath.Join(run, "metrics.jsonl"), []byte(`{"iteration":1}`+"\n"), 0o644))
	_, hs := testServer(t, Config{MaxGames: 64, Runs: []string{run}, Hosts: []string{"canopy.lan", "Box.Example:8080", "[fd00::1]"}})
	port := hs.URL[strings.LastIndexByte(hs.URL, ':')+1:]
	send := func(method, path, host, origin string) (int, string) {
		t.Helper()
		var body io.Reader
		if method == "POST" {
			body = strings.NewReader(`{"game":"tictactoe","players":["human","human"]}`)
		}
		req, err := http.NewRequest(method, hs.URL+path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if method == "POST" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			return resp.StatusCode, "(stream)"
		}
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	endpoints := []struct{ method, path string }{
		{"GET", "/"},
		{"GET", "/api/catalog"},
		{"GET", "/api/runs"},
		{"GET", "/api/runs/demo/metrics"},
		{"GET", "/api/runs/demo/watch"}, // an event stream
		{"POST", "/api/games"},
	}
	for _, host := range []string{"evil.example", "evil.example:" + port, "localhost.", "localhost.evil.example", "127.0.0.1.nip.io:" + port, "canopy.lan.evil.example"} {
		for _, e := range endpoints {
			for _, origin := range []string{"", "http://" + host} {
				code, body := send(e.method, e.path, host, origin)
				if code != http.StatusMisdirectedRequest || !strings.Contains(body, "--allow-host") {
					t.Errorf("%s %s with Host %q, Origin %q: %d %s; want 421 naming --allow-host", e.method, e.path, host, origin, code, clipN(body, 200))
				}
			}
		}
	}
	for _, host := range []string{"localhost", "localhost:" + port, "LocalHost:" + port, "127.0.0.1", "127.0.0.1:" + port, "[::1]", "[::1]:" + port,
		"canopy.lan", "canopy.lan:" + port, "box.example:8080", "[fd00::1]:" + port} {
		for _, e := range endpoints {
			code, body := send(e.method, e.path, host, "http://"+host)
			if code != http.StatusOK && code != http.StatusCreated {
				t.Errorf("%s %s with Host %q: %d %s; want it served", e.method, e.path, host, code, clipN(body, 200))
			}
		}
	}
}
