"""stft and istft (torch.stft / torch.istft), written with tensorlib's differentiable ops:
framing is `unfold`, the transforms are tensorlib.fft's, overlap-add is `index_add`, so
gradients reach the signal, the spectrum and the window. Complex results are CPU tensors,
like the transforms'."""
import math

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.fft._primitives import zero_extend


def _check_tensor(x, name):
    if not isinstance(x, TensorImpl):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def _window(window, win_length, n_fft, like, name):
    """The window zero-padded (centred) to n_fft; a rectangular one when None."""
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(f"{name}: expected 0 < win_length <= n_fft, but got "
                           f"win_length={win_length}")
    if window is None:
        part = like.dtype if not like.dtype.is_complex else tensorlib.real(like).dtype
        window = tensorlib.ones(win_length, dtype=part, device=like.device)
    if tuple(window.shape) != (win_length,):
        raise RuntimeError(f"{name}: expected a 1D window tensor of size equal to "
                           f"win_length={win_length}, but got window with size "
                           f"{list(window.shape)}")
    left = (n_fft - win_length) // 2
    if left:
        window = tensorlib.cat([tensorlib.zeros(left, dtype=window.dtype,
                                                device=window.device), window])
    return zero_extend(window, 0, n_fft)


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,  # noqa: A002
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None):
    """Short-time Fourier transform: (n_fft // 2 + 1 or n_fft) x frames per signal."""
    _check_tensor(input, "stft")
    if return_complex is None and not input.dtype.is_complex:
        raise RuntimeError("stft requires the return_complex parameter be given for real "
                           "inputs, and will further require that return_complex=True in a "
                           "future PyTorch release.")
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.dim()}D")
    hop = n_fft // 4 if hop_length is None else hop_length
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    x = input if input.dtype.category >= 2 else input.to(tensorlib.get_default_dtype())
    batched = x.dim() == 2
    x = x if batched else x.unsqueeze(0)
    if center:
        pad = n_fft // 2
        x = tensorlib.nn.functional.pad(x.unsqueeze(0), (pad, pad), mode=pad_mode).squeeze(0)
    if not 0 < n_fft <= x.shape[-1]:
        raise RuntimeError(f"stft: expected 0 < n_fft < {x.shape[-1]}, but got n_fft={n_fft}")
    w = _window(window, n_fft if win_length is None else win_length, n_fft, x, "stft")
    segments = x.unfold(-1, n_fft, hop) * w                     # (batch, frames, n_fft)
    one = (not x.dtype.is_complex and not w.dtype.is_complex) if onesided is None \
        else onesided
    spec = tensorlib.fft.rfft(segments) if one else tensorlib.fft.fft(segments)
    if normalized:
        spec = spec * (1 / math.sqrt(n_fft))
    spec = spec.transpose(-1, -2)                               # (batch, freq, frames)
    spec = spec if batched else spec.squeeze(0)
    return spec if return_complex or return_complex is None else tensorlib.view_as_real(spec)


def _overlap_add(frames, hop, total):
    """Sum of frames (batch, count, n_fft) placed hop apart in a (batch, total) signal."""
    count, n_fft = frames.shape[1], frames.shape[2]
    positions = (tensorlib.arange(n_fft, device=frames.device).unsqueeze(0)
                 + hop * tensorlib.arange(count, device=frames.device).unsqueeze(1))
    signal = tensorlib.zeros((frames.shape[0], total), dtype=frames.dtype,
                             device=frames.device)
    return signal.index_add(1, positions.reshape(-1), frames.reshape(frames.shape[0], -1))


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,  # noqa: A002
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse of stft by windowed overlap-add (a real signal unless return_complex)."""
    _check_tensor(input, "istft")
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor")
    hop = n_fft // 4 if hop_length is None else hop_length
    w = _window(window, n_fft if win_length is None else win_length, n_fft,
                tensorlib.real(input), "istft")
    batched = input.dim() == 3
    spec = input if batched else input.unsqueeze(0)
    one = (spec.shape[-2] != n_fft) if onesided is None else onesided
    if normalized:
        spec = spec * math.sqrt(n_fft)
    spec = spec.transpose(-1, -2)                               # (batch, frames, freq)
    if return_complex:
        frames = tensorlib.fft.ifft(spec, n=n_fft)
    else:               # a real signal: the onesided half (as torch, even of a full spectrum)
        frames = tensorlib.fft.irfft(spec if one else spec[..., :n_fft // 2 + 1], n=n_fft)
    frames = frames * w
    count = frames.shape[1]
    total = n_fft + hop * (count - 1)
    signal = _overlap_add(frames, hop, total)
    envelope = _overlap_add((w * w).expand(1, count, n_fft), hop, total)[0]
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else start + length
    end = min(end, total)
    envelope = envelope[start:end]
    if end > start and float(envelope.detach().abs().min()) < 1e-11:
        raise RuntimeError("istft: window overlap add min: the window's squares overlap to "
                           "zero somewhere (check window, hop_length and center)")
    signal = signal[:, start:end] / envelope
    if length is not None and signal.shape[-1] < length:
        signal = zero_extend(signal, 1, length)
    return signal if batched else signal.squeeze(0)
