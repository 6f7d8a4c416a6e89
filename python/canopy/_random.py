"""canopy.random_actions: a uniformly random legal action per row of a
legal mask, drawn in numpy with one random float per row.

For games of at most 8 actions (Connect Four has 7) each row's mask is
packed into a byte (a row of 0/1 bytes, read as a little-endian 64-bit
word and multiplied by 0x0102040810204080, gathers bit i of its top byte
from byte i) and two 256-entry tables give the number of legal actions
and the k-th of them; k = floor(u * count) with u uniform in [0, 1).
Wider games draw one float per action and take the argmax over the legal
ones. Both are uniform over each row's legal actions (tested with a
chi-square test).
"""
import numpy as np

_CODES = np.arange(256)
_BITS = ((_CODES[:, None] >> np.arange(8)) & 1).astype(bool)
_COUNT = _BITS.sum(axis=1).astype(np.float64)  # legal actions per packed byte
_KTH = np.zeros((256, 8), np.int64)  # _KTH[code, k]: the k-th set bit of code
for _c in range(256):
    _i = np.flatnonzero(_BITS[_c])
    _KTH[_c, :len(_i)] = _i
_KTH = _KTH.ravel()
_GATHER = np.uint64(0x0102040810204080)
_TOP = np.uint64(56)


def _words(m, n, a):
    """Row i of the bool mask m [n, a <= 8] as a little-endian uint64 with
    byte j = m[i, j] (bytes past a zero)."""
    # Rows whose 8 bytes from their start lie inside the buffer are read
    # in place as (unaligned) words at a stride of a bytes: each holds its
    # row and the first bytes of the next ones, which the mask clears. The
    # last few rows (8 bytes from their start would run past the end) are
    # padded.
    full = max(n - (8 + a - 1) // a + 1, 0) if m.flags.c_contiguous else 0
    code = np.empty(n, np.uint64)
    if full:
        b = m.view(np.uint8).reshape(-1)
        words = np.ndarray(shape=(full,), dtype="<u8", buffer=b, strides=(a,))
        np.bitwise_and(words, np.uint64((1 << (8 * a)) - 1), out=code[:full])
    pad = np.zeros((n - full, 8), np.uint8)
    pad[:, :a] = m[full:]
    code[full:] = pad.view("<u8").ravel()
    return code


def random_actions(legal_mask, rng=None):
    """One uniformly random legal action per row of ``legal_mask`` (bool
    ``[N, A]``, e.g. ``info["legal_mask"]``), as int64 ``[N]``. ``rng``: a
    ``numpy.random.Generator`` (default: a fresh one). A row without a legal
    action is a ValueError."""
    m = np.asarray(legal_mask)
    if m.dtype != np.bool_ or m.ndim != 2:
        raise ValueError(f"legal_mask has dtype {m.dtype} and shape {m.shape}, want bool [N, A]")
    if rng is None:
        rng = np.random.default_rng()
    n, a = m.shape
    if a > 8:
        u = rng.random(m.shape, dtype=np.float32)
        u += 1  # in [1, 2): an illegal action's 0 never wins
        u *= m
        out = u.argmax(axis=1)
        if not m[np.arange(n), out].all():
            raise ValueError(f"legal_mask row {int(np.flatnonzero(~m.any(axis=1))[0])} has no legal action")
        return out.astype(np.int64)
    code = _words(m, n, a)
    code *= _GATHER  # wraps modulo 2**64: only the top byte is kept
    code >>= _TOP
    code = code.view(np.int64)  # < 256 now
    count = _COUNT[code]
    if not count.all():
        raise ValueError(f"legal_mask row {int(np.flatnonzero(count == 0)[0])} has no legal action")
    # floor(u * count) < count for every u < 1 in float64 (the product
    # rounds below count), so k indexes a legal action.
    k = rng.random(n)
    k *= count
    code <<= 3
    code += k.astype(np.int64)
    return _KTH[code]
