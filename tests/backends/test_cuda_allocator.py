"""The CUDA caching allocator's bookkeeping, driven by a fake driver (no GPU needed): size
rounding, reuse per stream, blocks used by other streams held until their events complete,
emptying the cache, the out-of-memory retry and error, the memory limit and the counters."""
import pytest

from tensorlib.cuda import OutOfMemoryError
from tensorlib_cuda.allocator import CachingAllocator, round_size


class FakeEvent:
    def __init__(self):
        self.done = False


class FakeDriver:
    def __init__(self, capacity=1 << 30):
        self.capacity, self.used = capacity, 0
        self.live, self.next = {}, 4096
        self.events = []
        self.mallocs = self.frees = 0

    def malloc(self, n):
        if self.used + n > self.capacity:
            raise MemoryError("out of memory")
        ptr, self.next = self.next, self.next + n
        self.live[ptr] = n
        self.used += n
        self.mallocs += 1
        return ptr

    def free(self, ptr):
        self.used -= self.live.pop(ptr)
        self.frees += 1

    def mem_get_info(self):
        return self.capacity - self.used, self.capacity

    def record_event(self, stream):
        e = FakeEvent()
        self.events.append((stream, e))
        return e

    def event_done(self, e):
        return e.done


S0, S1 = "stream0", "stream1"


def test_sizes_round_to_512_bytes_then_2_mib():
    assert round_size(1) == 512 and round_size(512) == 512 and round_size(513) == 1024
    assert round_size(1 << 20) == 1 << 20
    assert round_size((1 << 20) + 1) == 2 << 20
    assert round_size(5 << 20) == 6 << 20


def test_a_freed_block_is_reused_on_its_stream_only():
    drv = FakeDriver()
    a = CachingAllocator(drv)
    p = a.allocate(1000, S0)
    a.free(p)
    assert a.stats()["cached_blocks"] == 1
    assert a.allocate(900, S0) == p                # same stream, fits: reused
    q = a.allocate(900, S1)                        # another stream: a fresh block
    assert q != p and drv.mallocs == 2


def test_best_fit_and_large_blocks_are_not_tied_up_by_small_requests():
    drv = FakeDriver()
    a = CachingAllocator(drv)
    big, small = a.allocate(8 << 20, S0), a.allocate(4096, S0)
    a.free(big)
    a.free(small)
    assert a.allocate(2048, S0) == small           # the smallest block that fits
    assert a.allocate(2 << 20, S0) != big          # 8 MiB is more than twice 2 MiB
    assert a.allocate(5 << 20, S0) == big


def test_block_used_by_another_stream_waits_for_its_event():
    drv = FakeDriver()
    a = CachingAllocator(drv)
    p = a.allocate(4096, S0)
    a.record_stream(p, S1)
    a.free(p)
    assert a.stats()["pending_blocks"] == 1 and len(drv.events) == 1
    assert drv.events[0][0] == S1
    assert a.allocate(4096, S0) != p               # S1 may still read it
    drv.events[0][1].done = True
    assert a.allocate(4096, S0) == p               # its work is done: reusable


def test_record_stream_of_the_allocating_stream_is_a_no_op():
    a = CachingAllocator(FakeDriver())
    p = a.allocate(10, S0)
    a.record_stream(p, S0)
    a.free(p)
    assert a.stats()["pending_blocks"] == 0 and a.stats()["cached_blocks"] == 1


def test_empty_cache_returns_blocks_but_keeps_busy_ones():
    drv = FakeDriver()
    a = CachingAllocator(drv)
    p, q = a.allocate(4096, S0), a.allocate(4096, S0)
    a.record_stream(q, S1)
    a.free(p)
    a.free(q)
    a.release_cached()
    assert p not in drv.live and q in drv.live
    assert a.stats()["reserved_bytes"] == 4096


def test_out_of_memory_empties_the_cache_and_retries_once():
    drv = FakeDriver(capacity=8 << 20)
    a = CachingAllocator(drv)
    p = a.allocate(6 << 20, S0)
    a.free(p)                                       # cached, still held from the driver
    q = a.allocate(7 << 20, S1)                     # needs the cache emptied first
    assert q and a.stats()["alloc_retries"] == 1 and p not in drv.live


def test_out_of_memory_error_says_what_was_asked_and_what_is_free():
    drv = FakeDriver(capacity=8 << 20)
    a = CachingAllocator(drv, "cuda:0")
    keep = a.allocate(6 << 20, S0)
    with pytest.raises(OutOfMemoryError) as info:
        a.allocate(4 << 20, S0)
    msg = str(info.value)
    assert isinstance(info.value, RuntimeError)
    assert "cuda:0" in msg and "4.00 MiB" in msg and "2.00 MiB free of 8.00 MiB" in msg
    assert a.stats()["ooms"] == 1
    a.free(keep)                                    # and the allocator still works
    assert a.allocate(4 << 20, S0)


def test_memory_limit_and_counters():
    drv = FakeDriver()
    a = CachingAllocator(drv)
    a.limit = 4 << 20
    p = a.allocate(3 << 20, S0)
    with pytest.raises(OutOfMemoryError, match="memory limit"):
        a.allocate(2 << 20, S0)
    s = a.stats()
    assert s["allocated_bytes"] == 4 << 20 and s["peak_allocated_bytes"] == 4 << 20
    a.free(p)
    assert a.stats()["allocated_bytes"] == 0 and a.stats()["peak_allocated_bytes"] == 4 << 20
    a.reset_peak()
    assert a.stats()["peak_allocated_bytes"] == 0
    assert a.stats()["allocations"] == 1 and a.stats()["frees"] == 1


def test_freeing_an_unknown_pointer_is_ignored():
    a = CachingAllocator(FakeDriver())
    a.free(12345)
    assert a.stats()["frees"] == 0
