package strands

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/internal/refdata"
)

// boardFile is the content of one MegaZero board file.
type boardFile struct {
	grid     [][]string // W x W tokens
	cells    [][7]int   // x y q r s ring label
	counts   [7]int     // "Label counts" header
	maxTurns int
}

func readBoardFile(t *testing.T, path string) boardFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var bf boardFile
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "# Label counts:"):
			rest := strings.TrimPrefix(line, "# Label counts:")
			rest, _, _ = strings.Cut(rest, "(")
			for _, kv := range strings.Split(rest, ",") {
				k, v, ok := strings.Cut(strings.TrimSpace(kv), ":")
				ki, err1 := strconv.Atoi(k)
				vi, err2 := strconv.Atoi(v)
				if !ok || err1 != nil || err2 != nil || ki < 1 || ki > 6 {
					t.Fatalf("%s: bad label count %q", path, kv)
				}
				bf.counts[ki] = vi
			}
		case strings.HasPrefix(line, "# MAX_TURNS"):
			_, v, _ := strings.Cut(line, "=")
			bf.maxTurns, err = strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("%s: bad MAX_TURNS line %q", path, line)
			}
		case line == "GRID" || line == "CELLS":
			section = line
		case line == "" || strings.HasPrefix(line, "#"):
		case section == "GRID":
			bf.grid = append(bf.grid, strings.Fields(line))
		case section == "CELLS":
			var c [7]int
			fs := strings.Fields(line)
			if len(fs) != 7 {
				t.Fatalf("%s: bad cell line %q", path, line)
			}
			for i, s := range fs {
				if c[i], err = strconv.Atoi(s); err != nil {
					t.Fatalf("%s: bad cell line %q", path, line)
				}
			}
			bf.cells = append(bf.cells, c)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return bf
}

// TestBoardsMatchFiles checks the generated boards cell by cell against
// MegaZero's board files: grid labels, cell order and coordinates, the
// label counts and the game length of the headers, and the neighbours
// given by the files' formula (x-1,y) (x+1,y-1) (x+1,y) (x-1,y+1) (x,y-1)
// (x,y+1) (the generator uses cube-coordinate distance instead).
func TestBoardsMatchFiles(t *testing.T) {
	data := refdata.Dir(t)
	for _, side := range []int{4, 5, 6} {
		t.Run(fmt.Sprint("side=", side), func(t *testing.T) {
			bf := readBoardFile(t, filepath.Join(data, "strands", fmt.Sprintf("board_%d.txt", side)))
			b, err := BoardOf(side)
			if err != nil {
				t.Fatal(err)
			}
			if len(bf.grid) != b.W {
				t.Fatalf("file grid has %d rows, board W=%d", len(bf.grid), b.W)
			}
			onFile := func(x, y int) bool {
				return x >= 0 && y >= 0 && x < b.W && y < b.W && bf.grid[x][y] != "."
			}
			var gridCounts [7]int
			for x, row := range bf.grid {
				if len(row) != b.W {
					t.Fatalf("file grid row %d has %d tokens", x, len(row))
				}
				for y, tok := range row {
					c := b.At(x, y)
					if tok == "." {
						if c >= 0 {
							t.Errorf("(%d,%d) is off the board in the file but cell %d here", x, y, c)
						}
						continue
					}
					lab, _ := strconv.Atoi(tok)
					gridCounts[lab]++
					if c < 0 || int(b.Label[c]) != lab {
						t.Errorf("(%d,%d): file label %d, generated cell %d label %d", x, y, lab, c, b.Label[max(c, 0)])
					}
				}
			}
			if len(bf.cells) != b.N {
				t.Fatalf("file lists %d cells, board has %d", len(bf.cells), b.N)
			}
			for i, fc := range bf.cells {
				x, y, q, r, s, ring, lab := fc[0], fc[1], fc[2], fc[3], fc[4], fc[5], fc[6]
				if int(b.X[i]) != x || int(b.Y[i]) != y || int(b.Label[i]) != lab {
					t.Errorf("cell %d: file (%d,%d) label %d, generated (%d,%d) label %d", i, x, y, lab, b.X[i], b.Y[i], b.Label[i])
				}
				if q != y-(side-1) || r != x-(side-1) || s != -q-r || ring != max(abs(q), abs(r), abs(s)) {
					t.Errorf("cell %d: file cube coordinates %v do not follow the stated convention", i, fc)
				}
				var want []int
				for _, d := range [6][2]int{{-1, 0}, {1, -1}, {1, 0}, {-1, 1}, {0, -1}, {0, 1}} {
					if onFile(x+d[0], y+d[1]) {
						want = append(want, b.At(x+d[0], y+d[1]))
					}
				}
				var got []int
				for k := range int(b.NbrCount[i]) {
					got = append(got, int(b.Nbr[i][k]))
				}
				slices.Sort(want)
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("cell %d (%d,%d): neighbours %v, file formula gives %v", i, x, y, got, want)
				}
			}
			for lab := 1; lab <= 6; lab++ {
				if bf.counts[lab] != b.LabelCount[lab] || gridCounts[lab] != b.LabelCount[lab] {
					t.Errorf("label %d: header count %d, grid count %d, generated %d", lab, bf.counts[lab], gridCounts[lab], b.LabelCount[lab])
				}
			}
			if b.Turns() != bf.maxTurns {
				t.Errorf("Turns() = %d, file MAX_TURNS = %d", b.Turns(), bf.maxTurns)
			}
		})
	}
}

// TestLabelCounts pins the counts quoted in RULES.md and the board headers
// independently of the files.
func TestLabelCounts(t *testing.T) {
	want := map[int][7]int{
		4: {0, 1, 18, 12, 6, 0, 0},
		5: {0, 1, 18, 18, 18, 0, 6},
		6: {0, 1, 36, 24, 0, 24, 6},
	}
	cells := map[int]int{4: 37, 5: 61, 6: 91}
	turns := map[int]int{4: 17, 5: 23, 6: 34}
	for side, w := range want {
		b, _ := BoardOf(side)
		if b.LabelCount != w || b.N != cells[side] || b.Turns() != turns[side] {
			t.Errorf("side %d: counts %v cells %d turns %d; want %v %d %d", side, b.LabelCount, b.N, b.Turns(), w, cells[side], turns[side])
		}
	}
	if _, err := BoardOf(7); err == nil {
		t.Error("BoardOf(7) accepted")
	}
}
