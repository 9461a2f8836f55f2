"""torch.__config__: programs read the build report at import (PyG searches show() for
'USE_MKL=OFF'); tensorlib's names the libraries it runs on, as `tensorlib info` does."""
import tensorlib
from tensorlib._info import _cpu_libraries


def test_show_names_the_libraries_behind_the_kernels():
    text = tensorlib.__config__.show()
    assert text.startswith(f"tensorlib {tensorlib.__version__} built with:\n")
    assert f"  - GEMM: {_cpu_libraries()['gemm']}" in text
    assert "USE_MKL" not in text           # no PyTorch build flag is claimed


def test_parallel_info_reports_the_thread_counts(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    text = tensorlib.__config__.parallel_info()
    assert f"get_num_threads() : {tensorlib.get_num_threads()}" in text
    assert f"get_num_interop_threads() : {tensorlib.get_num_interop_threads()}" in text
    assert "OMP_NUM_THREADS : 3" in text and "MKL_NUM_THREADS :" in text
