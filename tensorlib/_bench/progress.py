"""A one-line progress bar on stderr (tqdm is not a dependency of the package): redrawn in
place on a terminal, silent otherwise so logs and tests stay clean."""
import sys
import time


class Progress:
    def __init__(self, total, stream=None, width=28):
        self.total, self.done, self.width = max(total, 1), 0, width
        self.stream = stream or sys.stderr
        self.live = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.perf_counter()

    def step(self, label):
        self.done += 1
        if not self.live:
            return
        filled = self.width * self.done // self.total
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = time.perf_counter() - self.start
        text = f"\r[{bar}] {self.done}/{self.total} {elapsed:5.1f}s {label}"
        self.stream.write(text[:100].ljust(100))
        self.stream.flush()

    def close(self):
        if self.live:
            self.stream.write("\r" + " " * 100 + "\r")
            self.stream.flush()
