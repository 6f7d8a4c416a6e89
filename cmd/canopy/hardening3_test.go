package main

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// Tests for issue 46 ("Hardening III"): each reproduces a failure seen
// there. They run in-process under -short, in seconds.

// Item 3: devices grew without limit (4.8 GB in 8 s) and a FIFO blocked
// for ever; every reader of whole files now takes regular files only, or
// reads pipes without waiting for a writer and with a cap.
func TestUnboundedInputFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("uses /dev/zero and mkfifo")
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fifo, fifo+".npz"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		want int
		args []string
	}{
		{1, []string{"net", "info", "/dev/zero"}},
		{1, []string{"net", "info", "/dev/urandom"}},
		{1, []string{"net", "info", fifo}},
		{1, []string{"net", "eval", "--game", "tictactoe", "--net", fifo}},
		{2, []string{"move", "--game", "connect4", "--agent", "az:net=/dev/zero"}},
		{2, []string{"move", "--game", "connect4", "--agent", "az:net=" + fifo}},
		{2, []string{"solve", "--outcome", "--book", "/dev/zero"}}, // a bad --book is a usage error, as solver:book= in arena
		{2, []string{"solve", "--outcome", "--book", fifo}},
		{1, []string{"replay", "--log", "/dev/zero"}},
		{1, []string{"replay", "--log", fifo}},
		{1, []string{"train", "--game", "tictactoe", "--data", fifo + ".npz"}},
	} {
		checkBad(t, c.want, "", c.args...)
	}
}

// Item 4: zero had no memory check and train --batch none at all; both
// died of out-of-memory. They refuse with the estimate, status 2, and
// leave no run directory.
func TestRunMemoryChecks(t *testing.T) {
	old := physicalMemory
	physicalMemory = func() (float64, bool) { return 2e9, true }
	defer func() { physicalMemory = old }()
	tmp := t.TempDir()
	out := filepath.Join(tmp, "zero")
	r := runGuarded(t, "", "zero", "--game", "tictactoe", "--games", "65536", "--trees", "65536", "--sims", "100000", "--out", out)
	if r.code != 2 || !strings.Contains(r.err, "needs about") {
		t.Errorf("zero --games 65536 --trees 65536 --sims 100000: status %d, %q; want 2 and the estimate", r.code, r.err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the refused zero run left a directory")
	}
	// Self-play trees with subtree reuse take 4 x sims nodes and a spare
	// arena: 1024 trees of 2000 simulations (about 4 GB) do not fit in
	// 2 GB; the old estimate (sims + leaves + 16 nodes, 0.5 GB) let them.
	r = runGuarded(t, "", "selfplay", "--game", "tictactoe", "--backend", "random", "--games", "1024", "--trees", "1024", "--sims", "2000", "--out", filepath.Join(tmp, "sp0"))
	if r.code != 2 || !strings.Contains(r.err, "needs about") {
		t.Errorf("selfplay 1024 trees x 2000 sims on 2 GB: status %d, %q; want 2 and the estimate", r.code, r.err)
	}
	sp := filepath.Join(tmp, "sp")
	if code, _, errs := runCLI(t, "", "selfplay", "--game", "connect4", "--backend", "random", "--games", "2", "--sims", "8", "--quiet", "--out", sp); code != 0 {
		t.Fatalf("selfplay: %s", errs)
	}
	r = runGuarded(t, "", "train", "--data", sp, "--out", filepath.Join(tmp, "nets"), "--batch", "65536", "--steps", "1", "--quiet")
	if r.code != 2 || !strings.Contains(r.err, "--batch 65536 needs about") {
		t.Errorf("train --batch 65536: status %d, %q; want 2 and the estimate", r.code, r.err)
	}
}

// Item 4: one argument no longer starts unbounded work: tune and arena
// cap their totals, perft estimates its time and asks for --yes.
func TestUnboundedWorkRefused(t *testing.T) {
	checkBad(t, 2, "", "tune", "--game", "tetrislink", "--games", "1000000000", "--iters", "1000000000")
	checkBad(t, 2, "", "perft", "--game", "hex:size=13", "--depth", "50")
	checkBad(t, 2, "", "arena", "--game", "tictactoe", "--agents", "random;random", "--games", "10000000", "--bootstrap", "100000")
	if code, out, errs := runCLI(t, "", "perft", "--game", "tictactoe", "--depth", "9"); code != 0 || !strings.Contains(out, "9 127872") {
		t.Errorf("perft tictactoe to depth 9 (127872 nine-move games, a known count): status %d, %q %q", code, out, errs)
	}
}

// Item 11: an out-of-range --games is a usage error like the others (it
// exited 1).
func TestSelfplayGamesRange(t *testing.T) {
	checkBad(t, 2, "", "selfplay", "--game", "tictactoe", "--backend", "random", "--games", "9223372036854775807", "--out", filepath.Join(t.TempDir(), "r"))
}

// Item 11: a network whose metadata names another game is refused where
// its shapes fit (it played that game's moves in this one).
func TestNetOfAnotherGameRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "h5.safetensors")
	if code, _, errs := runCLI(t, "", "net", "init", "--game", "hex:size=5,swap=true", "--out", p); code != 0 {
		t.Fatalf("net init: %s", errs)
	}
	checkBad(t, 2, "", "move", "--game", "hex:size=5,swap=false", "--agent", "az:sims=4,net="+p)
	if code, _, errs := runCLI(t, "", "move", "--game", "hex:size=5,swap=true", "--agent", "az:sims=4,net="+p); code != 0 {
		t.Errorf("the net on its own game: status %d, %s", code, errs)
	}
}

// overflowNetFor writes the built-in net of game spec with every weight
// 3e38: finite, so it loads, but its outputs overflow to NaN.
func overflowNetFor(t *testing.T, spec string) string {
	t.Helper()
	g, _ := games.New(spec)
	net, err := nets.New(mustBuiltin(t, g), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range net.Params() {
		for i := range p.Data {
			p.Data[i] = 3e38
		}
	}
	net.Invalidate()
	path := filepath.Join(t.TempDir(), "overflow.safetensors")
	if err := net.Save(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// Item 6: a run that failed before producing anything (a --net whose
// outputs are NaN) left settings that made the corrected command (without
// --net) fail the same way; now the corrected command runs in the same
// directory.
func TestFailedRunDoesNotBlockTheCorrectedOne(t *testing.T) {
	bad := overflowNetFor(t, "tictactoe")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"zero", []string{"zero", "--game", "tictactoe", "--games", "2", "--trees", "2", "--sims", "4", "--steps", "2", "--batch", "8",
			"--eval-games", "0", "--iterations", "1", "--backend", "cpu", "--quiet"}},
		{"selfplay", []string{"selfplay", "--game", "tictactoe", "--games", "2", "--sims", "4", "--backend", "cpu", "--quiet"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append(append([]string{}, c.args...), "--out", out)
			if r := runGuarded(t, "", append(args, "--net", bad)...); r.code == 0 {
				t.Fatalf("the overflowing net was accepted: %s", r.err)
			}
			if r := runGuarded(t, "", args...); r.code != 0 {
				t.Errorf("the corrected command: status %d: %s", r.code, tail(r.err))
			}
		})
	}
}

// rewriteZipMember rewrites the zip archive at path with member name's
// bytes changed by edit (the writer recomputes the CRC: a valid archive
// with bad content).
func rewriteZipMember(t *testing.T, path, name string, edit func([]byte)) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if f.Name == name {
			edit(b)
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: f.Method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	zr.Close()
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	write(t, path, buf.String())
}

// Item 9: resume kept shards that train then rejected (a value of 5), so
// train's advice to regenerate them could not be followed; and a shard
// name with control characters stopped resume and wrote raw NUL and
// right-to-left bytes to the terminal. Both are now dropped and their
// games played again, the name escaped.
func TestSelfplayResumeDropsWhatTrainRejects(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"selfplay", "--game", "tictactoe", "--backend", "random", "--games", "6", "--trees", "2", "--sims", "8",
		"--quiet", "--out", dir, "--seed", "5"}
	if r := runGuarded(t, "", args...); r.code != 0 {
		t.Fatalf("status %d\n%s", r.code, r.err)
	}
	first := readSPManifest(t, dir)
	rewriteZipMember(t, filepath.Join(dir, first.Shards[0].File), "value.npy", func(b []byte) {
		hdr := 10 + int(binary.LittleEndian.Uint16(b[8:])) // .npy version 1: magic, version, header length, header
		binary.LittleEndian.PutUint32(b[hdr:], math.Float32bits(5))
	})
	if code, _, errs := runCLI(t, "", "train", "--data", dir, "--out", filepath.Join(t.TempDir(), "nets"), "--steps", "1", "--batch", "4", "--quiet"); code == 0 || !strings.Contains(errs, "value 5") {
		t.Fatalf("train on the bad shard: status %d, %q; want it refused", code, errs)
	}
	mpath := filepath.Join(dir, "manifest.json")
	var m map[string]any
	data, _ := os.ReadFile(mpath)
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	shards := m["shards"].([]any)
	evil := map[string]any{}
	for k, v := range shards[len(shards)-1].(map[string]any) {
		evil[k] = v
	}
	evil["file"] = "x\x00\u202eevil.npz"
	m["shards"] = append(shards, evil)
	data, _ = json.Marshal(m)
	write(t, mpath, string(data))
	checkBad(t, 1, "", "train", "--data", dir, "--out", filepath.Join(t.TempDir(), "nets"), "--steps", "1", "--quiet")
	r := runGuarded(t, "", append(args, "--resume")...)
	if r.code != 0 {
		t.Fatalf("resume: status %d: %s", r.code, r.err)
	}
	if strings.ContainsAny(r.err, "\x00\u202e") || !strings.Contains(r.err, `\x00`) || !strings.Contains(r.err, "value 5") {
		t.Errorf("resume's warnings %q: want the bad value named and the name escaped", r.err)
	}
	if m := readSPManifest(t, dir); m.Totals.Games != 6 {
		t.Errorf("after resume: %d games, want 6", m.Totals.Games)
	}
	if code, _, errs := runCLI(t, "", "train", "--data", dir, "--out", filepath.Join(t.TempDir(), "nets"), "--steps", "1", "--batch", "4", "--quiet"); code != 0 {
		t.Errorf("train on the repaired run: status %d: %s", code, errs)
	}
}

// Item 10: a byte flipped in a shard's zip central directory (numpy
// refuses the file: the member's name differs from its local header's),
// a shard listed twice, a run given twice, and manifests claiming 10^18
// or -5 games were all trained on; now each is refused with one line.
func TestTrainRefusesWhatNumpyAndResumeRefuse(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "run")
	if r := runGuarded(t, "", "selfplay", "--game", "tictactoe", "--backend", "random", "--games", "4", "--sims", "8", "--quiet", "--out", dir); r.code != 0 {
		t.Fatalf("selfplay: %s", r.err)
	}
	trainArgs := func(data string) []string {
		return []string{"train", "--data", data, "--out", filepath.Join(t.TempDir(), "nets"), "--steps", "1", "--batch", "4", "--quiet"}
	}
	if code, _, errs := runCLI(t, "", trainArgs(dir)...); code != 0 {
		t.Fatalf("train on the good run: %s", errs)
	}
	checkBad(t, 1, "", trainArgs(dir+","+dir)...)
	mpath := filepath.Join(dir, "manifest.json")
	good, _ := os.ReadFile(mpath)
	edit := func(f func(m map[string]any)) {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		write(t, mpath, string(b))
	}
	edit(func(m map[string]any) { m["shards"] = append(m["shards"].([]any), m["shards"].([]any)[0]) })
	checkBad(t, 1, "", trainArgs(dir)...)
	// The same games under another shard name: duplicated game ids.
	first := readSPManifest(t, filepath.Dir(mpath)).Shards[0].File
	src, _ := os.ReadFile(filepath.Join(dir, first))
	write(t, filepath.Join(dir, "copy.npz"), string(src))
	edit(func(m map[string]any) {
		c := map[string]any{}
		for k, v := range m["shards"].([]any)[0].(map[string]any) {
			c[k] = v
		}
		c["file"] = "copy.npz"
		m["shards"] = append(m["shards"].([]any), c)
	})
	checkBad(t, 1, "", trainArgs(dir)...)
	os.Remove(filepath.Join(dir, "copy.npz"))
	for _, games := range []float64{1e18, -5} {
		edit(func(m map[string]any) { m["games"] = games })
		checkBad(t, 1, "", trainArgs(dir)...)
	}
	write(t, mpath, string(good))
	// Flip one byte of a member's name in the central directory.
	shard := filepath.Join(dir, readSPManifest(t, dir).Shards[0].File)
	b, _ := os.ReadFile(shard)
	i := bytes.LastIndex(b, []byte("value.npy"))
	if i < 0 || bytes.Index(b, []byte("value.npy")) == i {
		t.Fatal("value.npy not found twice (local header and central directory)")
	}
	b[i] = 'V'
	write(t, shard, string(b))
	checkBad(t, 1, "", trainArgs(dir)...)
	if r := runGuarded(t, "", "selfplay", "--game", "tictactoe", "--backend", "random", "--games", "4", "--sims", "8", "--quiet", "--out", dir, "--resume"); r.code != 0 || !strings.Contains(r.err, "local header") {
		t.Errorf("resume with the damaged shard: status %d, %q; want it dropped and regenerated", r.code, r.err)
	}
	if code, _, errs := runCLI(t, "", trainArgs(dir)...); code != 0 {
		t.Errorf("train on the repaired run: %s", errs)
	}
}
