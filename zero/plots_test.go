package zero

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/plots"
)

// plots reads run directories without importing zero: its file names and
// its reading of metrics.jsonl must agree with what zero writes, and with
// what zero draws from the records themselves.
func TestPlotsReadsWhatZeroWrites(t *testing.T) {
	if plots.ZeroConfigFile != ConfigName || plots.MetricsFile != MetricsName {
		t.Fatalf("plots names %s and %s, zero writes %s and %s", plots.ZeroConfigFile, plots.MetricsFile, ConfigName, MetricsName)
	}
	p, s, r := 0.25, 0.5, 0.125
	recs := []Record{
		{Iteration: 1, Train: TrainRecord{FinalLoss: nets.Loss{Total: 3, Policy: 2, Value: 1, L2: 0.5}}},
		{Iteration: 2, Train: TrainRecord{FinalLoss: nets.Loss{Total: 2.5, Policy: 1.75, Value: 0.75},
			HeldOut: &nets.Loss{Total: 3.5, Policy: 2.25, Value: 1.25}, HeldOutPositions: 7},
			Eval: EvalRecord{SolverPolicy: &p, SolverSearch: &s, SolverRandom: &r}, Elo: &Rating{Value: 40, Lo: -10, Hi: 90}},
	}
	var data []byte
	for _, rec := range recs {
		line, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		data = append(append(data, line...), '\n')
	}
	got, err := plots.ParseZeroMetrics(data, MetricsName)
	if err != nil {
		t.Fatal(err)
	}
	want := []plots.Iteration{
		{Iteration: 1, Loss: plots.Loss{Total: 3, Policy: 2, Value: 1, L2: 0.5}},
		{Iteration: 2, Loss: plots.Loss{Total: 2.5, Policy: 1.75, Value: 0.75}, HeldOut: &plots.Loss{Total: 3.5, Policy: 2.25, Value: 1.25}, SolverPolicy: &p, SolverSearch: &s, SolverRandom: &r,
			Elo: &plots.Interval{Value: 40, Lo: -10, Hi: 90}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("plots read %+v, want %+v", got, want)
	}
	if direct := iterations(recs); !reflect.DeepEqual(direct, want) {
		t.Errorf("zero draws %+v, want %+v", direct, want)
	}
}
