package tetrislink

import (
	"testing"
)

func FuzzParseWeights(f *testing.F) {
	for _, s := range []string{"2/1/1/4", "0/0/0/0", "1e3/-2/3.5/x", "1/2/3", "NaN/1/1/1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseWeights(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		back, err := ParseWeights(w.String())
		if err != nil || back != w {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, w, w.String(), back, err)
		}
	})
}
