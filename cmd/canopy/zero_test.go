package main

import (
	"strings"
	"testing"
)

// TestZeroNetCacheFlag: zero takes --net-cache as selfplay does; a size
// out of range, or one with fleet self-play (whose workers keep no
// cache), is a usage error.
func TestZeroNetCacheFlag(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"zero", "--game", "tictactoe", "--out", dir + "/a", "--net-cache", "-1"},
		{"zero", "--game", "tictactoe", "--out", dir + "/b", "--net-cache", "64", "--nats", "embedded"},
	} {
		if code, _, errs := runCLI(t, "", args...); code != 2 || !strings.Contains(errs, "--net-cache") {
			t.Errorf("%v: status %d, stderr %q: want 2 naming --net-cache", args, code, errs)
		}
	}
}
