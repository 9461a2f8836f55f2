"""torch.distributed's key-value stores: HashStore (one process), TCPStore (processes on any
hosts, through a server the master process runs) and PrefixStore (a namespace in another
store). tensorlib's collectives rendezvous through MPI and need none of them; programs use
them directly to share small values between processes (skorch's DistributedHistory, custom
rendezvous). Values are bytes; nothing received is unpickled or executed."""
import socket
import socketserver
import struct
import threading
import time
import weakref
from datetime import timedelta

from tensorlib.distributed._errors import DistStoreError
from tensorlib.distributed._kv_table import KeyValueTable

__all__ = ["Store", "HashStore", "TCPStore", "PrefixStore"]

_DEFAULT_TIMEOUT = timedelta(seconds=300)


def _as_bytes(value):
    return value.encode() if isinstance(value, str) else bytes(value)


class Store:
    """The base class of the stores: subclasses provide set/get/add/compare_set/check/
    delete_key/num_keys/wait (and append); a timeout bounds the waits of get and wait."""

    def __init__(self, timeout=_DEFAULT_TIMEOUT):
        self._timeout = timeout

    @property
    def timeout(self):
        return self._timeout

    def set_timeout(self, timeout):
        self._timeout = timeout

    def multi_get(self, keys):
        return [self.get(key) for key in keys]

    def multi_set(self, keys, values):
        for key, value in zip(keys, values, strict=True):
            self.set(key, value)

    def __getstate__(self):
        raise TypeError(f"cannot pickle '{type(self).__name__}' object")


class HashStore(Store):
    """A store in this process's memory, shared by its threads."""

    def __init__(self):
        super().__init__()
        self._table = KeyValueTable()

    def set(self, key, value):
        self._table.set(key, _as_bytes(value))

    def get(self, key):
        return self._table.get(key, self._timeout.total_seconds())

    def add(self, key, amount):
        return self._table.add(key, int(amount))

    def append(self, key, value):
        self._table.append(key, _as_bytes(value))

    def compare_set(self, key, expected_value, desired_value):
        return self._table.compare_set(key, _as_bytes(expected_value), _as_bytes(desired_value))

    def check(self, keys):
        return self._table.check(list(keys))

    def delete_key(self, key):
        return self._table.delete_key(key)

    def num_keys(self):
        return self._table.num_keys()

    def wait(self, keys, timeout=None):
        self._table.wait(list(keys), (timeout or self._timeout).total_seconds())


class PrefixStore(Store):
    """Another store's keys under `prefix/`: separate namespaces in one store."""

    def __init__(self, prefix, store):
        super().__init__(store.timeout)
        self.prefix, self._store = prefix, store

    @property
    def underlying_store(self):
        return self._store

    def _key(self, key):
        return f"{self.prefix}/{key}"

    def set(self, key, value):
        self._store.set(self._key(key), value)

    def get(self, key):
        return self._store.get(self._key(key))

    def add(self, key, amount):
        return self._store.add(self._key(key), amount)

    def append(self, key, value):
        self._store.append(self._key(key), value)

    def compare_set(self, key, expected_value, desired_value):
        return self._store.compare_set(self._key(key), expected_value, desired_value)

    def check(self, keys):
        return self._store.check([self._key(k) for k in keys])

    def delete_key(self, key):
        return self._store.delete_key(self._key(key))

    def num_keys(self):
        return self._store.num_keys()

    def wait(self, keys, timeout=None):
        self._store.wait([self._key(k) for k in keys], timeout)


# ---- TCPStore's wire format -----------------------------------------------------------------
# A message is a one-byte code, a one-byte field count, then each field as a 4-byte big-endian
# length and its bytes. Requests carry an op code; replies 0 (fields follow) or 1 (an error
# message follows). Numbers travel as decimal text.
_OPS = ("set", "get", "add", "append", "compare_set", "check", "delete_key", "num_keys", "wait")


def _send(sock, code, fields):
    parts = [struct.pack(">BB", code, len(fields))]
    for field in fields:
        parts += [struct.pack(">I", len(field)), field]
    sock.sendall(b"".join(parts))


def _receive_exactly(sock, n):
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            raise ConnectionError("the store's connection was closed")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _receive(sock):
    code, count = struct.unpack(">BB", _receive_exactly(sock, 2))
    fields = []
    for _ in range(count):
        (length,) = struct.unpack(">I", _receive_exactly(sock, 4))
        fields.append(_receive_exactly(sock, length))
    return code, fields


def _serve_request(table, op, fields):
    """One request on the server's table; the reply's fields."""
    text = [f.decode() for f in fields] if op in ("check", "wait", "get") else None
    if op == "set":
        table.set(fields[0].decode(), fields[1])
        return []
    if op == "get":
        return [table.get(text[0], float(text[1]))]
    if op == "add":
        return [str(table.add(fields[0].decode(), int(fields[1]))).encode()]
    if op == "append":
        table.append(fields[0].decode(), fields[1])
        return []
    if op == "compare_set":
        return [table.compare_set(fields[0].decode(), fields[1], fields[2])]
    if op == "check":
        return [b"1" if table.check(text) else b"0"]
    if op == "delete_key":
        return [b"1" if table.delete_key(fields[0].decode()) else b"0"]
    if op == "num_keys":
        return [str(table.num_keys()).encode()]
    table.wait(text[1:], float(text[0]))
    return []


class _Handler(socketserver.BaseRequestHandler):
    def handle(self):
        table = self.server.table
        while True:
            try:
                code, fields = _receive(self.request)
            except (ConnectionError, OSError):
                return
            try:
                reply = _serve_request(table, _OPS[code], fields)
            except (DistStoreError, ValueError, IndexError, UnicodeDecodeError) as error:
                _send(self.request, 1, [str(error).encode()])
            else:
                _send(self.request, 0, reply)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, host, port):
        super().__init__((host, port), _Handler)
        self.table = KeyValueTable()
        threading.Thread(target=self.serve_forever, name="TCPStore server", daemon=True).start()

    def close(self):
        self.shutdown()
        self.server_close()


class TCPStore(Store):
    """A store served over TCP by the master process (is_master=True; port 0 picks a free
    one, `store.port` tells which); every process connects as a client. With a world_size,
    each process counts itself in and the master waits for all of them, as PyTorch's."""

    def __init__(self, host_name, port, world_size=None, is_master=False,
                 timeout=_DEFAULT_TIMEOUT, wait_for_workers=True, multi_tenant=False,
                 master_listen_fd=None, use_libuv=True):
        super().__init__(timeout)
        self.host, self.world_size = host_name, world_size
        if is_master:
            try:
                server = _Server(host_name, port)
            except OSError as error:
                raise DistStoreError(f"TCPStore: the master could not listen on "
                                     f"{host_name}:{port}: {error}") from None
            port = server.server_address[1]
            weakref.finalize(self, server.close)
        self.port = port
        self._connections = threading.local()     # one per thread: a get may block on it
        self._connection()
        if wait_for_workers and world_size:
            self.add("init/", 1)
            if is_master:
                self._wait_for_workers(world_size)

    def _connection(self):
        sock = getattr(self._connections, "sock", None)
        if sock is None:
            sock = self._connections.sock = self._connect()
        return sock

    def _connect(self):
        deadline = time.monotonic() + self._timeout.total_seconds()
        while True:
            try:
                return socket.create_connection((self.host, self.port),
                                                timeout=max(deadline - time.monotonic(), 0.1))
            except OSError as error:
                if time.monotonic() >= deadline:
                    raise DistStoreError(f"TCPStore: could not connect to {self.host}:"
                                         f"{self.port} within {self._timeout}: {error}") from None
                time.sleep(0.05)

    def _wait_for_workers(self, world_size):
        deadline = time.monotonic() + self._timeout.total_seconds()
        while int(self.get("init/")) < world_size:
            if time.monotonic() >= deadline:
                raise DistStoreError(f"Timed out after {self._timeout} waiting for all "
                                     f"{world_size} workers to join the TCPStore")
            time.sleep(0.01)

    def _call(self, op, fields, waits=0.0):
        """One request and its reply's fields; the socket waits the op's own timeout and a
        margin (the server answers a timed-out wait with an error)."""
        sock = self._connection()
        sock.settimeout(waits + self._timeout.total_seconds() + 10)
        _send(sock, _OPS.index(op), fields)
        code, reply = _receive(sock)
        if code:
            raise DistStoreError(reply[0].decode())
        return reply

    def set(self, key, value):
        self._call("set", [key.encode(), _as_bytes(value)])

    def get(self, key):
        seconds = self._timeout.total_seconds()
        return self._call("get", [key.encode(), str(seconds).encode()], seconds)[0]

    def add(self, key, amount):
        return int(self._call("add", [key.encode(), str(int(amount)).encode()])[0])

    def append(self, key, value):
        self._call("append", [key.encode(), _as_bytes(value)])

    def compare_set(self, key, expected_value, desired_value):
        return self._call("compare_set", [key.encode(), _as_bytes(expected_value),
                                          _as_bytes(desired_value)])[0]

    def check(self, keys):
        return self._call("check", [k.encode() for k in keys])[0] == b"1"

    def delete_key(self, key):
        return self._call("delete_key", [key.encode()])[0] == b"1"

    def num_keys(self):
        return int(self._call("num_keys", [])[0])

    def wait(self, keys, timeout=None):
        seconds = (timeout or self._timeout).total_seconds()
        self._call("wait", [str(seconds).encode()] + [k.encode() for k in keys], seconds)
