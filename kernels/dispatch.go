package kernels

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
)

// impl is one implementation of the GEMM. The generic one has no tile sets
// and runs gemm_generic.go; the others run the blocked driver of
// gemm_blocked.go with one of their tile sets.
type impl struct {
	name string
	// tiles are the register-tile shapes, narrowest first; a call uses the
	// widest one that pads n no more than the narrowest (see tilesFor).
	tiles []*tileSet
	// byWidth[n] is tilesFor(n) for n < len(byWidth) (indexTiles); nil
	// for the generic implementation, which has no tile sets.
	byWidth []*tileSet
	// avx2Loops says the helper loops run in AVX2: col2im3x3's sum
	// (sum9AVX2) and the Winograd transforms and store (winoInAVX2,
	// winoGatherInAVX2, winoOutStoreAVX2, winoGradOutAVX2); avx512Loops
	// says the Winograd transforms run in AVX-512 where the channels allow
	// (winoGatherInAVX512, winoGatherTilesAVX512, winoOutStoreAVX512,
	// winoGradOutAVX512, and with bf16 winoGatherTilesBF16AVX512 and the weight gradient's pair
	// transforms), and so do the batch-norm loops (batchnorm.go). Every
	// one does the Go loop's arithmetic in the same order, so the results
	// are the same bit for bit.
	avx2Loops, avx512Loops bool
	// bf16 are the BF16 tile sets (one per strip width of PackBF16), nil
	// when the CPU lacks AVX-512 BF16 (the portable code runs then); with
	// them the float32 -> bfloat16 conversion runs toBF16AVX512.
	bf16 []*bf16TileSet
	// amx says bfloat16 products of whole tiles run on the AMX tile unit
	// (amx.go): the Winograd products and their weight gradients, in
	// batches of tasks (amxPlan). Its sums are not the portable code's bit
	// for bit.
	amx bool
}

// tilesFor returns the tile set for an n-column problem, nil for generic:
// the one whose strips pad n least, and of those the widest (64 columns
// on AVX-512 for 64 and 128 channels, 48 for 48 and 96, 32 for 32). It is
// called once per GEMM, and a Winograd convolution runs a GEMM per
// transformed position and chunk of tiles, so the common widths are looked
// up in byWidth (filled by indexTiles at init), not recomputed by division.
func (im *impl) tilesFor(n int) *tileSet {
	if uint(n) < uint(len(im.byWidth)) {
		return im.byWidth[n]
	}
	return im.pickTiles(n)
}

// indexTiles fills byWidth with pickTiles' answers for n < tableWidths.
// It runs at init, before any kernel call reads byWidth.
func (im *impl) indexTiles() {
	if len(im.tiles) == 0 {
		return
	}
	im.byWidth = make([]*tileSet, tableWidths)
	for n := range im.byWidth {
		im.byWidth[n] = im.pickTiles(n)
	}
}

// tableWidths bounds the column counts indexTiles tabulates: every channel
// count of the shipped networks, and their policy heads.
const tableWidths = 1025

// pickTiles is tilesFor computed.
func (im *impl) pickTiles(n int) *tileSet {
	var best *tileSet
	bestPad := 0
	for _, ts := range im.tiles {
		pad := (n + ts.nr - 1) / ts.nr * ts.nr
		if best == nil || pad < bestPad || pad == bestPad && ts.nr > best.nr {
			best, bestPad = ts, pad
		}
	}
	return best
}

// impls lists the implementations this CPU can run, slowest first. It is
// filled once at init (generic first, then the amd64 ones the CPU supports).
var impls []*impl

// variants are extra tile shapes kept for tuning benchmarks; Use accepts
// their names but Available does not list them.
var variants []*impl

// cur is the implementation kernel calls use.
var cur atomic.Pointer[impl]

var genericImpl = &impl{name: "generic"}

func init() {
	main, vars := platformImpls()
	impls = append([]*impl{genericImpl}, main...)
	variants = vars
	for _, im := range append(impls, variants...) {
		im.indexTiles()
	}
	im, warn := pickDefault(os.Getenv("CANOPY_KERNELS"))
	if warn != "" {
		fmt.Fprintln(os.Stderr, warn)
	}
	cur.Store(im)
	SetThreads(0)
}

// pickDefault returns the implementation to start with: the one named by the
// CANOPY_KERNELS value env if set and available, else the fastest. warn is
// non-empty when env names something unavailable.
func pickDefault(env string) (im *impl, warn string) {
	best := impls[len(impls)-1]
	if env == "" {
		return best, ""
	}
	if im := lookup(env); im != nil {
		return im, ""
	}
	return best, fmt.Sprintf("canopy/kernels: CANOPY_KERNELS=%q is not available on this CPU (have %v); using %s", env, Available(), best.name)
}

func lookup(name string) *impl {
	for _, im := range impls {
		if im.name == name {
			return im
		}
	}
	for _, im := range variants {
		if im.name == name {
			return im
		}
	}
	return nil
}

// Available returns the names of the implementations this CPU can run,
// slowest first; "generic" is always first.
func Available() []string {
	names := make([]string, len(impls))
	for i, im := range impls {
		names[i] = im.name
	}
	return names
}

// Current returns the name of the implementation in use.
func Current() string { return cur.Load().name }

// Use switches every kernel to the named implementation ("generic", "avx2",
// "avx512", "avx512amx") and returns a function restoring the previous
// one. It returns an error, and changes nothing, when the name is unknown
// or the CPU cannot run it. Use is for tests, benchmarks and start-up; it
// must not race with kernel calls that expect a particular implementation
// (calls in flight finish on whichever implementation they started with).
func Use(name string) (restore func(), err error) {
	im := lookup(name)
	if im == nil {
		return nil, fmt.Errorf("kernels: implementation %q not available on this CPU (have %v)", name, Available())
	}
	prev := cur.Swap(im)
	return func() { cur.Store(prev) }, nil
}

// threads is the maximum number of goroutines one Gemm call uses.
var threads atomic.Int32

// SetThreads sets how many goroutines (the caller included) one large Gemm
// call may use; n <= 0 restores the default, min(GOMAXPROCS, 8). It returns
// the previous setting. Workers are started lazily and never stopped.
func SetThreads(n int) int {
	if n <= 0 {
		n = min(runtime.GOMAXPROCS(0), 8)
	}
	n = min(n, maxThreads)
	return int(threads.Swap(int32(n)))
}

// Threads returns the current SetThreads setting.
func Threads() int { return int(threads.Load()) }

// maxThreads bounds SetThreads.
const maxThreads = 64
