"""`torch.quasirandom`: SobolEngine, (scrambled) Sobol' sequences with PyTorch's numbers.

The direction numbers are Joe and Kuo's (search criterion D(6), 21201 dimensions), read from
the table SciPy ships for its own Sobol' engine; the sequence is walked in Gray-code order and
scrambled with PyTorch's recipe (a random digital shift and random lower-triangular bit
matrices drawn from `randint`), so a seeded engine gives PyTorch's points bit for bit."""
import functools
import importlib.util
import os

import tensorlib

__all__ = ["SobolEngine"]


@functools.lru_cache(maxsize=1)
def _direction_numbers():
    """(21201, 30) int64 numpy array: row d holds dimension d's direction numbers v_j, each the
    j-th m_j of the primitive-polynomial recurrence shifted to the 30-bit fraction's top."""
    import numpy as np
    scipy_dir = importlib.util.find_spec("scipy").submodule_search_locations[0]
    # found by path: importing scipy.stats for its data file costs seconds
    table = np.load(os.path.join(scipy_dir, "stats", "_sobol_direction_numbers.npz"))
    poly, vinit = table["poly"], table["vinit"]
    bits = SobolEngine.MAXBIT
    degree = np.array([int(p).bit_length() - 1 for p in poly])
    m = np.ones((len(poly), bits), dtype=np.int64)      # dimension 0 (degree 0): all ones
    for s in np.unique(degree[degree > 0]):
        rows = np.nonzero(degree == s)[0]
        block = np.zeros((len(rows), bits), dtype=np.int64)
        block[:, :s] = vinit[rows, :s]
        # a_k, the polynomial's interior coefficients: x^s + a_1 x^(s-1) + ... + a_(s-1) x + 1
        coeff = [(poly[rows] >> (s - k)) & 1 for k in range(1, s)]
        for j in range(s, bits):
            value = block[:, j - s] ^ (block[:, j - s] << s)
            for k in range(1, s):
                value ^= coeff[k - 1] * (block[:, j - k] << k)
            block[:, j] = value
        m[rows] = block
    return m << (bits - 1 - np.arange(bits))


def _gray(index):
    return index ^ (index >> 1)


def _walk(quasi, sobolstate, start, count):
    """The states after steps start..start+count-1 of the Gray-code walk from `quasi` (the
    state before step `start`): step g flips column (lowest zero bit of g), so the state after
    step g is the start state XOR the columns of the bits where gray(g + 1) and gray(start)
    differ. Returns a (count, dimension) int64 tensor."""
    steps = tensorlib.arange(start + 1, start + count + 1, dtype=tensorlib.int64)
    flipped = _gray(steps) ^ _gray(start)
    states = quasi.unsqueeze(0).repeat(count, 1)
    for bit in range(max(start + count, 1).bit_length() + 1):
        mask = ((flipped >> bit) & 1).bool().unsqueeze(1)
        if bit < sobolstate.shape[1]:
            states ^= tensorlib.where(mask, sobolstate[:, bit], 0)
    return states


def _scramble_state(sobolstate, ltm):
    """Multiply each direction number's bits by its dimension's random lower-triangular bit
    matrix (ones on the diagonal) over GF(2): output bit (MAXBIT-1-p) is the parity of row p
    of the matrix AND-ed with the number's bits (column k standing for bit MAXBIT-1-k)."""
    bits = sobolstate.shape[1]
    ltm = ltm.clone()
    ltm.diagonal(0, -2, -1).fill_(1)
    powers = 2 ** tensorlib.arange(bits - 1, -1, -1, dtype=tensorlib.int64)
    rows = (ltm * powers).sum(-1)                                   # (dim, p)
    anded = rows.unsqueeze(1) & sobolstate.unsqueeze(2)             # (dim, j, p)
    ones = tensorlib.zeros_like(anded)
    for bit in range(bits):
        ones += (anded >> bit) & 1
    parity = ones & 1
    return (parity * powers).sum(-1)


class SobolEngine:
    """An engine drawing (scrambled) Sobol' points in [0, 1)^dimension, up to 21201
    dimensions; each draw continues the sequence where the last one ended."""
    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality "
                             f"for SobolEngine is [1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        self.sobolstate = tensorlib.tensor(_direction_numbers()[:dimension], dtype=tensorlib.int64)
        if not self.scramble:
            self.shift = tensorlib.zeros(self.dimension, dtype=tensorlib.long)
        else:
            self._scramble()
        self.quasi = self.shift.clone(memory_format=tensorlib.contiguous_format)
        self._first_point = (self.quasi / 2 ** self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    def _scramble(self):
        generator = None
        if self.seed is not None:
            generator = tensorlib.Generator()
            generator.manual_seed(self.seed)
        shift_bits = tensorlib.randint(2, (self.dimension, self.MAXBIT), generator=generator)
        self.shift = tensorlib.mv(shift_bits, tensorlib.pow(2, tensorlib.arange(0, self.MAXBIT)))
        ltm = tensorlib.randint(2, (self.dimension, self.MAXBIT, self.MAXBIT),
                                generator=generator).tril()
        self.sobolstate = _scramble_state(self.sobolstate, ltm)

    def _draw_from(self, n, start, dtype):
        states = _walk(self.quasi, self.sobolstate, start, n)
        if n > 0:
            self.quasi = states[-1].clone()
        return states.to(dtype) * (1.0 / 2 ** self.MAXBIT)

    def draw(self, n=1, out=None, dtype=None):
        """The next `n` points, an (n, dimension) tensor of `dtype` (default: the default
        float dtype)."""
        if dtype is None:
            dtype = tensorlib.get_default_dtype()
        if self.num_generated == 0:
            result = self._first_point.to(dtype)
            if n != 1:
                result = tensorlib.cat((result, self._draw_from(n - 1, 0, dtype)), dim=-2)
        else:
            result = self._draw_from(n, self.num_generated - 1, dtype)
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m, out=None, dtype=None):
        """The next 2**m points; the total drawn must stay a power of 2 (the sequence's
        balance holds only for such prefixes)."""
        n = 2 ** m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError("The balance properties of Sobol' points require "
                             f"n to be a power of 2. {self.num_generated} points have been "
                             f"previously generated, then: n={self.num_generated}+2**{m}="
                             f"{total_n}. If you still want to do this, please use "
                             "'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        """Back to the sequence's start (the same scrambling)."""
        self.quasi.copy_(self.shift)
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """Skip `n` points, as if drawn and thrown away."""
        if n > 0:
            start = 0 if self.num_generated == 0 else self.num_generated - 1
            count = n - 1 if self.num_generated == 0 else n
            if count > 0:
                self.quasi.copy_(_walk(self.quasi, self.sobolstate, start, count)[-1])
        self.num_generated += n
        return self

    def __repr__(self):
        fmt_string = [f"dimension={self.dimension}"]
        if self.scramble:
            fmt_string += ["scramble=True"]
        if self.seed is not None:
            fmt_string += [f"seed={self.seed}"]
        return self.__class__.__name__ + "(" + ", ".join(fmt_string) + ")"
