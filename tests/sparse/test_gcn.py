"""Two-layer GCNs trained for five Adam steps give torch's losses, built the two ways real
programs build their adjacency: pygcn's (a row-normalised scipy COO matrix turned into
torch.sparse.FloatTensor(indices, values, size), products by torch.spmm) and pytorch/examples'
(symmetric degree normalisation with torch.diag(...).to_sparse(), sparse @ dense and
adj.to_sparse() with torch.sparse.mm)."""
import numpy as np
import pytest
import scipy.sparse as sp

import tensorlib as tl

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks",
                                        "ignore:torch.sparse.SparseTensor")

N, FEATURES, HIDDEN, CLASSES, STEPS = 40, 12, 8, 3, 5


def _graph(seed=3):
    rng = np.random.default_rng(seed)
    rows, cols = rng.integers(0, N, 120), rng.integers(0, N, 120)
    adj = sp.coo_matrix((np.ones(120), (rows, cols)), shape=(N, N))
    adj = ((adj + adj.T) > 0).astype(np.float32)
    features = rng.standard_normal((N, FEATURES)).astype(np.float32)
    labels = rng.integers(0, CLASSES, N)
    weights = [rng.uniform(-0.3, 0.3, s).astype(np.float32) for s in
               ((FEATURES, HIDDEN), (HIDDEN,), (HIDDEN, CLASSES), (CLASSES,))]
    return sp.coo_matrix(adj), features, labels, weights


def _pygcn_adjacency(lib, adj):
    """pygcn/utils.py: row-normalise A + I, then sparse_mx_to_torch_sparse_tensor."""
    adj = adj + sp.eye(adj.shape[0])
    rowsum = np.array(adj.sum(1))
    r_inv = np.power(rowsum, -1).flatten()
    r_inv[np.isinf(r_inv)] = 0.0
    mx = sp.diags(r_inv).dot(adj).tocoo().astype(np.float32)
    indices = lib.from_numpy(np.vstack((mx.row, mx.col)).astype(np.int64))
    values = lib.from_numpy(mx.data)
    return lib.sparse.FloatTensor(indices, values, lib.Size(mx.shape))


def _examples_adjacency(lib, adj):
    """pytorch/examples gcn: D^-1/2 (A + I) D^-1/2 with a sparse degree matrix."""
    dense = lib.from_numpy(adj.toarray()) + lib.eye(adj.shape[0])
    degree = dense.sum(1)
    d_inv_sqrt = lib.diag(degree.pow(-0.5)).to_sparse()
    return (d_inv_sqrt @ (d_inv_sqrt @ dense).t()).t().to_sparse()


class _Model:
    """The two GraphConvolution layers, their parameters from the same numpy arrays."""

    def __init__(self, lib, weights, device, product):
        self.lib, self.product = lib, product
        self.params = [lib.nn.Parameter(lib.tensor(w, device=device)) for w in weights]

    def __call__(self, x, adj):
        lib, (w1, b1, w2, b2) = self.lib, self.params
        h = lib.relu(self.product(lib, adj, lib.mm(x, w1)) + b1)
        out = self.product(lib, adj, lib.mm(h, w2)) + b2
        return lib.nn.functional.log_softmax(out, dim=1)


PRODUCTS = {"spmm": lambda lib, a, x: lib.spmm(a, x),
            "sparse.mm": lambda lib, a, x: lib.sparse.mm(a, x),
            "at": lambda lib, a, x: a @ x}


def _train(lib, device, build, product):
    adj, features, labels, weights = _graph()
    adjacency = build(lib, adj).to(device)
    assert adjacency.is_sparse and isinstance(adjacency, lib.Tensor)
    x = lib.tensor(features, device=device)
    y = lib.tensor(labels, device=device)
    model = _Model(lib, weights, device, PRODUCTS[product])
    optimizer = lib.optim.Adam(model.params, lr=0.05, weight_decay=5e-4)
    losses = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = lib.nn.functional.nll_loss(model(x, adjacency)[:30], y[:30])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu().numpy() for p in model.params]


@pytest.mark.parametrize("build, product", [(_pygcn_adjacency, "spmm"),
                                            (_examples_adjacency, "sparse.mm"),
                                            (_examples_adjacency, "at")])
def test_gcn_trains_as_torch(build, product, device):
    ours, our_params = _train(tl, device, build, product)
    theirs, their_params = _train(torch, "cpu", build, product)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
    assert ours[-1] < ours[0]
    for a, b in zip(our_params, their_params):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)
