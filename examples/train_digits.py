"""Train a small CNN on scikit-learn's handwritten digits (8x8 images, 1797 samples, shipped
with scikit-learn: nothing is downloaded).

    pip install ".[examples]" && python examples/train_digits.py [--device opencl] [--epochs 12]

Shows the parts of a real training job: a Dataset and a DataLoader with worker processes, a
CNN with batch norm and dropout, Adam with a one-cycle learning-rate schedule, test accuracy
after every epoch, a checkpoint saved with `tensorlib.save` and reloaded into a fresh model,
and a PNG of the curves and of test digits with their predicted labels. The script is plain
PyTorch code apart from `import tensorlib as torch`.
"""
import os
import time

import numpy as np

import tensorlib as torch
from tensorlib import nn
from tensorlib.utils.data import DataLoader, Dataset

from common import best_device, parser, require


class Digits(Dataset):
    """(1x8x8 float image scaled to [0, 1], label) pairs from numpy arrays."""

    def __init__(self, images, labels):
        self.images = images.astype(np.float32).reshape(-1, 1, 8, 8) / 16.0
        self.labels = labels.astype(np.int64)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return torch.from_numpy(self.images[i]), int(self.labels[i])


def make_model(nn=nn):
    """The CNN; `nn` may be another library's module of the same API (serve_load.py builds
    the same network on torch.nn for its PyTorch baseline)."""
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.MaxPool2d(2),                                        # 64 x 4 x 4
        nn.Flatten(), nn.Dropout(0.3),
        nn.Linear(64 * 4 * 4, 128), nn.ReLU(), nn.Dropout(0.3),
        nn.Linear(128, 10))


def load_data(seed):
    datasets = require("sklearn.datasets", "train_digits.py")
    model_selection = require("sklearn.model_selection", "train_digits.py")
    digits = datasets.load_digits()
    x_train, x_test, y_train, y_test = model_selection.train_test_split(
        digits.data, digits.target, test_size=0.2, random_state=seed, stratify=digits.target)
    return Digits(x_train, y_train), Digits(x_test, y_test)


def evaluate(model, loader, device):
    """(mean loss, accuracy, predictions) over the whole loader, in eval mode."""
    model.eval()
    total_loss, correct, seen, predictions = 0.0, 0, 0, []
    with torch.no_grad():
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            logits = model(images)
            total_loss += nn.functional.cross_entropy(logits, labels, reduction="sum").item()
            predicted = logits.argmax(dim=1)
            correct += (predicted == labels).sum().item()
            seen += labels.shape[0]
            predictions.append(predicted.cpu().numpy())
    return total_loss / seen, correct / seen, np.concatenate(predictions)


def train_epoch(model, loader, optimizer, scheduler, device, bar, max_batches):
    model.train()
    total_loss, seen = 0.0, 0
    for step, (images, labels) in enumerate(loader):
        if max_batches is not None and step >= max_batches:
            break
        images, labels = images.to(device), labels.to(device)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        scheduler.step()
        total_loss += loss.item() * labels.shape[0]
        seen += labels.shape[0]
        bar.update(1)
        bar.set_postfix(loss=f"{loss.item():.3f}", lr=f"{scheduler.get_last_lr()[0]:.2e}")
    return total_loss / max(seen, 1)


def plot(history, test_set, predictions, path):
    """Loss and accuracy per epoch on top, sixteen test digits with their predictions below."""
    matplotlib = require("matplotlib", "train_digits.py")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    epochs = np.arange(1, len(history["train_loss"]) + 1)
    fig = plt.figure(figsize=(10, 7.5), layout="constrained")
    top, bottom = fig.subfigures(2, 1, height_ratios=[1.1, 1])
    ax_loss, ax_acc = top.subplots(1, 2)
    ax_loss.plot(epochs, history["train_loss"], "o-", label="train")
    ax_loss.plot(epochs, history["test_loss"], "s-", label="test")
    ax_loss.set(title="cross-entropy loss", xlabel="epoch", yscale="log")
    ax_loss.legend()
    ax_acc.plot(epochs, 100 * np.asarray(history["test_acc"]), "s-", color="tab:green")
    ax_acc.set(title="test accuracy", xlabel="epoch", ylabel="%")
    ax_acc.set_ylim(min(90.0, 100 * min(history["test_acc"]) - 1), 100.5)
    for ax in (ax_loss, ax_acc):
        ax.grid(alpha=0.3)
        ax.set_xticks(epochs)
    axes = bottom.subplots(2, 8)
    for i, ax in enumerate(axes.flat):
        image, label = test_set.images[i, 0], test_set.labels[i]
        ax.imshow(image, cmap="gray_r")
        good = predictions[i] == label
        ax.set_title(f"pred {predictions[i]}" + ("" if good else f" (is {label})"),
                     color="black" if good else "red", fontsize=10)
        ax.axis("off")
    bottom.suptitle("test digits and predicted labels")
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv=None):
    p = parser(__doc__.splitlines()[0], epochs=12)
    p.add_argument("--out", default="out", help="directory for the checkpoint and the plot")
    args = p.parse_args(argv)
    tqdm = require("tqdm", "train_digits.py").tqdm
    device = args.device or best_device()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(args.seed)
    train_set, test_set = load_data(args.seed)
    train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=2,
                              persistent_workers=True,
                              generator=torch.Generator().manual_seed(args.seed))
    test_loader = DataLoader(test_set, batch_size=256)
    model = make_model().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3, weight_decay=1e-4)
    steps = len(train_loader) if args.max_batches is None else min(args.max_batches,
                                                                    len(train_loader))
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=3e-3,
                                                    total_steps=args.epochs * steps)
    print(f"digits: {len(train_set)} train / {len(test_set)} test images, device {device}, "
          f"{sum(p.numel() for p in model.parameters())} parameters")

    history = {"train_loss": [], "test_loss": [], "test_acc": []}
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        with tqdm(total=steps, desc=f"epoch {epoch}/{args.epochs}", leave=False) as bar:
            train_loss = train_epoch(model, train_loader, optimizer, scheduler, device, bar,
                                     args.max_batches)
        test_loss, test_acc, predictions = evaluate(model, test_loader, device)
        for key, value in zip(history, (train_loss, test_loss, test_acc)):
            history[key].append(value)
        tqdm.write(f"epoch {epoch:>2}: train loss {train_loss:.4f}, test loss {test_loss:.4f}, "
                   f"test accuracy {100 * test_acc:.1f}%")
    elapsed = time.perf_counter() - start

    checkpoint = os.path.join(args.out, "digits_cnn.pt")
    torch.save({"model": model.state_dict(), "epochs": args.epochs}, checkpoint)
    fresh = make_model().to(device)
    fresh.load_state_dict(torch.load(checkpoint)["model"])
    _, reloaded_acc, reloaded_predictions = evaluate(fresh, test_loader, device)
    if not np.array_equal(reloaded_predictions, predictions):
        raise SystemExit(f"the reloaded checkpoint predicts differently: "
                         f"{100 * reloaded_acc:.1f}% vs {100 * test_acc:.1f}%")
    figure = os.path.join(args.out, "digits.png")
    plot(history, test_set, predictions, figure)
    print(f"trained {args.epochs} epochs in {elapsed:.1f} s on {device}; checkpoint "
          f"{checkpoint} reloads to the same predictions; plot {figure}")
    print(f"test accuracy: {100 * reloaded_acc:.1f}%")


if __name__ == "__main__":
    main()
