"""Small models the export tests share: an MLP, a CNN with BatchNorm (buffers), a module
with keyword inputs, and ones whose Python branches on data or on a dynamic size."""
import tensorlib as tl
import tensorlib.nn as nn
import tensorlib.nn.functional as F


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        y = self.pool(F.relu(self.bn(self.conv(x))))
        return self.fc(y.view(y.size(0), -1))


class WithKwargs(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x, *, mask, scale=2.0):
        return self.proj(x) * mask * scale


class DataBranch(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x - 1


class ItemUse(nn.Module):
    def forward(self, x):
        return x * x.max().item()


class SizeBranch(nn.Module):
    def forward(self, x):
        if x.shape[0] > 3:
            return x * 2
        return x


class FixedReshape(nn.Module):
    def forward(self, x):
        return x.reshape(4, -1) + 1


def cnn_eval():
    tl.manual_seed(0)
    m = CNN()
    with tl.no_grad():          # running statistics that are not the defaults
        m.bn.running_mean.uniform_(-0.5, 0.5)
        m.bn.running_var.uniform_(0.5, 1.5)
    return m.eval()
