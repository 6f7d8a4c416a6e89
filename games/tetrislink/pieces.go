package tetrislink

import "strings"

// Board and piece-set dimensions.
const (
	Width        = 10 // columns
	Height       = 20 // rows
	NumShapes    = 5  // I, O, T, S, L
	PiecesEach   = 5  // pieces of each shape per player
	NumOrients   = 19 // orientations over all shapes
	NumActionIDs = NumOrients * Width
	MaxPlayers   = 4
	maxPieces    = MaxPlayers * NumShapes * PiecesEach // 100
	fullRow      = 1<<Width - 1
)

// Shape letters in shape-index order.
const shapeLetters = "IOTSL"

// orient is one orientation of a shape. rows[r] is the bitmask of the
// piece's cells in row r of its bounding box (r = 0 is the bottom row, bit i
// is column x+i when dropped at column x). bot[i]/top[i] are the lowest
// occupied row and one above the highest occupied row of piece column i; in
// every tetromino each column's cells are contiguous, so the cells of column
// i are rows bot[i]..top[i]-1.
type orient struct {
	shape  uint8 // index into shapeLetters
	index  uint8 // orientation index within the shape (the digit in "T2@5")
	w, h   int8  // bounding box
	rows   [4]uint16
	bot    [4]int8
	top    [4]int8
	validX uint16 // drop columns where the piece stays inside the board
	// nb[d+1] (d = -1..h) holds the cells edge-adjacent to the piece in
	// piece row d, excluding the piece, shifted left by one: bit j is column
	// x+j-1, so the board mask is (nb[d+1] << x >> 1) & fullRow.
	nb [6]uint16
	// lim[i] is the index t-16 of the height bound t = 20-h+bot[i] that
	// column x+i must respect for the piece to fit (see computeFit).
	lim [4]uint8
	// dropBot is bot padded with 64 beyond the piece's width, so that the
	// landing row is a branch-free max over four columns (State.height has
	// three padding columns of height 0).
	dropBot [4]int8
	// cells are the piece's cell offsets r*Width+c from its bottom-left
	// corner.
	cells [4]uint8
}

// orientPictures lists every orientation, top row first, grouped by shape
// in shapeLetters order. The order fixes the action ids.
var orientPictures = [NumShapes][]string{
	{"####", "#/#/#/#"}, // I: horizontal, vertical
	{"##/##"},           // O
	{".#./###", "#./##/#.", "###/.#.", ".#/##/.#"},                                               // T: point up, right, down, left
	{".##/##.", "#./##/.#", "##./.##", ".#/##/#."},                                               // S, S vertical, Z, Z vertical
	{"#./#./##", "###/#..", "##/.#/.#", "..#/###", ".#/.#/##", "#../###", "##/#./#.", "###/..#"}, // L x4, J x4
}

var (
	orients [NumOrients]orient
	// shapeOrients[s] is the action-id mask (3 words) of every orientation
	// and column of shape s.
	shapeActions [NumShapes][3]uint64
	// actOrient/actX split an action id without division.
	actOrient [NumActionIDs]uint8
	actX      [NumActionIDs]uint8
	// needLow[t][c] holds the action ids that fit only while column c has
	// height <= 16+t (see State.computeFit); when a drop raises column c
	// past 16+t, those ids stop fitting for good.
	needLow [4][Width][3]uint64
	// shapeFirstOrient[s] is the global index of shape s's orientation 0.
	shapeFirstOrient [NumShapes + 1]uint8
)

func init() {
	o := 0
	for s, pics := range orientPictures {
		shapeFirstOrient[s] = uint8(o)
		for i, pic := range pics {
			orients[o] = parsePicture(pic)
			orients[o].shape, orients[o].index = uint8(s), uint8(i)
			o++
		}
	}
	shapeFirstOrient[NumShapes] = uint8(o)
	if o != NumOrients {
		panic("tetrislink: orientation table has wrong size")
	}
	for a := range NumActionIDs {
		actOrient[a], actX[a] = uint8(a/Width), uint8(a%Width)
		ori := &orients[a/Width]
		shapeActions[ori.shape][a>>6] |= 1 << (a & 63)
		if x := a % Width; ori.validX>>x&1 != 0 {
			for i := range int(ori.w) {
				needLow[ori.lim[i]][x+i][a>>6] |= 1 << (a & 63)
			}
		}
	}
}

func parsePicture(pic string) orient {
	lines := strings.Split(pic, "/")
	var or orient
	or.h = int8(len(lines))
	or.w = int8(len(lines[0]))
	for i := range or.bot {
		or.bot[i], or.top[i] = -1, -1
	}
	for li, line := range lines {
		r := len(lines) - 1 - li // bottom row is r = 0
		for c, ch := range line {
			if ch != '#' {
				continue
			}
			or.rows[r] |= 1 << c
			if or.bot[c] < 0 || int8(r) < or.bot[c] {
				or.bot[c] = int8(r)
			}
			if int8(r)+1 > or.top[c] {
				or.top[c] = int8(r) + 1
			}
		}
	}
	for d := -1; d <= int(or.h); d++ {
		var pr, below, above uint16
		if d >= 0 && d < int(or.h) {
			pr = or.rows[d] << 1
		}
		if d-1 >= 0 && d-1 < int(or.h) {
			below = or.rows[d-1] << 1
		}
		if d+1 >= 0 && d+1 < int(or.h) {
			above = or.rows[d+1] << 1
		}
		or.nb[d+1] = (pr<<1 | pr>>1 | below | above) &^ pr
	}
	for i := range int(or.w) {
		or.lim[i] = uint8(Height - 16 - int(or.h) + int(or.bot[i]))
	}
	n := 0
	for r := range 4 {
		for c := range 4 {
			if or.rows[r]>>c&1 != 0 {
				or.cells[n] = uint8(r*Width + c)
				n++
			}
		}
	}
	for i := range 4 {
		or.dropBot[i] = 64
		if i < int(or.w) {
			or.dropBot[i] = or.bot[i]
		}
	}
	for x := 0; x+int(or.w) <= Width; x++ {
		or.validX |= 1 << x
	}
	return or
}
