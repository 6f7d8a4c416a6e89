package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/canopy-go/canopy/bench"
)

func cmdBenchfmt(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("benchfmt", stderr, "[FILE]   (default: standard input)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var data []byte
	var err error
	switch fs.NArg() {
	case 0:
		data, err = io.ReadAll(os.Stdin)
	case 1:
		data, err = os.ReadFile(fs.Arg(0))
	default:
		return usagef("at most one file")
	}
	if err != nil {
		return err
	}
	return benchToGoFormat(stdout, data)
}

// benchToGoFormat writes the JSON output of `canopy bench games|net|search
// --json` as lines of the Go benchmark format, one per game, batch size or
// search, so that benchstat compares runs of canopy bench like runs of
// go test -bench. The benchmark's iteration count is the playouts, calls
// or 1; the metrics keep canopy bench's units.
func benchToGoFormat(w io.Writer, data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return fmt.Errorf("benchfmt: empty input (want the output of canopy bench ... --json)")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "goos: %s\ngoarch: %s\npkg: canopy-bench\n", runtime.GOOS, runtime.GOARCH)
	if data[0] == '[' {
		var rs []bench.GameResult
		if err := json.Unmarshal(data, &rs); err != nil {
			return fmt.Errorf("benchfmt: not the output of canopy bench games --json: %v", err)
		}
		for _, r := range rs {
			fmt.Fprintf(&b, "BenchmarkCanopyGames/game=%s %d %s playouts/s %s moves/s %s ns/legal %s ns/apply %s ns/clone %s ns/hash\n",
				benchName(r.Game), max(r.Playouts, 1), num(r.PlayoutsSec), num(r.MovesSec), num(r.LegalNs), num(r.ApplyNs), num(r.CloneNs), num(r.HashNs))
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return fmt.Errorf("benchfmt: not JSON from canopy bench: %v", err)
	}
	switch {
	case keys["rows"] != nil:
		var r struct {
			Game string `json:"game"`
			bench.NetResult
		}
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("benchfmt: not the output of canopy bench net --json: %v", err)
		}
		for _, row := range r.Rows {
			fmt.Fprintf(&b, "BenchmarkCanopyNet/game=%s/backend=%s/batch=%d %d %s evals/s",
				benchName(r.Game), benchName(r.Backend), row.Batch, max(row.Calls, 1), num(row.EvalsPerSec))
			if row.EvalsPerCPUSec > 0 {
				fmt.Fprintf(&b, " %s evals/cpu-s", num(row.EvalsPerCPUSec))
			}
			fmt.Fprintf(&b, " %s ms/batch-p50 %s ms/batch-p99\n", num(row.P50ms), num(row.P99ms))
		}
	case keys["nodes_per_sec"] != nil:
		var r bench.SearchResult
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("benchfmt: not the output of canopy bench search --json: %v", err)
		}
		fmt.Fprintf(&b, "BenchmarkCanopySearch/game=%s/backend=%s/trees=%d/batch=%d/sims=%d/leaves=%d 1 %s nodes/s %s nodes/cpu-s %s evals/s %s rows/batch %s busy-frac\n",
			benchName(r.Game), benchName(r.Backend), r.Trees, r.Batch, r.Sims, r.Leaves,
			num(r.NodesPerSec), num(r.NodesPerCPUSec), num(r.EvalsPerSec), num(r.MeanBatch), num(r.BusyFraction))
	default:
		return fmt.Errorf("benchfmt: unrecognised JSON (want the output of canopy bench games, net or search with --json)")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// benchName makes s usable inside a benchmark name: no spaces, and no '='
// or '/' that would split it into more name=value parts.
func benchName(s string) string {
	return strings.NewReplacer(" ", "_", "=", "-", "/", "_", "\t", "_").Replace(s)
}

// num formats a metric value.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
