"""SyncBatchNorm across 2 processes (the launcher, as tests/distributed): each rank's slice
of a batch normalized with the whole batch's statistics, its gradients those of one
BatchNorm over the whole batch (tests/distributed/syncbn_ranks.py checks; this starts it)."""
from tests.distributed.test_multiprocess import launch


def test_sync_batchnorm_matches_batchnorm_on_the_whole_batch():
    done = launch(2, "syncbn_ranks.py")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    for rank in range(2):
        assert f"SYNCBN {rank} OK" in done.stdout
