package tetrislink

import (
	"math/bits"

	"github.com/canopy-go/canopy/games"
)

const noMove = 0xff

// Zobrist keys: a piece cell of player p, player p having c pieces of shape
// s left (c < 5; the full count contributes nothing), player p to move.
var (
	cellKey [MaxPlayers][Height * Width]uint64
	leftKey [MaxPlayers][NumShapes][PiecesEach]uint64
	moveKey [MaxPlayers]uint64
)

func init() {
	k := games.ZobristKeys(0x7e7215111c, MaxPlayers*(Height*Width+NumShapes*PiecesEach+1))
	for p := range MaxPlayers {
		for c := range Height * Width {
			cellKey[p][c], k = k[0], k[1:]
		}
		for s := range NumShapes {
			for n := range PiecesEach {
				leftKey[p][s][n], k = k[0], k[1:]
			}
		}
		moveKey[p], k = k[0], k[1:]
	}
}

// State is a Tetris Link position. It is a plain value: copying it (as
// CloneInto does) gives an independent state. Not safe for concurrent use.
//
// Invariants: rows[r] is the OR of own[p][r] over players; height[c] is one
// above the highest occupied cell of column c (0 when empty); fit has bit
// o*10+x set iff orientation o dropped at column x lands inside the board;
// avail[p] is the union of shapeActions over the shapes p still has; for a
// piece index k < n (the k-th piece placed), parent/size form a union-find
// over same-colour touching pieces (size valid at roots) and joinedAt[k] is
// the move at which root k was attached to another root (noMove while k is a
// root); pieceAt is valid on occupied cells only.
type State struct {
	g        *Game
	rows     [Height]uint16
	own      [MaxPlayers][Height]uint16
	height   [Width + 3]int8 // 3 padding columns, always 0, for landing
	n        uint8           // pieces placed = MoveNumber
	toMove   int8            // player to move, -1 once the game is over
	fit      [3]uint64
	avail    [MaxPlayers][3]uint64
	left     [MaxPlayers][NumShapes]uint8
	score    [MaxPlayers]int16
	hash     uint64
	hist     [maxPieces]uint8 // action ids in order
	parent   [maxPieces]uint8
	size     [maxPieces]uint8
	joinedAt [maxPieces]uint8
	pieceAt  [Height * Width]uint8
}

// Reset makes s the initial position of its game.
func (s *State) Reset() {
	g := s.g
	*s = State{g: g}
	for p := range g.players {
		for sh := range NumShapes {
			s.left[p][sh] = PiecesEach
			for w := range 3 {
				s.avail[p][w] |= shapeActions[sh][w]
			}
		}
	}
	s.computeFit()
	s.hash = moveKey[0]
}

// groupValue is what a group of n pieces adds to its owner's score.
func groupValue(n int) int {
	if n >= 3 {
		return n
	}
	return 0
}

// lowMasks returns, for t = 0..3, the columns whose height is <= 16+t.
func (s *State) lowMasks() (low [4]uint16) {
	for c := range Width {
		h := int(s.height[c])
		for t := range 4 {
			if h <= 16+t {
				low[t] |= 1 << c
			}
		}
	}
	return low
}

// computeFit rebuilds s.low and s.fit from the column heights. Orientation
// o fits at column x iff for every piece column i, height[x+i] <= 20 - h +
// bot[i] (the landing row plus the piece height stays within the board); the
// bound lies in 16..19, so the four low masks decide every placement.
func (s *State) computeFit() {
	low := s.lowMasks()
	s.fit = [3]uint64{}
	for oi := range orients {
		o := &orients[oi]
		m := o.validX
		for i := range int(o.w) {
			m &= low[o.lim[i]] >> i
		}
		pos := oi * Width
		w, sh := pos>>6, uint(pos&63)
		s.fit[w] |= uint64(m) << sh
		if sh > 64-Width {
			s.fit[w+1] |= uint64(m) >> (64 - sh)
		}
	}
}

// landing returns the bottom row of orientation o dropped at column x.
func (s *State) landing(o *orient, x int) int {
	hs := s.height[x : x+4 : x+4]
	b := &o.dropBot
	return max(0, int(hs[0])-int(b[0]), int(hs[1])-int(b[1]), int(hs[2])-int(b[2]), int(hs[3])-int(b[3]))
}

func (s *State) find(k uint8) uint8 {
	for s.parent[k] != k {
		k = s.parent[k]
	}
	return k
}

// neighbourRoots appends to roots the distinct union-find roots of player
// p's pieces edge-adjacent to orientation o placed at column x, row land,
// and returns them. The piece itself must not yet be in own[p].
func (s *State) neighbourRoots(p int, o *orient, x, land int, roots []uint8) []uint8 {
	own := &s.own[p]
	lo, hi := max(land-1, 0), min(land+int(o.h), Height-1)
	last := uint8(noMove) // neighbouring cells often share a piece
	for r := lo; r <= hi; r++ {
		nb := (o.nb[r-land+1] << x >> 1) & own[r]
		for ; nb != 0; nb &= nb - 1 {
			piece := s.pieceAt[r*Width+bits.TrailingZeros16(nb)]
			if piece == last {
				continue
			}
			last = piece
			root := s.find(piece)
			dup := false
			for _, q := range roots {
				dup = dup || q == root
			}
			if !dup {
				roots = append(roots, root)
			}
		}
	}
	return roots
}

// Legal implements games.State.
func (s *State) Legal(dst games.Mask) {
	clear(dst)
	if s.toMove < 0 {
		return
	}
	av := &s.avail[s.toMove]
	dst[0], dst[1], dst[2] = s.fit[0]&av[0], s.fit[1]&av[1], s.fit[2]&av[2]
}

// canMove reports whether player p has a piece that fits somewhere.
func (s *State) canMove(p int) bool {
	av := &s.avail[p]
	return s.fit[0]&av[0]|s.fit[1]&av[1]|s.fit[2]&av[2] != 0
}

// Apply implements games.State: the player to move drops orientation a/10
// at column a%10. a must be legal.
func (s *State) Apply(a games.Action) {
	o := &orients[actOrient[a]]
	x := int(actX[a])
	p := int(s.toMove)
	k := s.n
	land := s.landing(o, x)

	var rootBuf [12]uint8
	roots := s.neighbourRoots(p, o, x, land, rootBuf[:0])

	holes := 0
	for i := range int(o.w) {
		c := x + i
		old := int(s.height[c])
		holes += land + int(o.bot[i]) - old
		nw := land + int(o.top[i])
		s.height[c] = int8(nw)
		// Placements needing height[c] <= 16+t stop fitting for every t
		// with old <= 16+t < nw.
		for t := max(old-16, 0); t < min(nw-16, 4); t++ {
			nl := &needLow[t][c]
			s.fit[0] &^= nl[0]
			s.fit[1] &^= nl[1]
			s.fit[2] &^= nl[2]
		}
	}
	h := s.hash
	for r := range int(o.h) {
		pr := o.rows[r] << x
		s.rows[land+r] |= pr
		s.own[p][land+r] |= pr
	}
	base := land*Width + x
	keys := &cellKey[p]
	for _, off := range o.cells {
		cell := base + int(off)
		s.pieceAt[cell] = k
		h ^= keys[cell]
	}

	// Union the new piece with the groups it touches; the largest root
	// absorbs the others (union by size keeps find shallow).
	s.parent[k], s.size[k], s.joinedAt[k] = k, 1, noMove
	delta := 0
	if len(roots) > 0 {
		big := roots[0]
		for _, r := range roots[1:] {
			if s.size[r] > s.size[big] {
				big = r
			}
		}
		total, old := 1, 0
		for _, r := range roots {
			total += int(s.size[r])
			old += groupValue(int(s.size[r]))
			if r != big {
				s.parent[r], s.joinedAt[r] = big, k
			}
		}
		s.parent[k] = big
		s.size[big] = uint8(total)
		delta = groupValue(total) - old
	}
	s.score[p] += int16(delta - min(holes, 2))

	sh := o.shape
	c := s.left[p][sh]
	if c < PiecesEach {
		h ^= leftKey[p][sh][c]
	}
	c--
	h ^= leftKey[p][sh][c]
	s.left[p][sh] = c
	if c == 0 {
		sa := &shapeActions[sh]
		s.avail[p][0] &^= sa[0]
		s.avail[p][1] &^= sa[1]
		s.avail[p][2] &^= sa[2]
	}
	s.hist[k] = uint8(a)
	s.n = k + 1
	h ^= moveKey[p]
	s.toMove = -1
	np := s.g.players
	for i := 1; i <= np; i++ {
		q := p + i
		if q >= np {
			q -= np
		}
		if s.canMove(q) {
			s.toMove = int8(q)
			h ^= moveKey[q]
			break
		}
	}
	s.hash = h
}

// Undo implements games.Undoer: it takes back a, the last action applied.
func (s *State) Undo(a games.Action) {
	o := &orients[actOrient[a]]
	x := int(actX[a])
	k := s.n - 1
	land := int(s.height[x]) - int(o.top[0])
	probe := uint16(1) << (x + bits.TrailingZeros16(o.rows[0]))
	p := 0
	for s.own[p][land]&probe == 0 {
		p++
	}
	h := s.hash
	if s.toMove >= 0 {
		h ^= moveKey[s.toMove]
	}
	h ^= moveKey[p]
	s.toMove = int8(p)

	for r := range int(o.h) {
		pr := o.rows[r] << x
		row := land + r
		s.rows[row] &^= pr
		s.own[p][row] &^= pr
		for m := pr; m != 0; m &= m - 1 {
			cell := row*Width + bits.TrailingZeros16(m)
			h ^= cellKey[p][cell]
			s.pieceAt[cell] = 0
		}
	}
	holes, top := 0, 0
	for i := range int(o.w) {
		c := x + i
		top = max(top, int(s.height[c]))
		r := land + int(o.bot[i]) - 1
		for r >= 0 && s.rows[r]>>c&1 == 0 {
			r--
		}
		s.height[c] = int8(r + 1)
		holes += land + int(o.bot[i]) - (r + 1)
	}

	delta := 0
	if big := s.parent[k]; big != k {
		total := int(s.size[big])
		rest := total - 1
		old := 0
		for j := uint8(0); j < k; j++ {
			if s.joinedAt[j] == k {
				s.parent[j], s.joinedAt[j] = j, noMove
				rest -= int(s.size[j])
				old += groupValue(int(s.size[j]))
			}
		}
		s.size[big] = uint8(rest)
		old += groupValue(rest)
		delta = groupValue(total) - old
	}
	s.score[p] -= int16(delta - min(holes, 2))

	sh := o.shape
	c := s.left[p][sh]
	h ^= leftKey[p][sh][c]
	if c+1 < PiecesEach {
		h ^= leftKey[p][sh][c+1]
	}
	s.left[p][sh] = c + 1
	if c == 0 {
		sa := &shapeActions[sh]
		s.avail[p][0] |= sa[0]
		s.avail[p][1] |= sa[1]
		s.avail[p][2] |= sa[2]
	}
	s.n = k
	// Clear what the piece left behind so that Undo restores the state
	// exactly (the initial state holds zeros there).
	s.hist[k], s.parent[k], s.size[k], s.joinedAt[k] = 0, 0, 0, 0
	if top > 16 {
		s.computeFit()
	}
	s.hash = h
}

// Game implements games.State.
func (s *State) Game() games.Game { return s.g }

// CurrentPlayer implements games.State.
func (s *State) CurrentPlayer() int {
	if s.toMove < 0 {
		return games.TerminalPlayer
	}
	return int(s.toMove)
}

// IsTerminal implements games.State: nobody can place a piece.
func (s *State) IsTerminal() bool { return s.toMove < 0 }

// MoveNumber implements games.State: pieces placed so far.
func (s *State) MoveNumber() int { return int(s.n) }

// Hash implements games.State.
func (s *State) Hash() uint64 { return s.hash }

// Clone implements games.State.
func (s *State) Clone() games.State {
	c := *s
	return &c
}

// CloneInto implements games.State.
func (s *State) CloneInto(dst games.State) { *dst.(*State) = *s }

// Scores implements games.Scorer: the running scores.
func (s *State) Scores(dst []float64) {
	for p := range s.g.players {
		dst[p] = float64(s.score[p])
	}
}

// Score returns player p's running score.
func (s *State) Score(p int) int { return int(s.score[p]) }

// PiecesLeft returns how many pieces of shape sh (index into "IOTSL")
// player p still has.
func (s *State) PiecesLeft(p, sh int) int { return int(s.left[p][sh]) }

// Returns implements games.State. At the end each player gets
// (players with a lower score - players with a higher score) / (players-1):
// +1/-1 (0 for a draw) with two players; in general the sole winner gets +1,
// the sole loser -1, tied players share, and the returns sum to zero.
// Non-terminal states return zeros.
func (s *State) Returns(dst []float64) {
	np := s.g.players
	for p := range np {
		dst[p] = 0
		if s.toMove >= 0 {
			continue
		}
		v := 0
		for q := range np {
			switch {
			case s.score[q] < s.score[p]:
				v++
			case s.score[q] > s.score[p]:
				v--
			}
		}
		dst[p] = float64(v) / float64(np-1)
	}
}

func trailing(x uint16) int { return bits.TrailingZeros16(x) }
