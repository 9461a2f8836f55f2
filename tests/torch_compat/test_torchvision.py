"""torchvision on tensorlib, under the torch runner: its import (the dispatcher registrations
it makes at module level), transforms v1 and v2 on tensors and PIL images, models built and
run, datasets read from local files, make_grid/save_image. torchvision's C++ ops cannot load
(they link libtorch): its own Python fallbacks are what runs."""
import importlib.util

import pytest

from tests.torch_compat.test_runner import run_program

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torchvision") is None,
                                reason="torchvision is not installed")


def test_import_and_dispatcher_registrations(tmp_path):
    out = run_program(tmp_path, """
        import torch, torchvision, tensorlib
        import torchvision.transforms, torchvision.transforms.v2, torchvision.models
        import torchvision.datasets, torchvision.ops, torchvision.utils
        assert torch is not None and torchvision.extension._has_ops() is False
        from torchvision import _autograd_registrations as reg
        assert repr(reg._all_autocast_keys) == \\
            "DispatchKeySet(AutocastCPU, AutocastXPU, AutocastCUDA)"
        x = torch.ones(2, 2)
        with torch.autocast("cpu"):
            with torch._C._ExcludeDispatchKeyGuard(reg._all_autocast_keys):
                assert (x @ x).dtype is torch.float32
        print(torchvision.ops.box_iou(torch.tensor([[0, 0, 2, 2.]]),
                                      torch.tensor([[1, 1, 3, 3.]])).item())
    """)
    assert abs(float(out.split()[-1]) - 1 / 7) < 1e-6


def test_transforms_models_and_utils(tmp_path):
    out = run_program(tmp_path, """
        import numpy as np, torch, torchvision
        from torchvision import transforms as T
        from torchvision.transforms import v2
        from PIL import Image
        torch.manual_seed(0)
        img = Image.fromarray((np.random.RandomState(0).rand(40, 50, 3) * 255).astype("uint8"))
        x = T.Compose([T.Resize(32), T.CenterCrop(28), T.RandomHorizontalFlip(), T.ToTensor(),
                       T.Normalize((0.5,) * 3, (0.5,) * 3)])(img)
        assert tuple(x.shape) == (3, 28, 28) and x.dtype is torch.float32
        t = torch.rand(3, 40, 50)
        for tr in [T.RandomResizedCrop(24), T.RandomRotation(10), T.GaussianBlur(3),
                   T.RandomAffine(10, translate=(0.1, 0.1)), T.Grayscale(3),
                   T.RandomErasing(p=1.0), T.Pad(2), T.RandomPerspective(p=1.0)]:
            assert tr(t).dim() == 3, tr
        assert T.AutoAugment()((t * 255).to(torch.uint8)).dtype is torch.uint8
        y = v2.Compose([v2.ToImage(), v2.RandomResizedCrop(24, antialias=True),
                        v2.RandomHorizontalFlip(), v2.ToDtype(torch.float32, scale=True),
                        v2.Normalize([0.5] * 3, [0.5] * 3)])(img)
        assert tuple(y.shape) == (3, 24, 24) and y.dtype is torch.float32
        for tr in [v2.RandomRotation(10), v2.RandomAffine(10), v2.Resize(20), v2.CenterCrop(20)]:
            assert tr(t).dim() == 3, tr
        m = torchvision.models.resnet18(weights=None).eval()
        v = torchvision.models.vit_b_16(weights=None, image_size=32).eval()
        with torch.no_grad():
            print(tuple(m(torch.rand(1, 3, 64, 64)).shape),
                  tuple(v(torch.rand(1, 3, 32, 32)).shape))
        grid = torchvision.utils.make_grid(torch.rand(4, 3, 8, 8), nrow=2, padding=2)
        torchvision.utils.save_image(torch.rand(4, 3, 8, 8), "grid.png")  # nrow=8: one row
        print(tuple(grid.shape), Image.open("grid.png").size)
    """)
    assert out.split("\n")[:2] == ["(1, 1000) (1, 1000)", "(3, 22, 22) (42, 12)"]


def test_datasets_from_local_files(tmp_path):
    out = run_program(tmp_path, """
        import os, struct
        import numpy as np, torch
        from PIL import Image
        from torchvision import datasets, transforms
        for label in ("cat", "dog"):
            os.makedirs(f"images/{label}")
            for i in range(3):
                Image.new("RGB", (6, 5), (i * 40, 0, 0)).save(f"images/{label}/{i}.png")
        folder = datasets.ImageFolder("images", transform=transforms.ToTensor())
        x, y = folder[4]
        print(len(folder), folder.classes, tuple(x.shape), y)
        os.makedirs("mnist/MNIST/raw")
        pixels = np.arange(2 * 28 * 28, dtype=np.uint8)
        for split in ("train", "t10k"):              # MNIST checks that all four files exist
            with open(f"mnist/MNIST/raw/{split}-images-idx3-ubyte", "wb") as f:
                f.write(struct.pack(">IIII", 2051, 2, 28, 28) + pixels.tobytes())
            with open(f"mnist/MNIST/raw/{split}-labels-idx1-ubyte", "wb") as f:
                f.write(struct.pack(">II", 2049, 2) + bytes([7, 3]))
        mnist = datasets.MNIST("mnist", train=False, download=False,
                               transform=transforms.ToTensor())
        img, label = mnist[1]
        print(len(mnist), label, tuple(img.shape), round(float(img[0, 0, 0]) * 255))
        loader = torch.utils.data.DataLoader(mnist, batch_size=2)
        print(tuple(next(iter(loader))[0].shape))
    """)
    assert out.split("\n")[:3] == ["6 ['cat', 'dog'] (3, 5, 6) 1",
                                   "2 3 (1, 28, 28) 16", "(2, 1, 28, 28)"]
