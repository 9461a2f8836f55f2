"""The other spellings of a fuzzed op: torch reaches one op under several public names (the
function `torch.abs`, the method `Tensor.abs`, the in-place `Tensor.abs_` and `torch.abs_`,
aliases such as `torch.absolute`, the top-level copies of nn functionals such as
`torch.relu`). A fuzz entry runs its primary name on every example and each other spelling
on a few (test_fuzz_spellings), so that every public name is checked without an entry of
its own. A spelling is a path: "abs", "linalg.det", "Tensor.abs", "Tensor.abs_"."""
import pytest

import tensorlib

torch = pytest.importorskip("torch")

# aliases that are not a name plus "_" or a namespace move (torch's own alias list)
ALIASES = {
    "abs": ("absolute",), "acos": ("arccos",), "asin": ("arcsin",), "atan": ("arctan",),
    "atan2": ("arctan2",), "clamp": ("clip",), "cat": ("concat", "concatenate"),
    "div": ("divide", "true_divide"), "mul": ("multiply",), "sub": ("subtract",),
    "neg": ("negative",), "trunc": ("fix",), "ne": ("not_equal",), "gt": ("greater",),
    "ge": ("greater_equal",), "lt": ("less",), "le": ("less_equal",), "movedim": ("moveaxis",),
    "transpose": ("swapaxes", "swapdims"), "vstack": ("row_stack",), "outer": ("ger",),
    "inverse": ("linalg.inv",), "digamma": ("special.psi", "special.digamma"),
    "sigmoid": ("special.expit", "nn.functional.sigmoid"), "erf": ("special.erf",),
    "erfc": ("special.erfc",), "erfinv": ("special.erfinv",), "exp2": ("special.exp2",),
    "expm1": ("special.expm1",), "log1p": ("special.log1p",), "i0": ("special.i0",),
    "lgamma": ("special.gammaln",), "logit": ("special.logit",), "round": ("special.round",),
    "sinc": ("special.sinc",), "xlogy": ("special.xlogy",), "tanh": ("nn.functional.tanh",),
    "logsumexp": ("special.logsumexp",), "polygamma": ("special.polygamma",),
    "mvlgamma": ("special.multigammaln",), "softmax": ("special.softmax",),
    "log_softmax": ("special.log_softmax",), "det": ("linalg.det",),
    "slogdet": ("linalg.slogdet",), "matrix_power": ("linalg.matrix_power",),
    "pinverse": ("linalg.pinv",), "matmul": ("linalg.matmul",),
    "split": ("split_with_sizes",), "inv": ("inverse",), "pinv": ("pinverse",),
    "acosh": ("arccosh",), "asinh": ("arcsinh",), "atanh": ("arctanh",),
}
_NAMESPACES = ("nn.functional.", "linalg.", "special.", "fft.")
# names whose copies in other namespaces take other arguments (torch.dropout(input, p,
# train) against F.dropout(input, p, training); torch.norm's p against linalg.norm's ord;
# torch.svd/qr/cholesky/cross against linalg's; the nn natives below): not spellings of one
# another
_OWN_SIGNATURES = {"dropout", "alpha_dropout", "feature_alpha_dropout", "norm", "svd", "qr",
                   "cholesky", "cross", "unfold", "where",
                   # torch.lu gives lu_factor's (LU, pivots); torch.lu_solve takes (b, LU, pivots)
                   "lu", "lu_solve",
                   # torch.matrix_rank was removed: it raises, pointing to linalg.matrix_rank
                   "matrix_rank",
                   # torch's natives: int reductions, weight first, running stats first
                   "batch_norm", "binary_cross_entropy_with_logits", "cosine_embedding_loss",
                   "ctc_loss", "embedding", "embedding_bag", "hinge_embedding_loss",
                   "instance_norm", "kl_div",
                   "margin_ranking_loss", "poisson_nll_loss", "triplet_margin_loss"}


def _resolve(module, path):
    for part in path.split("."):
        module = getattr(module, part)
    return module


def exists(path):
    """Whether both libraries have `path` ("Tensor.x": a method). A name only torch has is
    missing from tensorlib, not a spelling of something it has (the coverage test's rule)."""
    try:
        ours, theirs = _resolve(tensorlib, path), _resolve(torch, path)
    except AttributeError:
        return False
    return all(callable(f) and not isinstance(f, type) for f in (ours, theirs))


def _base(name):
    for prefix in _NAMESPACES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name.split(".")[-1]


def of(name, method=True):
    """name's other spellings that torch has (name itself left out). `method`: the first
    argument is a tensor, so the method and in-place forms apply."""
    base = _base(name)
    own = base in _OWN_SIGNATURES
    namespaced = name != base and not name.startswith("Tensor.")
    candidates = [] if own else [base] + [p + base for p in _NAMESPACES]
    if method and not (own and namespaced):
        candidates += ["Tensor." + base, "Tensor." + base + "_", base + "_",
                       "nn.functional." + base + "_"]
    for alias in ALIASES.get(base, ()):
        candidates.append(alias)
        alias_base = _base(alias)
        if method and "." not in alias:
            candidates += ["Tensor." + alias_base, "Tensor." + alias_base + "_", alias + "_"]
    seen, result = {name}, []
    for path in candidates:
        if path not in seen and exists(path):
            seen.add(path)
            result.append(path)
    return result


def is_inplace(path):
    return path.endswith("_") and not path.endswith("__")


def call(path):
    """call(module, args, kwargs) for a spelling. A method or in-place spelling needs a
    tensor first argument; an in-place call returns (its result, the written tensor, whether
    it returned that tensor)."""
    method = path.startswith("Tensor.")
    name = path[len("Tensor."):] if method else path

    def run(m, args, kwargs):
        fn = getattr(args[0], name) if method else _resolve(m, name)
        rest = args[1:] if method else args
        result = fn(*rest, **kwargs)
        if is_inplace(path):
            return result, args[0], result is args[0]
        return result
    return run
