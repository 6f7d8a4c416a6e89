package train

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// Sampler draws shuffled minibatches from a Dataset. Positions are visited
// in epochs: each epoch is a fresh random permutation of the whole
// dataset, and a batch that crosses the end of an epoch continues into the
// next one, so every position is used once per epoch. With augmentation
// each sample is transformed by a symmetry of the game drawn uniformly
// from the identity and the game's declared symmetries (games.Symmetric).
//
// The sequence of batches is a function of (dataset, batch size, seed,
// augmentation) alone. Next allocates nothing; the batch it returns lives
// in buffers the Sampler owns and is overwritten by the next call. A
// Sampler is not safe for concurrent use.
type Sampler struct {
	ds      *Dataset
	rng     *rand.Rand
	perm    []int32
	pos     int // next index into perm
	epochs  int // completed epochs
	drawn   int64
	syms    []games.Symmetry // identity excluded; nil without augmentation
	batch   nets.Batch
	maskBuf []float32 // one sample's legal mask before its symmetry
	obsBuf  []float32 // one sample's observation before its symmetry
	qmix    float64   // weight of the root Q in the value target (SetQMix)
	vs      int       // value targets per sample: 1, or the players of a per-player head (SetValueSize)
}

// NewSampler returns a sampler of batches of batchSize positions (at least
// 1; batch norm needs 2 for training) drawn with seed.
func NewSampler(ds *Dataset, batchSize int, seed uint64, augment bool) (*Sampler, error) {
	if ds == nil || ds.Len() == 0 {
		return nil, errors.New("train: empty dataset")
	}
	if batchSize < 1 {
		return nil, fmt.Errorf("batch = %d, want >= 1", batchSize)
	}
	s := &Sampler{ds: ds, rng: games.NewRand(seed), perm: make([]int32, ds.Len()), vs: 1}
	for i := range s.perm {
		s.perm[i] = int32(i)
	}
	s.shuffle()
	if augment {
		s.syms = games.SymmetriesOf(ds.game)
	}
	A := ds.actions
	s.batch = nets.Batch{N: batchSize, Input: make([]float32, batchSize*ds.obsSize),
		Policy: make([]float32, batchSize*A), Value: make([]float32, batchSize)}
	if len(s.syms) > 0 {
		s.obsBuf = make([]float32, ds.obsSize)
	}
	if ds.HasLegal() {
		s.batch.Legal = make([]float32, batchSize*A)
		s.maskBuf = make([]float32, A)
	}
	return s, nil
}

// SetQMix makes the value target of the next batches (1-w)*z + w*q, z
// the outcome and q the root Q of the position's search (Options.QMix).
// w = 0 restores the outcome alone. w must be in [0, 1], and w > 0 needs
// every position's root Q (Dataset.HasRootQ): the error names a shard
// without one. The batches drawn do not depend on w, only their values.
func (s *Sampler) SetQMix(w float64) error {
	if !(w >= 0 && w <= 1) {
		return fmt.Errorf("qmix = %g, want a weight in [0, 1]", w)
	}
	if w > 0 && !s.ds.HasRootQ() {
		return fmt.Errorf("qmix = %g mixes the search's root Q into the value target, but shard %s has no root_q array "+
			"(written before self-play recorded it); regenerate the self-play data or use qmix 0", w, s.ds.noQ)
	}
	s.qmix = w
	return nil
}

// SetValueSize makes the batches' value targets vs per sample: 1 (the
// default) is the mover's outcome for a scalar value head; vs > 1 the
// per-player targets of a per-player head (nets.Net.ValueSize), which
// the dataset must hold for vs players (Dataset.CheckValueSize). With
// SetQMix every player's entry mixes in the search's root value for that
// player (Dataset.RootValues: the mean of the value vectors the search
// backed up, entry 0 the mover's root Q); data from shards written
// before self-play recorded root_values mix the mover's entry alone.
func (s *Sampler) SetValueSize(vs int) error {
	vs = max(vs, 1)
	if err := s.ds.CheckValueSize(vs); err != nil {
		return err
	}
	if vs != s.vs {
		s.vs = vs
		s.batch.Value = make([]float32, s.batch.N*vs)
	}
	return nil
}

// Symmetries is the number of symmetries augmentation draws from, the
// identity included (1 without augmentation or without declared ones).
func (s *Sampler) Symmetries() int { return len(s.syms) + 1 }

// Drawn is the number of samples drawn so far.
func (s *Sampler) Drawn() int64 { return s.drawn }

// Epochs is the number of passes over the dataset so far (fractional).
func (s *Sampler) Epochs() float64 {
	return float64(s.epochs) + float64(s.pos)/float64(len(s.perm))
}

// shuffle draws a new permutation in place (Fisher-Yates).
func (s *Sampler) shuffle() {
	p := s.perm
	for i := len(p) - 1; i > 0; i-- {
		j := s.rng.IntN(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	s.pos = 0
}

// Next fills and returns the next batch. The batch is valid until the next
// call; Batch.Legal is nil when the dataset has no legal masks.
func (s *Sampler) Next() *nets.Batch {
	d, b := s.ds, &s.batch
	O, A := d.obsSize, d.actions
	for k := range b.N {
		if s.pos == len(s.perm) {
			s.epochs++
			s.shuffle()
		}
		i := int(s.perm[s.pos])
		s.pos++
		dObs, dPol := b.Input[k*O:(k+1)*O], b.Policy[k*A:(k+1)*A]
		sym := 0
		if len(s.syms) > 0 {
			sym = s.rng.IntN(len(s.syms) + 1)
		}
		obs := dObs
		if sym != 0 {
			obs = s.obsBuf
		}
		pol, val, legal := d.Row(i, obs)
		var dLegal []float32
		if b.Legal != nil {
			dLegal = b.Legal[k*A : (k+1)*A]
		}
		if s.qmix > 0 {
			val = float32((1-s.qmix)*float64(val) + s.qmix*float64(d.rootQ[i]))
		}
		if s.vs > 1 {
			row := b.Value[k*s.vs : (k+1)*s.vs]
			copy(row, d.values[i*s.vs:(i+1)*s.vs])
			if rv := d.RootValues(i); s.qmix > 0 && rv != nil {
				for j := 1; j < s.vs; j++ {
					row[j] = float32((1-s.qmix)*float64(row[j]) + s.qmix*float64(rv[j]))
				}
			}
		}
		b.Value[k*s.vs] = val // the mover's: values[i*vs] is the position's value
		if sym == 0 {
			copy(dPol, pol)
			if dLegal != nil {
				for a, l := range legal {
					dLegal[a] = float32(l)
				}
			}
			continue
		}
		t := &s.syms[sym-1]
		t.Observation(dObs, obs)
		t.Policy(dPol, pol)
		if dLegal != nil {
			for a, l := range legal {
				s.maskBuf[a] = float32(l)
			}
			t.Policy(dLegal, s.maskBuf)
		}
	}
	s.drawn += int64(b.N)
	return b
}
