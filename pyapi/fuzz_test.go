package pyapi

import "testing"

// FuzzCall feeds arbitrary requests to Call and Open (without buffers):
// every one must come back as a reply or an *Error, never a panic, and
// leave no handle open.
func FuzzCall(f *testing.F) {
	for _, s := range []string{
		`{"method":"games"}`, `{"method":"agents","args":{"game":"hex:size=5"}}`,
		`{"method":"game_info","args":{"game":"tetrislink:players=3"}}`, `{"method":"close","handle":3}`,
		`{"method":"env","args":{"game":"connect4","num_envs":2}}`, `{"method":"search","args":{"game":"connect4","moves":["1 2"],"sims":4}}`,
		`{"method":"net","args":{"ref":"connect4-zero"}}`, `{"method":"reset","handle":1,"args":{"seed":3}}`, `nul`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, req []byte) {
		l := NewLibrary()
		if _, err := l.Call(req); err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Call error %T %v", err, err)
			}
		}
		h, _, err := l.Open(req, nil)
		if err == nil {
			// Only a net opens without buffers.
			l.Close(h)
		} else if _, ok := err.(*Error); !ok {
			t.Fatalf("Open error %T %v", err, err)
		}
		if l.Live() != 0 {
			t.Fatalf("%d handles left", l.Live())
		}
	})
}
