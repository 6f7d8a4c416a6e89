package solver

import (
	"testing"

	"github.com/canopy-go/canopy/internal/cputime"
)

// BenchmarkFile solves whole reference files, one fresh table per file (the
// Reset is timed), like Pons' solver reading a file on stdin. Run with
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
			cpu0 := cputime.Seconds()
			for b.Loop() {
				s.Reset()
				for _, l := range lines {
					if got := s.Solve(l.pos); got != l.score {
						b.Fatalf("%s: score %d, want %d", l.moves, got, l.score)
					}
				}
				nodes += s.Nodes()
			}
			cpu := (cputime.Seconds() - cpu0) / float64(b.N)
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(cpu, "cpu-s/file")
			b.ReportMetric(sec, "s/file")
			b.ReportMetric(sec*1e9/float64(len(lines)), "ns/position")
			b.ReportMetric(float64(nodes)/b.Elapsed().Seconds(), "nodes/s")
		})
	}
}
