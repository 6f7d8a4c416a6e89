package spec

import (
	"flag"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTableWideIntegers(t *testing.T) {
	var seed uint64
	var bytes int64
	tab := Table{
		Uint64("seed", &seed, 1, 0, math.MaxUint64, "random seed"),
		Int64("bytes", &bytes, -1, -1, 1<<40, "a byte count, -1 for automatic"),
	}
	tab.Reset()
	if seed != 1 || bytes != -1 {
		t.Fatalf("defaults: seed %d bytes %d, want 1 and -1", seed, bytes)
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	tab.Register(fs)
	if err := fs.Parse([]string{"--seed", "18446744073709551615", "--bytes", "0x400"}); err != nil {
		t.Fatal(err)
	}
	if seed != math.MaxUint64 || bytes != 1024 {
		t.Fatalf("parsed: seed %d bytes %d, want %d and 1024", seed, bytes, uint64(math.MaxUint64))
	}
	for _, bad := range []struct{ key, v, want string }{
		{"seed", "-1", "not a non-negative integer"},
		{"seed", "x", "not a non-negative integer"},
		{"bytes", "-2", "out of range"},
		{"bytes", "1099511627777", "out of range"},
	} {
		err := tab.Set(bad.key, bad.v)
		if err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), bad.key) {
			t.Errorf("Set(%s, %s) = %v, want an error naming %s and saying %q", bad.key, bad.v, err, bad.key, bad.want)
		}
	}
	if v := tab.Values(); v["seed"] != "18446744073709551615" || v["bytes"] != "1024" {
		t.Errorf("Values = %v", v)
	}
}

func TestTableStringsRepeat(t *testing.T) {
	var runs []string
	var idle time.Duration
	tab := Table{
		Strings("run", &runs, "a run directory; repeatable"),
		DurationIn("idle", &idle, 30*time.Minute, time.Minute, 24*time.Hour, "idle time"),
	}
	runs = []string{"stale"}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	tab.Flags(fs)
	if runs != nil || idle != 30*time.Minute {
		t.Fatalf("after Flags: runs %q idle %v, want none and 30m", runs, idle)
	}
	if d := fs.Lookup("run").DefValue; d != "" {
		t.Errorf("run's default shows as %q, want empty", d)
	}
	if err := fs.Parse([]string{"--run", "a,b", "--run", "c", "--idle", "2m"}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(runs, []string{"a,b", "c"}) || idle != 2*time.Minute {
		t.Fatalf("parsed: runs %q idle %v, want [a,b c] and 2m", runs, idle)
	}
	if err := tab.Check(); err != nil {
		t.Errorf("Check of good values: %v", err)
	}
	if !slices.Equal(runs, []string{"a,b", "c"}) {
		t.Errorf("Check changed the list: %q", runs)
	}
	if v := tab.Values()["run"]; v != "a,b,c" {
		t.Errorf("Values run = %q", v)
	}
	runs = append(runs, " ")
	if err := tab.Check(); err == nil || !strings.Contains(err.Error(), `run=" ": empty value`) {
		t.Errorf("Check of an empty element = %v, want an error naming run", err)
	}
	for _, bad := range []struct{ key, v, want string }{
		{"run", "", "empty value"},
		{"run", " ", `run=" "`},
		{"idle", "59s", "out of range (want 1m0s..24h0m0s)"},
		{"idle", "25h", "out of range"},
	} {
		if err := tab.Set(bad.key, bad.v); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Set(%s, %q) = %v, want %q", bad.key, bad.v, err, bad.want)
		}
	}
	if err := tab.SetDefault("run", "x"); err == nil {
		t.Error("SetDefault of a list option succeeded")
	}
	tab.Reset()
	if runs != nil {
		t.Errorf("Reset left %q", runs)
	}
}
