"""Train the digits CNN of train_digits.py briefly and save it for `tensorlib serve`.

    pip install ".[examples,serve]" && python examples/serve_digits.py [--epochs 4] [--out out]
    tensorlib serve --model digits=out/digits.tlj

`tensorlib.jit.trace` records the eval-mode forward as a graph; `tensorlib.jit.save` writes
it with the weights and the input signature (N, 1, 8, 8) float32, so the server needs
neither this file nor the model's class. The script also writes out/request.json and
out/request.npy (five test digits) and out/labels.json (their labels) for the curl
examples in docs/serving.md.
"""
import json
import os

import numpy as np

import tensorlib as torch
from tensorlib import nn
from tensorlib.utils.data import DataLoader

from common import parser
from train_digits import evaluate, load_data, make_model


def train(model, loader, epochs, max_batches):
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3, weight_decay=1e-4)
    for _ in range(epochs):
        model.train()
        for step, (images, labels) in enumerate(loader):
            if max_batches is not None and step >= max_batches:
                break
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(images), labels).backward()
            optimizer.step()


def main(argv=None):
    p = parser(__doc__.splitlines()[0], epochs=4)
    p.add_argument("--out", default="out", help="directory for the graph and the requests")
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(args.seed)
    train_set, test_set = load_data(args.seed)
    loader = DataLoader(train_set, batch_size=64, shuffle=True,
                        generator=torch.Generator().manual_seed(args.seed))
    model = make_model()
    train(model, loader, args.epochs, args.max_batches)
    test_loader = DataLoader(test_set, batch_size=256)
    _, accuracy, predictions = evaluate(model, test_loader, "cpu")    # leaves it in eval()

    images = torch.from_numpy(test_set.images[:5])
    graph = torch.jit.trace(model, images)
    path = os.path.join(args.out, "digits.tlj")
    torch.jit.save(graph, path)
    _, reloaded_accuracy, reloaded = evaluate(torch.jit.load(path), test_loader, "cpu")
    if not np.array_equal(reloaded, predictions):
        raise SystemExit("the saved graph predicts differently from the model")

    with open(os.path.join(args.out, "request.json"), "w") as f:
        json.dump({"inputs": test_set.images[:5].tolist()}, f)
    np.save(os.path.join(args.out, "request.npy"), test_set.images[:5])
    with open(os.path.join(args.out, "labels.json"), "w") as f:
        json.dump(test_set.labels[:5].tolist(), f)
    print(f"test accuracy {100 * accuracy:.1f}%; the saved graph gives the same predictions")
    print(f"saved {path} (inputs (N, 1, 8, 8) float32); serve it with:")
    print(f"  tensorlib serve --model digits={path}")


if __name__ == "__main__":
    main()
