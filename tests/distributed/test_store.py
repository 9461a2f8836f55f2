"""torch.distributed's stores (HashStore, TCPStore, PrefixStore): every operation against
PyTorch's own TCPStore where it is installed, waits that time out with DistStoreError,
several processes meeting through one TCPStore, and stores refusing to be pickled."""
import pickle
import socket
import subprocess
import sys
import textwrap
import threading
import time
from datetime import timedelta

import pytest

import tensorlib.distributed as dist

try:
    import torch.distributed as torch_dist
except ImportError:
    torch_dist = None


def _script(store, key_prefix=""):
    """A sequence of every store operation, answered as a list (the same for any store)."""
    k = lambda name: key_prefix + name          # noqa: E731
    out = [store.num_keys()]
    store.set("a", "x")
    store.set("b", b"\x00\x01")
    out += [store.get("a"), store.get("b"), store.add("c", 5), store.add("c", -2), store.get("c")]
    out += [store.compare_set("a", "x", "y"), store.get("a"), store.compare_set("a", "zz", "w"),
            store.compare_set("new", "", "v"), store.compare_set("new2", "q", "v")]
    out += [store.check(["a"]), store.check(["a", "nope"]), store.delete_key("a"),
            store.delete_key("a"), store.num_keys()]
    store.append("ap", "x")
    store.append("ap", b"y")
    store.multi_set(["m1", "m2"], ["1", b"2"])
    out += [store.get("ap"), store.multi_get(["b", "m2"]), k("done")]
    return out


@pytest.mark.skipif(torch_dist is None, reason="PyTorch's TCPStore is the oracle")
def test_tcp_store_answers_as_pytorchs():
    timeout = timedelta(seconds=5)
    ours = dist.TCPStore("127.0.0.1", 0, world_size=1, is_master=True, timeout=timeout)
    theirs = torch_dist.TCPStore("127.0.0.1", 0, world_size=1, is_master=True,
                                 timeout=timeout)
    assert ours.port > 0 and ours.host == "127.0.0.1" and ours.timeout == timeout
    assert _script(ours) == _script(theirs)


def test_hash_and_prefix_stores():
    store = dist.HashStore()
    assert _script(store)[1:6] == [b"x", b"\x00\x01", 5, 3, b"3"]
    tcp = dist.TCPStore("127.0.0.1", 0, is_master=True, timeout=timedelta(seconds=5))
    prefixed = dist.PrefixStore("run1", tcp)
    prefixed.set("z", "1")
    assert tcp.get("run1/z") == b"1" and prefixed.get("z") == b"1"
    assert prefixed.underlying_store is tcp and prefixed.check(["z"])
    assert all(isinstance(s, dist.Store) for s in (store, tcp, prefixed))


@pytest.mark.parametrize("kind", ["hash", "tcp"])
def test_waits_time_out_and_see_other_threads(kind):
    store = dist.HashStore() if kind == "hash" else \
        dist.TCPStore("127.0.0.1", 0, is_master=True, timeout=timedelta(seconds=5))
    with pytest.raises(dist.DistStoreError, match=r"wait timeout after 200ms, keys: /never"):
        store.wait(["never"], timedelta(seconds=0.2))
    store.set_timeout(timedelta(seconds=0.2))
    with pytest.raises(dist.DistStoreError, match="wait timeout"):
        store.get("never")
    store.set_timeout(timedelta(seconds=5))
    threading.Timer(0.1, store.set, ("later", "v")).start()
    start = time.monotonic()
    assert store.get("later") == b"v" and time.monotonic() - start < 4
    store.set("text", "abc")
    with pytest.raises(dist.DistStoreError, match="not an integer"):
        store.add("text", 1)
    assert store.add("n", 1) == 1                   # the store still answers


def test_stores_refuse_pickling():
    for store in (dist.HashStore(),
                  dist.TCPStore("127.0.0.1", 0, is_master=True, timeout=timedelta(seconds=5))):
        with pytest.raises(TypeError, match="cannot pickle"):
            pickle.dumps(store)


def test_processes_meet_through_a_tcp_store():
    """The master waits for world_size processes to join; the workers write, the master
    reads what they wrote."""
    # the workers need the master's port before it listens (its constructor waits for
    # them): take a free one from the OS first
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    holder = []
    thread = threading.Thread(target=lambda: holder.append(
        dist.TCPStore("127.0.0.1", port, world_size=3, is_master=True,
                      timeout=timedelta(seconds=60))))
    thread.start()
    worker = textwrap.dedent(f"""
        import sys
        from datetime import timedelta
        import tensorlib.distributed as dist
        store = dist.TCPStore("127.0.0.1", {port}, world_size=3, is_master=False,
                              timeout=timedelta(seconds=60))
        store.set("rank" + sys.argv[1], "hello " + sys.argv[1])
        store.add("count", 1)
        store.wait(["go"])
        print(store.get("go").decode())
    """)
    procs = [subprocess.Popen([sys.executable, "-c", worker, str(r)], stdout=subprocess.PIPE,
                              text=True) for r in (1, 2)]
    thread.join(60)
    master = holder[0]
    master.wait(["rank1", "rank2"])
    assert master.get("rank2") == b"hello 2" and int(master.get("init/")) == 3
    master.set("go", "done")
    outputs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert outputs == ["done", "done"] and all(p.returncode == 0 for p in procs)
    assert int(master.get("count")) == 2
