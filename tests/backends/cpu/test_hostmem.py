"""The CPU host allocator (tensorlib_cpu.hostmem): freed buffers of 128 KiB and more come
back from its pool (no fresh pages), smaller ones go to malloc."""
from tensorlib_cpu.hostmem import HostAllocator


def test_buffers_from_128_kib_are_reused_and_smaller_ones_are_not_pooled():
    pool = HostAllocator()
    for nbytes in (200_000, 692_224, 3 << 20):
        h = pool.allocate(nbytes)
        assert h.nbytes >= nbytes
        pool.release(h, nbytes)
        again = pool.allocate(nbytes)
        assert again is h
        pool.release(again, nbytes)
    assert pool.hits == 3
    small = pool.allocate(100_000)
    pool.release(small, 100_000)
    assert pool.allocate(100_000) is not small and pool.cached_bytes > 0 and pool.hits == 3


def test_the_pool_keeps_at_most_its_cap():
    pool = HostAllocator(max_cached_bytes=256 << 10)
    a, b = pool.allocate(200_000), pool.allocate(200_000)
    pool.release(a, 200_000)
    pool.release(b, 200_000)           # over the cap: dropped
    assert pool.cached_bytes == a.nbytes


def test_pooled_buffers_start_on_a_page():
    """An op's large output must not start a few bytes after its input mod 4 KiB (malloc's
    back-to-back placement): its stores would 4K-alias the loads just ahead and stall them.
    Pooled buffers start on a page boundary, also when they come back from the pool."""
    import tensorlib as tl
    x = tl.randn(1 << 18)
    outs = [x + 1, (x + 1).exp(), x * 2]
    assert all(t.data_ptr() % 4096 == 0 for t in outs)
    del outs
    again = x + 2                       # from the pool
    assert again.data_ptr() % 4096 == 0
    assert again.tolist()[:3] == (x + 2).tolist()[:3]
