"""A job that must end non-zero, fast: `raise` makes rank 1 raise while rank 0 waits in a
collective; `hang` makes rank 1 stay away from a collective that rank 0 joins with a short
process-group timeout (rank 0 must time out, name itself, and end the job)."""
import datetime
import sys
import time

import tensorlib as torch
import tensorlib.distributed as dist

mode = sys.argv[1]
timeout = datetime.timedelta(seconds=2 if mode == "hang" else 600)
dist.init_process_group(timeout=timeout)
dist.barrier()
if dist.get_rank() == 1:
    if mode == "raise":
        raise ValueError("rank 1 fails on purpose")
    time.sleep(120)
dist.all_reduce(torch.ones(4))
print("unreachable: the collective returned", flush=True)
