package spec

import (
	"flag"
	"io"
	"math"
	"strings"
	"testing"
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
