"""Philox4x32-10 counter-based RNG (Salmon et al., SC'11 / Random123): the stream's
specification. `philox4x32` is a numpy reference of the rounds (known-answer tested); the
words, uniforms and normals the CPU backend draws come from `philox_kernels` (C), checked
against it. Every backend must reproduce this module; the GPU kernels are tested against it.

Word stream.  A generator state is (seed, offset): seed is a 64-bit integer,
offset counts the 32-bit *words* already consumed (both taken mod 2**64).
Word w of the stream is::

    b = w // 4 ; lane = w % 4
    counter = (b & 0xffffffff, b >> 32, 0, 0)
    key     = (seed & 0xffffffff, (seed >> 32) & 0xffffffff)
    word(w) = philox4x32_10(counter, key)[lane]

Number j (0 <= j < n) of a request starts at word g = offset + k*j, with
k = words_per_number(dtype) (1 for <=32-bit floats, 2 for float64 and randint).
Each value depends only on (seed, g), so results never depend on n:
``f(seed, off, n)[a:b] == f(seed, off + k*a, b - a)``.  After a request the caller
should advance offset by at least k*n; rounding up to a multiple of 4 keeps every
request block- and pair-aligned (recommended; no word is then shared between requests).

* uniform, float with p significand bits (float32 p=24, float16 11, bfloat16 8):
  ``(word(g) >> (32 - p)) * 2**-p`` -- exact, in [0, 1), never 1.0.
* uniform float64: ``((word(g) >> 5) * 2**26 + (word(g+1) >> 6)) * 2**-53``.
* randint: ``x = word(g) | word(g+1) << 32`` (uint64); ``low + x % (high - low)``;
  modulo bias <= (high-low)/2**64, negligible.
* normal (Box-Muller): numbers are paired on word boundaries of 2k words:
  P = g - g % (2k).  u1 = 1 - U(P) in (0, 1] (no log(0)), u2 = U(P + k) in [0, 1),
  with U the float32 uniform above (24 bits of one word) for <=32-bit dtypes and the
  float64 one (53 bits of two words) for float64.  In float32 (resp. float64) math:
  r = sqrt(-2 * log(u1)), t = (2*pi) * u2; the number is r*cos(t) if g % (2k) < k else
  r*sin(t), then cast to dtype.  GPU results must agree to rounding, not bit-exactly
  (uniform/randint are bit-exact).  <=32-bit normals are truncated at
  sqrt(2*24*ln 2) ~ 5.77 sigma (u1 >= 2**-24).
  An unaligned offset reuses the pair's earlier words; align offsets (see above).
"""
import numpy as np

from tensorlib_cpu import philox_kernels

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)
_MASK, _S32 = np.uint64(0xFFFFFFFF), np.uint64(32)
_U64 = (1 << 64) - 1


def philox4x32(counter, key):
    """10-round Philox4x32 on uint32 counters (n,4) and keys (n,2) or (2,)."""
    c = np.asarray(counter, dtype=np.uint32)
    k = np.asarray(key, dtype=np.uint32)
    return _philox(*(c[..., i].astype(np.uint64) for i in range(4)),
                   k[..., 0].astype(np.uint64), k[..., 1].astype(np.uint64))


def _philox(x0, x1, x2, x3, k0, k1, out=None):
    """Rounds on uint64 arrays holding 32-bit values (overwritten); in-place ops ~2x faster."""
    p0, p1 = np.empty_like(x0), np.empty_like(x0)
    for r in range(10):
        np.multiply(x0, M0, out=p0)          # exact 64-bit products: hi = p >> 32, lo = p & mask
        np.multiply(x2, M1, out=p1)
        np.right_shift(p1, _S32, out=x0); x0 ^= x1; x0 ^= k0     # x0' = hi1 ^ x1 ^ k0
        np.right_shift(p0, _S32, out=x2); x2 ^= x3; x2 ^= k1     # x2' = hi0 ^ x3 ^ k1
        np.bitwise_and(p1, _MASK, out=x1)                        # x1' = lo1
        np.bitwise_and(p0, _MASK, out=x3)                        # x3' = lo0
        if r < 9:
            k0, k1 = (k0 + W0) & _MASK, (k1 + W1) & _MASK
    out = np.empty(x0.shape + (4,), np.uint32) if out is None else out
    for i, x in enumerate((x0, x1, x2, x3)):
        out[..., i] = x
    return out


def _words(seed, start, count):
    """Words start .. start+count-1 of the stream (uint32[count]), from philox_kernels."""
    return philox_kernels.words(seed, start, count)


def _mant_bits(dt):
    try:
        return np.finfo(dt).nmant + 1
    except ValueError:                        # ml_dtypes types (bfloat16, ...)
        import ml_dtypes
        return ml_dtypes.finfo(dt).nmant + 1


def words_per_number(dtype):
    """32-bit words consumed per number: 2 for 64-bit dtypes (float64, randint), else 1."""
    return 2 if np.dtype(dtype).itemsize == 8 else 1


def uniform_uint32(seed, offset, n):
    return _words(seed, offset, n)


def _unit(w, dt):
    """Words -> exact uniforms with dt's resolution (float32 math for <=32-bit dtypes)."""
    if np.dtype(dt).itemsize == 8:
        m = (w[:, 0] >> 5).astype(np.uint64) * np.uint64(1 << 26) + (w[:, 1] >> 6)
        p, ft = 53, np.float64
    else:
        p, ft = _mant_bits(dt), np.float32
        m = w[:, 0] >> np.uint32(32 - p)
    return m.astype(ft) * ft(2.0 ** -p)     # m <= 2**p: exact


def uniform(seed, offset, n, dtype=np.float32):
    """n uniforms in [0, 1); number j uses words offset+k*j .. offset+k*j+k-1."""
    dt, k = np.dtype(dtype), words_per_number(dtype)
    if dt in C_FILLS:
        out = np.empty(n, dt)
        C_FILLS[dt][0](seed, offset, out)
        return out
    return _unit(_words(seed, offset, k * n).reshape(n, k), dt).astype(dt)


def normal(seed, offset, n, dtype=np.float32):
    """n standard normals via Box-Muller; each pair of numbers owns 2k aligned words."""
    dt, k = np.dtype(dtype), words_per_number(dtype)
    if n <= 0:
        return np.zeros(0, dt)
    out = np.empty(n, np.float64 if k == 2 else np.float32)   # <=32-bit: float32 math
    C_FILLS[out.dtype][1](seed, offset, out)
    return out.astype(dt, copy=False)


# dtype -> (uniform, normal) C fills writing a contiguous 1-D array in place
C_FILLS = {np.dtype(np.float32): (philox_kernels.uniform_float32, philox_kernels.normal_float32),
            np.dtype(np.float64): (philox_kernels.uniform_float64, philox_kernels.normal_float64)}


def randint(seed, offset, n, low, high):
    """int64 in [low, high) from 64 bits (2 words) per number, reduced modulo the range."""
    rng = int(high) - int(low)
    if not 0 < rng <= _U64:
        raise ValueError("randint needs low < high")
    w = _words(seed, offset, 2 * n).reshape(n, 2).astype(np.uint64)
    x = (w[:, 0] | (w[:, 1] << np.uint64(32))) % np.uint64(rng)
    return (x + np.uint64(int(low) & _U64)).view(np.int64)   # wrapping add = low + x
