package refdata

import (
	"os"
	"testing"
)

func TestFindsConnectFourData(t *testing.T) {
	p := Path(t, "connect4/perft_paths.txt")
	if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
		t.Fatalf("%s: %v", p, err)
	}
}
