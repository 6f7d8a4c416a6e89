package pyapi

import "testing"

// TestSelfPlayReuseKeys: reuse=false (today's key) and noreuse=true
// (the key of earlier releases) both turn subtree reuse off; the
// default keeps it.
func TestSelfPlayReuseKeys(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]string
		no   bool
	}{
		{map[string]string{}, false},
		{map[string]string{"reuse": "false"}, true},
		{map[string]string{"noreuse": "true"}, true},
		{map[string]string{"noreuse": "false"}, false},
	} {
		st, err := ParseSelfPlaySettings(tc.opts)
		if err != nil || st.NoReuse != tc.no {
			t.Errorf("%v: NoReuse %v, %v; want %v", tc.opts, st.NoReuse, err, tc.no)
		}
	}
	if _, err := ParseSelfPlaySettings(map[string]string{"noreuse": "x"}); err == nil {
		t.Error("noreuse=x accepted")
	}
}
