"""stft and istft (torch.stft / torch.istft) on numpy: framing, windowing and overlap-add on a
host copy, like the transforms of tensorlib.fft; complex results are CPU tensors and the
functions are not differentiable yet (complex autograd is missing)."""
import numpy as np

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl


def _host(x, name):
    if not isinstance(x, TensorImpl):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    if x.requires_grad and tensorlib.is_grad_enabled():
        raise NotImplementedError(f"{name}: gradients need complex autograd, which is not "
                                  f"implemented yet")
    return x.detach().cpu().numpy()


def _window(window, win_length, n_fft, name):
    """The window padded (centred) to n_fft, as float64 numpy."""
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(f"{name}: expected 0 < win_length <= n_fft, but got "
                           f"win_length={win_length}")
    w = np.ones(win_length) if window is None else _host(window, name).astype(np.float64)
    if w.shape != (win_length,):
        raise RuntimeError(f"{name}: expected a 1D window tensor of size equal to "
                           f"win_length={win_length}, but got window with size "
                           f"{list(w.shape)}")
    left = (n_fft - win_length) // 2
    return np.pad(w, (left, n_fft - win_length - left))


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,  # noqa: A002
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None):
    """Short-time Fourier transform: (n_fft // 2 + 1 or n_fft) x frames per signal."""
    x = _host(input, "stft")
    if return_complex is None and not np.iscomplexobj(x):
        raise RuntimeError("stft requires the return_complex parameter be given for real "
                           "inputs, and will further require that return_complex=True in a "
                           "future PyTorch release.")
    if x.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {x.ndim}D")
    hop = n_fft // 4 if hop_length is None else hop_length
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    w = _window(window, n_fft if win_length is None else win_length, n_fft, "stft")
    batched = x.ndim == 2
    x = x if batched else x[None]
    if center:
        x = np.pad(x, ((0, 0), (n_fft // 2, n_fft // 2)), mode=pad_mode)
    if not 0 < n_fft <= x.shape[-1]:
        raise RuntimeError(f"stft: expected 0 < n_fft < {x.shape[-1]}, but got n_fft={n_fft}")
    frames = 1 + (x.shape[-1] - n_fft) // hop
    index = np.arange(n_fft)[None, :] + hop * np.arange(frames)[:, None]
    segments = x[:, index] * w                                  # (batch, frames, n_fft)
    one = (not np.iscomplexobj(x) and (window is None or not window.dtype.is_complex)) \
        if onesided is None else onesided
    spec = np.fft.rfft(segments, axis=-1) if one else np.fft.fft(segments, axis=-1)
    if normalized:
        spec = spec / np.sqrt(n_fft)
    spec = np.swapaxes(spec, -1, -2)                            # (batch, freq, frames)
    spec = spec if batched else spec[0]
    real_dtype = input.dtype if input.dtype.is_floating_point else tensorlib.float32
    cdtype = tensorlib.complex128 if real_dtype is tensorlib.float64 else tensorlib.complex64
    if input.dtype.is_complex:
        cdtype = input.dtype
    out = tensorlib.from_numpy(np.ascontiguousarray(spec.astype(cdtype.np)))
    return out if return_complex or return_complex is None else tensorlib.view_as_real(out)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,  # noqa: A002
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse of stft by windowed overlap-add (a real signal unless return_complex)."""
    spec = _host(input, "istft")
    if not np.iscomplexobj(spec):
        raise RuntimeError("istft requires a complex-valued input tensor")
    hop = n_fft // 4 if hop_length is None else hop_length
    w = _window(window, n_fft if win_length is None else win_length, n_fft, "istft")
    batched = spec.ndim == 3
    spec = spec if batched else spec[None]
    one = (spec.shape[-2] != n_fft) if onesided is None else onesided
    if normalized:
        spec = spec * np.sqrt(n_fft)
    spec = np.swapaxes(spec, -1, -2)                            # (batch, frames, freq)
    if one and not return_complex:
        frames = np.fft.irfft(spec, n=n_fft, axis=-1)
    else:
        frames = np.fft.ifft(spec, n=n_fft, axis=-1)
        if not return_complex:
            frames = frames.real
    frames = frames * w
    count = frames.shape[1]
    total = n_fft + hop * (count - 1)
    signal = np.zeros((frames.shape[0], total), dtype=frames.dtype)
    envelope = np.zeros(total)
    for f in range(count):
        signal[:, f * hop:f * hop + n_fft] += frames[:, f]
        envelope[f * hop:f * hop + n_fft] += w * w
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else start + length
    end = min(end, total)
    if np.abs(envelope[start:end]).min(initial=1.0) < 1e-11:
        raise RuntimeError("istft: window overlap add min: the window's squares overlap to "
                           "zero somewhere (check window, hop_length and center)")
    signal = signal[:, start:end] / envelope[start:end]
    if length is not None and signal.shape[-1] < length:
        signal = np.pad(signal, ((0, 0), (0, length - signal.shape[-1])))
    signal = signal if batched else signal[0]
    part = tensorlib.float64 if input.dtype is tensorlib.complex128 else tensorlib.float32
    dtype = (input.dtype if return_complex else part).np
    return tensorlib.from_numpy(np.ascontiguousarray(signal.astype(dtype)))
