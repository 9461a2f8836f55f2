"""UntypedStorage.from_file and byte slices of a storage: what safetensors' loader calls
(`from_file(name, shared=False, nbytes=n)`, then `storage[start:stop]` and
`torch.asarray(slice, dtype=...)` per tensor). A file-backed storage is a memory map of the
file, read lazily by the kernel; a slice shares its parent's bytes."""
import mmap
import os

import numpy as np

from tensorlib._C.device import canonical
from tensorlib._C.storage import Storage


def storage_from_file(filename, shared=False, nbytes=0):
    """A CPU storage over the first nbytes of the file. shared=True maps it shared (writes
    reach the file, which is created or grown to nbytes as needed); shared=False maps it
    privately (writes stay in this process) and the file must hold nbytes."""
    path = os.fspath(filename)
    mode = "read-write" if shared else "read-only"
    try:
        fd = os.open(path, (os.O_RDWR | os.O_CREAT) if shared else os.O_RDONLY, 0o644)
    except OSError as e:
        raise RuntimeError(f"unable to open file <{path}> in {mode} mode: {e.strerror} "
                           f"({e.errno})") from None
    try:
        size = os.fstat(fd).st_size
        if size < nbytes:
            if not shared:
                raise RuntimeError(f"file <{path}> size <{size}> is smaller than the required "
                                   f"mapping size <{nbytes}>")
            os.ftruncate(fd, nbytes)
        if nbytes == 0:
            handle = np.empty(0, np.uint8)
        else:
            mapped = mmap.mmap(fd, nbytes, flags=mmap.MAP_SHARED if shared else mmap.MAP_PRIVATE,
                               prot=mmap.PROT_READ | mmap.PROT_WRITE)
            handle = np.frombuffer(mapped, np.uint8)
    finally:
        os.close(fd)
    return Storage(handle, nbytes, canonical("cpu"))


def storage_slice(storage, index):
    """storage[start:stop]: a storage over those bytes of the same memory (step 1 only)."""
    start, stop, step = index.indices(storage._nbytes)
    if step != 1:
        raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of 1 is "
                           f"supported")
    if not isinstance(storage.handle, np.ndarray):
        raise NotImplementedError(f"slicing a storage is supported for CPU storages only, "
                                  f"not on {storage.device}")
    stop = max(start, stop)
    return Storage(storage.handle[start:stop], stop - start, storage.device)
