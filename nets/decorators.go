package nets

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"
)

// This file holds backends that wrap or stand in for other backends
// (lc0's neural/ decorators): a random backend for tests and for timing the
// search alone, a position cache keyed by hash, and a checker that compares
// two backends on the same batches.

// RandomBackend is a stand-in network. With Seed 0 it returns uniform
// policies (all logits 0) and value 0; with another seed each row gets small
// pseudo-random logits in [-1, 1) and a value in [-0.5, 0.5) drawn from a PCG
// seeded by Seed and a hash of the row's input, so a row's output depends
// only on its content, never on its batch or position within it.
//
// Thread safety: safe for concurrent use (it has no mutable state).
type RandomBackend struct {
	inputSize, policySize int
	valueSize             int // 0 or 1: the scalar head
	maxBatch, preferred   int
	seed                  uint64
}

// randomPriority puts "random" below every real backend, so "auto" only
// reaches it when nothing else opens (and it needs a net to know its
// shape, which the cpu backend accepts too, so in practice never).
const randomPriority = -1000

func init() {
	RegisterBackendInfo(BackendInfo{
		Name:     "random",
		Priority: randomPriority,
		Summary:  "no network arithmetic: uniform policy and value 0 (seed 0), or pseudo-random outputs; to time search alone",
		Options: []BackendOption{{Key: "seed", Min: 0, Max: math.MaxInt32, Default: "0 (uniform)",
			Help: "0: all logits 0 and value 0; otherwise small pseudo-random outputs that depend only on the row's input"}},
		Open: func(net *Net, opts BackendOptions) (Backend, error) {
			if net == nil {
				return nil, errors.New("nets: random backend needs a network for its shape (or use NewRandomBackend)")
			}
			var seed uint64
			if v, ok := opts.Param("seed"); ok {
				n, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return nil, &OptionError{Backend: "random", Key: "seed", Reason: fmt.Sprintf("%q is not a non-negative integer", v)}
				}
				seed = n
			}
			r := NewRandomBackend(net.InputSize(), net.PolicySize(), seed, opts)
			r.valueSize = net.ValueSize()
			return r, nil
		},
	})
}

// NewRandomBackend returns a RandomBackend with the given shape. seed 0
// gives uniform outputs. opts.MaxBatch defaults to 1024.
func NewRandomBackend(inputSize, policySize int, seed uint64, opts BackendOptions) *RandomBackend {
	mb := opts.MaxBatch
	if mb <= 0 {
		mb = 1024
	}
	return &RandomBackend{inputSize: inputSize, policySize: policySize, maxBatch: mb, preferred: min(256, mb), seed: seed}
}

func (r *RandomBackend) Name() string        { return "random" }
func (r *RandomBackend) Shape() (int, int)   { return r.inputSize, r.policySize }
func (r *RandomBackend) PreferredBatch() int { return r.preferred }
func (r *RandomBackend) MaxBatch() int       { return r.maxBatch }

// ValueSize implements ValueSizer: the value width of the network the
// backend stands in for (1 for NewRandomBackend's).
func (r *RandomBackend) ValueSize() int { return max(r.valueSize, 1) }

// Evaluate writes the outputs described on RandomBackend.
func (r *RandomBackend) Evaluate(ctx context.Context, batch int, input, policy, value []float32) error {
	if err := checkBatch(ctx, r, batch, max(r.valueSize, 1), input, policy, value); err != nil {
		return err
	}
	in, ps := r.inputSize, r.policySize
	if r.valueSize > 1 {
		r.evaluateRows(batch, input, policy, value)
		return nil
	}
	if r.seed == 0 {
		clear(policy[:batch*ps])
		clear(value[:batch])
		return nil
	}
	var pcg rand.PCG
	for i := range batch {
		pcg.Seed(r.seed, hashRow(input[i*in:(i+1)*in]))
		p := policy[i*ps : (i+1)*ps]
		for j := range p {
			p[j] = float32(pcg.Uint64()>>40)/(1<<23) - 1
		}
		value[i] = float32(pcg.Uint64()>>40)/(1<<24) - 0.5
	}
	return nil
}

// evaluateRows is Evaluate for a per-player value head: valueSize values
// a row, drawn after the row's logits as the scalar head's one value is.
// (A separate loop keeps the scalar path as it was.)
func (r *RandomBackend) evaluateRows(batch int, input, policy, value []float32) {
	in, ps, vs := r.inputSize, r.policySize, r.valueSize
	if r.seed == 0 {
		clear(policy[:batch*ps])
		clear(value[:batch*vs])
		return
	}
	var pcg rand.PCG
	for i := range batch {
		pcg.Seed(r.seed, hashRow(input[i*in:(i+1)*in]))
		p := policy[i*ps : (i+1)*ps]
		for j := range p {
			p[j] = float32(pcg.Uint64()>>40)/(1<<23) - 1
		}
		for k := i * vs; k < (i+1)*vs; k++ {
			value[k] = float32(pcg.Uint64()>>40)/(1<<24) - 0.5
		}
	}
}

// hashRow is FNV-1a over the float bits of row.
func hashRow(row []float32) uint64 {
	h := uint64(14695981039346656037)
	for _, x := range row {
		h ^= uint64(math.Float32bits(x))
		h *= 1099511628211
	}
	return h
}

// checkBatch validates the common Evaluate arguments for b, whose rows
// have vs values each (passed in: asking b would cost an interface
// assertion per call).
func checkBatch(ctx context.Context, b Backend, batch, vs int, input, policy, value []float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	in, ps := b.Shape()
	if batch < 1 || batch > b.MaxBatch() {
		return fmt.Errorf("nets: %s backend: batch %d outside [1, %d]", b.Name(), batch, b.MaxBatch())
	}
	if len(input) < batch*in || len(policy) < batch*ps || len(value) < batch*vs {
		return fmt.Errorf("nets: %s backend: batch %d needs input %d, policy %d, value %d; got %d, %d, %d",
			b.Name(), batch, batch*in, batch*ps, batch*vs, len(input), len(policy), len(value))
	}
	return nil
}

// CacheStats counts cache look-ups.
type CacheStats struct {
	Hits, Misses uint64
	Entries      int // table capacity
}

// HitRate is Hits / (Hits + Misses), 0 when nothing was looked up.
func (s CacheStats) HitRate() float64 {
	if s.Hits+s.Misses == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Hits+s.Misses)
}

// cacheStripes is the number of lock stripes; entry i is guarded by
// stripe i % cacheStripes.
const cacheStripes = 64

// Cache is a fixed-size, direct-mapped cache of network outputs in front
// of a backend (KataGo's NN cache, lc0's memcache), keyed by a 64-bit
// hash/maphash of each input row's bytes (seeded per cache): the same position seen from the same
// side, reached again (a transposition, a tree searched afresh, the
// opening of another game), is not evaluated twice. An entry stores the
// full hash and is used only on an exact match (two different inputs
// with the same 64-bit hash would share a result; with a million entries
// the chance is about 1 in 10^7); a new result overwrites whatever shared
// its slot. Entries are guarded by 64 lock stripes, so readers and
// writers of different slots do not contend.
//
// Evaluate looks every row up, sends only the misses to the inner
// backend (compacted into a scratch batch), then stores their results. A
// hit returns what the inner backend computed for that input in another
// batch: identical on backends whose rows do not depend on the batch
// they are in.
//
// Thread safety: safe for concurrent use when the inner backend is; the
// miss scratch is guarded by a mutex, so concurrent Evaluate calls
// serialise on the inner evaluation.
type Cache struct {
	inner      Backend
	policySize int
	inputSize  int
	valueSize  int // values per row (ValueSize of inner)
	seed       maphash.Seed
	shift      uint     // slot = hash >> shift
	keys       []uint64 // full hash; valid only where used[i]
	used       []bool
	policy     []float32 // len(keys) * policySize
	value      []float32 // len(keys) * valueSize
	stripes    [cacheStripes]sync.Mutex

	hits, misses atomic.Uint64

	mu      sync.Mutex // guards the scratch below
	hashes  []uint64
	missIdx []int
	in      []float32
	pol     []float32
	val     []float32
}

// CacheBytes is the memory of a Cache of at least entries slots for
// networks of policySize actions.
func CacheBytes(policySize, entries int) int64 {
	n := cacheSlots(entries)
	return int64(n) * int64(8+1+4*(policySize+1))
}

// cacheSlots is entries rounded up to a power of two, at least 64.
func cacheSlots(entries int) int {
	n := 64
	for n < entries {
		n <<= 1
	}
	return n
}

// NewCache wraps inner with a cache of at least entries slots (rounded up
// to a power of two, minimum 64). Memory: entries x (policySize+1) floats.
func NewCache(inner Backend, entries int) *Cache {
	n := cacheSlots(entries)
	in, ps := inner.Shape()
	vs := ValueSize(inner)
	mb := inner.MaxBatch()
	return &Cache{
		inner: inner, policySize: ps, inputSize: in, valueSize: vs, seed: maphash.MakeSeed(), shift: uint(64 - bits.TrailingZeros(uint(n))),
		keys: make([]uint64, n), used: make([]bool, n),
		policy: make([]float32, n*ps), value: make([]float32, n*vs),
		hashes: make([]uint64, mb), missIdx: make([]int, 0, mb), in: make([]float32, mb*in), pol: make([]float32, mb*ps), val: make([]float32, mb*vs),
	}
}

func (c *Cache) Name() string        { return "cache(" + c.inner.Name() + ")" }
func (c *Cache) Shape() (int, int)   { return c.inner.Shape() }
func (c *Cache) PreferredBatch() int { return c.inner.PreferredBatch() }
func (c *Cache) MaxBatch() int       { return c.inner.MaxBatch() }

// ValueSize implements ValueSizer (the inner backend's).
func (c *Cache) ValueSize() int { return c.valueSize }

// Evaluate evaluates batch rows, the inner backend only those it has not
// seen. It allocates nothing.
func (c *Cache) Evaluate(ctx context.Context, batch int, input, policy, value []float32) error {
	if err := checkBatch(ctx, c, batch, c.valueSize, input, policy, value); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range batch {
		c.hashes[i] = c.hash(input[i*c.inputSize : (i+1)*c.inputSize])
	}
	return c.evaluateHashed(ctx, batch, c.hashes, input, policy, value)
}

// hash is the key of an input row (its slot is hash >> c.shift).
func (c *Cache) hash(row []float32) uint64 {
	return maphash.Bytes(c.seed, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(row))), 4*len(row)))
}

// Stats returns the hit and miss counts so far.
func (c *Cache) Stats() CacheStats {
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Entries: len(c.keys)}
}

// lookup copies the entry for h into p and v (valueSize values) and
// reports whether it hit.
func (c *Cache) lookup(h uint64, p, v []float32) bool {
	i := h >> c.shift
	mu := &c.stripes[i%cacheStripes]
	mu.Lock()
	ok := c.used[i] && c.keys[i] == h
	if ok {
		ps := c.policySize
		copy(p, c.policy[int(i)*ps:int(i+1)*ps])
		vs := c.valueSize
		copy(v, c.value[int(i)*vs:int(i+1)*vs])
	}
	mu.Unlock()
	return ok
}

func (c *Cache) store(h uint64, p, v []float32) {
	i := h >> c.shift
	mu := &c.stripes[i%cacheStripes]
	mu.Lock()
	ps := c.policySize
	copy(c.policy[int(i)*ps:int(i+1)*ps], p)
	vs := c.valueSize
	copy(c.value[int(i)*vs:int(i+1)*vs], v)
	c.keys[i] = h
	c.used[i] = true
	mu.Unlock()
}

// evaluateHashed evaluates batch rows using hashes[i] as row i's key,
// with c.mu held.
func (c *Cache) evaluateHashed(ctx context.Context, batch int, hashes []uint64, input, policy, value []float32) error {
	in, ps, vs := c.inputSize, c.policySize, c.valueSize
	miss := c.missIdx[:0]
	for i := range batch {
		if !c.lookup(hashes[i], policy[i*ps:(i+1)*ps], value[i*vs:(i+1)*vs]) {
			miss = append(miss, i)
		}
	}
	c.hits.Add(uint64(batch - len(miss)))
	c.misses.Add(uint64(len(miss)))
	if len(miss) == 0 {
		return nil
	}
	for k, i := range miss {
		copy(c.in[k*in:(k+1)*in], input[i*in:(i+1)*in])
	}
	if err := c.inner.Evaluate(ctx, len(miss), c.in, c.pol, c.val); err != nil {
		return err
	}
	for k, i := range miss {
		p := c.pol[k*ps : (k+1)*ps]
		copy(policy[i*ps:(i+1)*ps], p)
		v := c.val[k*vs : (k+1)*vs]
		copy(value[i*vs:(i+1)*vs], v)
		c.store(hashes[i], p, v)
	}
	return nil
}

// Checker runs a reference and a candidate backend on every batch, returns
// the reference's outputs and records the largest absolute differences
// (lc0's network_check, KataGo's gputest). With a positive tolerance a
// batch that differs by more returns an error (the outputs are still
// written).
//
// Thread safety: safe for concurrent use if both backends are; the
// candidate's scratch is guarded by a mutex.
type Checker struct {
	ref, cand       Backend
	vs              int // values per row (both backends')
	policyTol, vTol float64

	mu         sync.Mutex
	maxP, maxV float64
	batches    uint64
	pol, val   []float32
}

// NewChecker compares cand against ref. policyTol and valueTol bound the
// absolute differences of logits and values; 0 (or less) only records.
// The shapes must match.
func NewChecker(ref, cand Backend, policyTol, valueTol float64) (*Checker, error) {
	ri, rp := ref.Shape()
	ci, cp := cand.Shape()
	if ri != ci || rp != cp {
		return nil, fmt.Errorf("nets: checker: shapes differ: %s is %dx%d, %s is %dx%d", ref.Name(), ri, rp, cand.Name(), ci, cp)
	}
	if rv, cv := ValueSize(ref), ValueSize(cand); rv != cv {
		return nil, fmt.Errorf("nets: checker: value heads differ: %s gives %d values per row, %s %d", ref.Name(), rv, cand.Name(), cv)
	}
	mb := min(ref.MaxBatch(), cand.MaxBatch())
	return &Checker{ref: ref, cand: cand, vs: ValueSize(ref), policyTol: policyTol, vTol: valueTol,
		pol: make([]float32, mb*rp), val: make([]float32, mb*ValueSize(ref))}, nil
}

func (c *Checker) Name() string        { return "check(" + c.ref.Name() + "," + c.cand.Name() + ")" }
func (c *Checker) Shape() (int, int)   { return c.ref.Shape() }
func (c *Checker) PreferredBatch() int { return c.ref.PreferredBatch() }
func (c *Checker) MaxBatch() int       { return min(c.ref.MaxBatch(), c.cand.MaxBatch()) }

// ValueSize implements ValueSizer (the reference's, equal to the
// candidate's).
func (c *Checker) ValueSize() int { return c.vs }

// MaxDiff returns the largest absolute policy-logit and value differences
// seen so far.
func (c *Checker) MaxDiff() (policy, value float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maxP, c.maxV
}

// Evaluate runs both backends and compares them.
func (c *Checker) Evaluate(ctx context.Context, batch int, input, policy, value []float32) error {
	if err := checkBatch(ctx, c, batch, c.vs, input, policy, value); err != nil {
		return err
	}
	if err := c.ref.Evaluate(ctx, batch, input, policy, value); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ps := c.ref.Shape()
	if err := c.cand.Evaluate(ctx, batch, input, c.pol, c.val); err != nil {
		return fmt.Errorf("nets: checker: candidate %s: %w", c.cand.Name(), err)
	}
	var dp, dv float64
	for i, x := range policy[:batch*ps] {
		dp = max(dp, absDiff(x, c.pol[i]))
	}
	for i, x := range value[:batch*c.vs] {
		dv = max(dv, absDiff(x, c.val[i]))
	}
	c.maxP, c.maxV = max(c.maxP, dp), max(c.maxV, dv)
	c.batches++
	if c.policyTol > 0 && dp > c.policyTol || c.vTol > 0 && dv > c.vTol {
		return fmt.Errorf("nets: checker: %s vs %s differ by %.3g in policy (tolerance %g), %.3g in value (tolerance %g)",
			c.cand.Name(), c.ref.Name(), dp, c.policyTol, dv, c.vTol)
	}
	return nil
}

// absDiff is |a-b|, +Inf when either is NaN (so a NaN always fails a
// tolerance).
func absDiff(a, b float32) float64 {
	d := math.Abs(float64(a) - float64(b))
	if math.IsNaN(d) {
		return math.Inf(1)
	}
	return d
}
