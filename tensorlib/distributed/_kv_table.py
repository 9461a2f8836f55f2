"""The key-value table behind HashStore and TCPStore's server: bytes values under str keys,
and the operations of torch.distributed.Store on it, thread-safe, with waits for keys that
other threads (or the server's other clients) set."""
import threading
import time

from tensorlib.distributed._errors import DistStoreError


def wait_timeout_error(keys, seconds):
    return DistStoreError(f"wait timeout after {round(seconds * 1000)}ms, keys: "
                          + ", ".join("/" + key for key in keys))


class KeyValueTable:
    def __init__(self):
        self._values = {}
        self._changed = threading.Condition()

    def set(self, key, value):
        with self._changed:
            self._values[key] = value
            self._changed.notify_all()

    def get(self, key, timeout):
        """The value of key, once some thread has set it (DistStoreError after timeout s)."""
        with self._changed:
            self._wait_locked([key], timeout)
            return self._values[key]

    def add(self, key, amount):
        with self._changed:
            current = self._values.get(key, b"0")
            try:
                total = int(current) + amount
            except ValueError:
                raise DistStoreError(f"add: the value of key '{key}' is not an integer: "
                                     f"{current!r}") from None
            self._values[key] = str(total).encode()
            self._changed.notify_all()
            return total

    def append(self, key, value):
        with self._changed:
            self._values[key] = self._values.get(key, b"") + value
            self._changed.notify_all()

    def compare_set(self, key, expected, desired):
        """PyTorch's rule: a missing key takes `desired` only when `expected` is empty (and
        the answer is `expected` otherwise); a present one takes it when it equals
        `expected`. Answers the value the key holds afterwards."""
        with self._changed:
            current = self._values.get(key)
            if current is None:
                if expected:
                    return expected
            elif current != expected:
                return current
            self._values[key] = desired
            self._changed.notify_all()
            return desired

    def check(self, keys):
        with self._changed:
            return all(key in self._values for key in keys)

    def delete_key(self, key):
        with self._changed:
            return self._values.pop(key, None) is not None

    def num_keys(self):
        with self._changed:
            return len(self._values)

    def wait(self, keys, timeout):
        with self._changed:
            self._wait_locked(keys, timeout)

    def _wait_locked(self, keys, timeout):
        deadline = time.monotonic() + timeout
        while not all(key in self._values for key in keys):
            left = deadline - time.monotonic()
            if left <= 0 or not self._changed.wait(left):
                if not all(key in self._values for key in keys):
                    raise wait_timeout_error([k for k in keys if k not in self._values],
                                             timeout)
