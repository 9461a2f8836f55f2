"""torch.backends.mkldnn.enabled for the CPU backend: oneDNN off (convolutions fall back to
our own kernels, float32 GEMM to the BLAS below it) and back on, in this process."""
from tensorlib_cpu import gemm, onednn

# what the last switch-off took away, put back by the next switch-on
_taken = {"onednn": False, "gemm": False}


def use(enabled):
    """Turn oneDNN off for convolutions and GEMM, or put back what the last switch-off took
    (nothing more: oneDNN off by TENSORLIB_ONEDNN=0 stays off); returns whether it is now in
    use."""
    if not enabled:
        _taken["onednn"] = _taken["onednn"] or onednn.library() is not None
        _taken["gemm"] = _taken["gemm"] or gemm.LIBRARY == "onednn"
        if gemm.LIBRARY == "onednn":
            gemm.use_blas("openblas")
        onednn.use(False)
        return False
    if _taken["onednn"]:
        onednn.use(True)
    if _taken["gemm"] and onednn.library() is not None:
        gemm.use_blas("onednn")
    _taken.update(onednn=False, gemm=False)
    return onednn.library() is not None
