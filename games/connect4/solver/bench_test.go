package solver

import (
	"testing"
	"time"

	"github.com/canopy-go/canopy/internal/cputime"
)

// BenchmarkFile solves whole reference files, one fresh table per file,
// like Pons' solver reading a file on stdin. Only the solving is timed:
// emptying the 64 MiB table between files (Reset) takes longer than the
// easy files themselves and is reported apart as reset-s/op. Run with
// -benchtime=1x for the slow files.
func BenchmarkFile(b *testing.B) {
	for _, f := range []struct {
		name  string
		limit int
	}{
		{"solver_L3_R1.txt", 0},
		{"solver_L2_R1.txt", 0},
		{"solver_L2_R2.txt", 0},
		{"solver_L1_R2.txt", 20},
	} {
		b.Run(f.name[7:12], func(b *testing.B) {
			lines := readLines(b, f.name, f.limit)
			s := New()
			var nodes uint64
			var cpu, reset time.Duration
			for b.Loop() {
				b.StopTimer()
				r0 := time.Now()
				s.Reset()
				reset += time.Since(r0)
				b.StartTimer()
				cpu0 := cputime.Now()
				for _, l := range lines {
					if got := s.Solve(l.pos); got != l.score {
						b.Fatalf("%s: score %d, want %d", l.moves, got, l.score)
					}
				}
				cpu += cputime.Now() - cpu0
				nodes += s.Nodes()
			}
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/file")
			b.ReportMetric(sec, "s/file")
			b.ReportMetric(sec*1e9/float64(len(lines)), "ns/position")
			b.ReportMetric(float64(nodes)/b.Elapsed().Seconds(), "nodes/s")
			b.ReportMetric(reset.Seconds()/float64(b.N), "reset-s/op")
		})
	}
}
