"""A short tour of tensorlib: PyTorch's API, strided views, and the plugin backends."""
import numpy as np

import tensorlib as torch

print("backends:")
for record in torch.backends.list():
    print(f"  {record.name:<8} {record.status}" + (f" ({record.reason})" if record.reason else ""))

x = torch.arange(12, dtype=torch.float32).view(3, 4)
print("\nx =", x)
print("x.T is a view sharing x's storage:", x.T.untyped_storage() is x.untyped_storage())
x.T[0, 1] = 100.0
print("after x.T[0, 1] = 100:", x[1, 0].item())

w = torch.from_numpy(np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2))
y = (x @ w).exp() / 10 + 1
print("\n(x @ w).exp() / 10 + 1 =", y)
print("sum over dim 0:", y.sum(0), " max over dim 1:", y.max(1).values)
print("broadcasting:", (torch.ones(3, 1) + torch.arange(4)).shape)
print("type promotion: int32 tensor * 2.5 ->", (torch.tensor([1, 2], dtype=torch.int32) * 2.5).dtype)
