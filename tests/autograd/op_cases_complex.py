"""The gradcheck cases of the complex ops (tensorlib/ops/complex.py), the FFTs
(tensorlib/fft) and linalg.eig, appended to op_cases.CASES. The leaves are float64; each
case builds its complex values from them (gradcheck also checks complex outputs)."""
import tensorlib as tl

from .op_cases import Case, add

S = (3, 4)
_LAYOUTS = ("contiguous", "sliced")


def _z(a, b):
    return tl.complex(a, b)


add(Case("complex", lambda a, b: _z(a, b) * (2 - 1j), [S, S], layouts=_LAYOUTS,
         cpu_only=True, gradgrad=True),
    Case("view_as_real", lambda a, b: tl.view_as_real(_z(a, b) * _z(b, a)), [S, S],
         covers=["view_as_real", "complex"], layouts=_LAYOUTS, cpu_only=True, gradgrad=True),
    Case("view_as_complex", lambda a: tl.view_as_complex(a.contiguous()) ** 2, [(3, 2)],
         layouts=("contiguous",), cpu_only=True, gradgrad=True),
    Case("conj_physical", lambda a, b: _z(a, b).conj() * _z(b, a), [S, S],
         covers=["conj_physical", "complex"], layouts=_LAYOUTS, cpu_only=True,
         gradgrad=True),
    Case("complex_abs", lambda a, b: _z(a, b).abs(), [S, S], "nonzero",
         covers=["complex_abs", "complex"], layouts=_LAYOUTS, cpu_only=True),
    Case("angle", lambda a, b: _z(a, b).angle(), [S, S], "nonzero",
         covers=["angle", "complex"], layouts=_LAYOUTS, cpu_only=True),
    Case("angle-real", tl.angle, [S], "nonzero", covers=["angle"], layouts=_LAYOUTS))

FFT = tl.fft
add(Case("fft_c2c", lambda a, b: FFT.fft(_z(a, b), n=5, norm="ortho"), [S, S],
         covers=["fft_c2c", "complex"], layouts=_LAYOUTS, cpu_only=True, gradgrad=True),
    Case("fft_c2c-2d", lambda a: FFT.ifft2(a), [S], covers=["fft_c2c"], cpu_only=True),
    Case("fft_r2c", lambda a: FFT.rfft(a, n=6), [S], layouts=_LAYOUTS, cpu_only=True,
         gradgrad=True),
    Case("fft_r2c-nd", lambda a: FFT.rfftn(a, norm="forward"), [S], covers=["fft_r2c"],
         cpu_only=True),
    Case("fft_c2r", lambda a, b: FFT.irfft(_z(a, b), n=7), [S, S],
         covers=["fft_c2r", "complex"], layouts=_LAYOUTS, cpu_only=True, gradgrad=True),
    Case("fft_c2r-hfft2", lambda a, b: FFT.hfft2(_z(a, b)), [S, S],
         covers=["fft_c2r", "complex", "conj_physical"], cpu_only=True))

LA = tl.linalg
add(Case("linalg_eig", lambda a: (lambda L, V: (L, V.abs()))(*LA.eig(a)), [(2, 3, 3)],
         layouts=("contiguous", "transposed"), cpu_only=True),
    Case("linalg_eig-complex", lambda a, b: LA.eigvals(_z(a, b)), [(3, 3), (3, 3)],
         covers=["linalg_eig", "complex"], layouts=("contiguous",), cpu_only=True),
    Case("linalg_qr-wide", LA.qr, [(2, 3, 5)], covers=["linalg_qr"],
         layouts=("contiguous", "transposed")),
    Case("linalg_det-singular", lambda a: LA.det(tl.cat([a, a[..., :1] * 2], -1)), [(2, 3, 2)],
         covers=["linalg_det"], layouts=("contiguous",)),
    Case("linalg_svd-complex", lambda a, b: (lambda u, s, vh: (u * s.unsqueeze(-2)) @ vh)(
        *LA.svd(_z(a, b), full_matrices=False)), [(3, 2), (3, 2)],
         covers=["linalg_svd", "complex"], layouts=("contiguous",), cpu_only=True))


def _hpd(z):
    return z @ z.mH + 0.5 * tl.eye(z.shape[-1], dtype=z.dtype)


add(Case("linalg_cholesky-complex", lambda a, b: LA.cholesky(_hpd(_z(a, b))), [(3, 3), (3, 3)],
         covers=["linalg_cholesky", "complex"], layouts=("contiguous",), cpu_only=True),
    Case("linalg_cholesky-complex-upper-solve",
         lambda a, b: tl.cholesky_solve(_z(b, a), LA.cholesky(_hpd(_z(a, b)), upper=True),
                                        upper=True), [(3, 3), (3, 3)],
         covers=["linalg_cholesky", "cholesky_solve", "complex"],
         layouts=("contiguous",), cpu_only=True),
    Case("lstsq-complex", lambda a, b: LA.lstsq(_z(a, b), _z(b, a)[:, :2]).solution,
         [(4, 3), (4, 3)], covers=["linalg_svd", "complex"], layouts=("contiguous",),
         cpu_only=True))


def _write_real_parts(z, b):
    """In-place writes through z.real, z.imag and view_as_real(z) of a complex tensor with
    history; reading the view after the write goes through its remade history."""
    r = z.real
    r += b
    z.imag.mul_(2)
    tl.view_as_real(z)[..., 0, 1].sub_(b[..., 0])
    return z * 1, r * 1


add(Case("copy_slices_real", lambda a, b, c: _write_real_parts(_z(a, b) * 1, c),
         [(2, 3), (2, 3), (2, 3)], covers=["copy_slices_real", "real_view_of_complex",
                                           "complex"],
         layouts=("contiguous",), cpu_only=True))
