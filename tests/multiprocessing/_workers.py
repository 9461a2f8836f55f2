"""Process targets for test_multiprocessing (importable by spawned children)."""
import tensorlib


def add_in_place(queue, done):
    t = queue.get()
    t += 1
    done.put((tuple(t.shape), t.is_shared(), t.sum().item()))


def fill_rank(rank, shared):
    shared[rank] = rank + 10


def fail_on_one(rank):
    if rank == 1:
        raise ValueError("rank one fails")


def send_back(queue, received):
    """The sender stays alive until the receiver has its file descriptor (as with PyTorch's
    file_descriptor strategy)."""
    queue.put(tensorlib.arange(6).reshape(2, 3)[:, 1:])
    received.wait(60)
