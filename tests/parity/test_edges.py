"""The edge cases of issue 13, each run through tensorlib and torch: the same exception class,
or the same shape, dtype and values. After an exception the library keeps working."""
import pytest

import tensorlib

torch = pytest.importorskip("torch")

_SIGNED = [1.0, -float("nan"), float("nan"), -0.0, 0.0, -2.5, float("-inf")]
CASES = {
    "signbit_negative_nan_float32": lambda m: m.signbit(m.tensor(_SIGNED)),
    "signbit_negative_nan_float64": lambda m: m.signbit(m.tensor(_SIGNED, dtype=m.float64)),
    "signbit_negative_nan_float16": lambda m: m.signbit(m.tensor(_SIGNED, dtype=m.float16)),
    "view_dtype_same_size": lambda m: m.tensor(_SIGNED).view(m.int32),
    "view_dtype_by_keyword": lambda m: m.tensor(_SIGNED).view(dtype=m.int32),
    "view_size_by_keyword": lambda m: m.arange(6).view(size=(3, 2)),
    "view_dtype_smaller": lambda m: m.arange(6, dtype=m.float32).reshape(2, 3).view(m.int16),
    "view_dtype_larger": lambda m: m.arange(8, dtype=m.int32).reshape(2, 4)[:, 2:].view(
        m.float64),
    "view_dtype_larger_odd_size": lambda m: m.arange(6, dtype=m.int32).reshape(2, 3).view(
        m.int64),
    "view_dtype_larger_odd_offset": lambda m: m.arange(6, dtype=m.int32)[1:5].view(m.int64),
    "view_dtype_stride_not_1": lambda m: m.arange(6, dtype=m.int32).reshape(2, 3).t().view(
        m.int8),
    "view_dtype_0d_other_size": lambda m: m.tensor(1.0).view(m.float64),
    "view_dtype_0d_same_size": lambda m: m.tensor(1.0).view(m.int32),
    "add_alpha_number": lambda m: m.add(m.tensor([1.0, 2.0]), 3, alpha=2),
    "sub_alpha_number": lambda m: m.sub(m.tensor([1.0, 2.0]), 3, alpha=2),
    "add_alpha_method_int": lambda m: m.tensor([1, 2]).add(3, alpha=2),
    "add_alpha_inplace": lambda m: m.tensor([1.0, 2.0]).add_(3, alpha=-1),
    "sub_alpha_tensor": lambda m: m.tensor([1.0, 2.0]).sub(m.tensor([1.0, 1.0]), alpha=0.5),
    "integral_float_alpha": lambda m: m.add(m.tensor([1, 2]), m.tensor([1, 2]), alpha=0.5),
    "bool_alpha_int": lambda m: m.add(m.tensor([1]), 2, alpha=True),
    "bool_sub": lambda m: m.tensor([True]) - m.tensor([False]),
    "bool_sub_number": lambda m: m.sub(m.tensor([True]), True),
    "sign_bool": lambda m: m.sign(m.tensor([True, False])),
    "argmax_bool": lambda m: m.argmax(m.tensor([True, False])),
    "argmin_bool_dim": lambda m: m.tensor([[True, False]]).argmin(1),
    "floordiv_zero": lambda m: m.tensor([1, 2]) // m.tensor([0, 1]),
    "remainder_zero": lambda m: m.tensor([1, 2]) % m.tensor([0, 1]),
    "remainder_zero_number": lambda m: m.tensor([1, 2]) % 0,
    "fmod_zero": lambda m: m.fmod(m.tensor([1, 2]), 0),
    "div_floor_zero": lambda m: m.div(m.tensor([1, 2]), m.tensor([0, 1]), rounding_mode="floor"),
    "div_trunc_zero": lambda m: m.div(m.tensor([1, 2]), 0, rounding_mode="trunc"),
    "div_trunc_ints": lambda m: m.div(m.tensor([7, -7, 2**62 + 1]), m.tensor([2, 2, 3]),
                                      rounding_mode="trunc"),
    "uint8_floordiv_zero": lambda m: m.tensor([1], dtype=m.uint8) // 0,
    "float_div_zero": lambda m: m.tensor([1, 0]) / 0,
    "int_negative_power": lambda m: m.tensor([1, 2]) ** -1,
    "int_negative_power_tensor": lambda m: m.pow(m.tensor([1, 2, 0, -1, -1, -2]),
                                                 m.tensor([-1, -1, -1, -3, -2, -1])),
    "number_base_negative_power": lambda m: m.pow(2, m.tensor([-1, 1, 3])),
    "int8_power": lambda m: m.pow(m.tensor([3, -2], dtype=m.int8), m.tensor([2, 3])),
    "amax_empty": lambda m: m.amax(m.zeros(0)),
    "max_empty": lambda m: m.zeros(0).max(),
    "min_empty_2d": lambda m: m.zeros(0, 3).min(),
    "amin_empty": lambda m: m.zeros(0).amin(),
    "amax_empty_other_dim": lambda m: m.zeros(0, 3).amax(1),
    "amax_empty_reduced_dim": lambda m: m.zeros(0, 3).amax(0),
    "sum_empty_dim": lambda m: m.zeros(0, 3).sum(0),
    "repeated_dim": lambda m: m.ones(2, 3).sum((0, 0)),
    "repeated_dim_negative": lambda m: m.ones(2, 3).sum((1, -1)),
    "amax_repeated_dim": lambda m: m.ones(2, 3).amax((1, -1)),
    "zero_dim_dim_1": lambda m: m.tensor(1.0).sum(1),
    "zero_dim_dim_0": lambda m: m.tensor(1.0).sum(0),
    "zero_dim_dim_minus_1": lambda m: m.tensor(1.0).mean(-1),
    "zero_dim_amax_dim_1": lambda m: m.tensor(1.0).amax(1),
    "zero_dim_repeated": lambda m: m.tensor(1.0).sum((0, 0)),
    "gather_empty": lambda m: m.gather(m.zeros(0, 3), 0, m.zeros(0, 3, dtype=m.int64)),
    "gather_empty_index": lambda m: m.gather(m.ones(2, 3), 1, m.zeros(2, 0, dtype=m.int64)),
    "index_select_empty": lambda m: m.index_select(m.ones(2, 3), 0, m.zeros(0, dtype=m.int64)),
    "index_select_empty_src": lambda m: m.index_select(m.ones(0, 3), 1, m.tensor([0, 2])),
    "advanced_index_empty": lambda m: m.ones(2, 3)[m.zeros(0, dtype=m.int64)],
    "advanced_index_empty_src": lambda m: m.ones(0, 3)[:, m.tensor([0, 1])],
    "bool_mask_empty": lambda m: m.ones(0, 3)[m.zeros(0, 3, dtype=m.bool)],
    "masked_fill_empty": lambda m: m.ones(0, 3).masked_fill(m.zeros(0, 3, dtype=m.bool), 1.0),
    "cat_empty": lambda m: m.cat([m.ones(0, 3), m.ones(2, 3)]),
    "cat_legacy_1d_empty": lambda m: m.cat([m.ones(0), m.ones(2, 3)]),
    "stack_empty": lambda m: m.stack([m.ones(0, 3), m.ones(0, 3)]),
    "matmul_empty_inner": lambda m: m.ones(2, 0) @ m.ones(0, 3),
    "matmul_empty_rows": lambda m: m.ones(0, 2) @ m.ones(2, 3),
    "bmm_empty_batch": lambda m: m.bmm(m.ones(0, 2, 3), m.ones(0, 3, 4)),
    "matmul_empty_batch": lambda m: m.ones(0, 2, 3) @ m.ones(3, 4),
    "mv_empty": lambda m: m.mv(m.ones(0, 3), m.ones(3)),
    "int64_overflow": lambda m: m.tensor([2**63]),
    "int64_overflow_0d": lambda m: m.tensor(-(2**63) - 1),
    "int64_fill_overflow": lambda m: m.zeros(2, dtype=m.int64).fill_(2**63),
    "int8_fill_overflow": lambda m: m.zeros(2, dtype=m.int8).fill_(300),
    "uint8_negative_wraps": lambda m: m.tensor([-1, 3], dtype=m.uint8),
    "int8_overflow": lambda m: m.tensor([300], dtype=m.int8),
    "int64_add_big_number": lambda m: m.tensor([1]) + 2**62,
    "squeeze_out_of_range": lambda m: m.ones(2, 1).squeeze(2),
    "squeeze_zero_dim": lambda m: m.tensor(1.0).squeeze(0),
    "squeeze_zero_dim_negative": lambda m: m.tensor(1.0).squeeze(-1),
    "squeeze_zero_dim_1": lambda m: m.tensor(1.0).squeeze(1),
    "squeeze_dims_tuple": lambda m: m.ones(2, 1, 1).squeeze((1, 2)),
    "unsqueeze_out_of_range": lambda m: m.ones(2).unsqueeze(3),
    "unsqueeze_last": lambda m: m.ones(2).unsqueeze(2),
    "unsqueeze_negative": lambda m: m.ones(2).unsqueeze(-2),
    "unsqueeze_negative_out": lambda m: m.ones(2).unsqueeze(-3),
    "unsqueeze_zero_dim": lambda m: m.tensor(1.0).unsqueeze(-1),
    "where_method": lambda m: m.tensor([1.0, 2.0]).where(m.tensor([True, False]),
                                                        m.tensor([0.0, 0.0])),
    "where_method_number": lambda m: m.tensor([1.0, 2.0]).where(m.tensor([True, False]), 0.0),
    "where_condition_only": lambda m: m.where(m.tensor([[True, False], [False, True]])),
    "where_numbers": lambda m: m.where(m.tensor([True, False]), 1.0, 0),
}


def _run(module, fn):
    try:
        out = fn(module)
    except Exception as exc:  # noqa: BLE001 - the class is what is compared
        return "raises", type(exc)
    outs = out if isinstance(out, tuple) else (out,)
    return "returns", [(tuple(o.shape), str(o.dtype).split(".")[-1], repr(o.tolist()))
                       for o in outs]         # repr: nan equals nan


@pytest.mark.parametrize("name", sorted(CASES))
def test_edge_matches_torch(name):
    ours, ref = _run(tensorlib, CASES[name]), _run(torch, CASES[name])
    assert ours == ref
    assert (tensorlib.ones(2) + 1).tolist() == [2.0, 2.0]      # still working afterwards


@pytest.mark.parametrize("make_z", [lambda y: y * 3, lambda y: 3 * y, lambda y: y / 4,
                                    lambda y: y * tensorlib.tensor(3.0), lambda y: y.mul(2)],
                         ids=["mul_number", "rmul_number", "div_number", "mul_constant_tensor",
                              "mul_method"])
def test_number_operand_saves_nothing(make_z):
    """y * 3 saves nothing of y (only the other operand's gradient would read it), so an
    in-place write into y afterwards is legal, as in PyTorch."""
    x = tensorlib.ones(3, requires_grad=True)
    y = x * 1
    z = make_z(y)
    y.add_(1)
    z.sum().backward()
    expected = make_z(tensorlib.ones(3)).tolist()
    assert x.grad.tolist() == pytest.approx(expected)


def test_saved_when_the_other_gradient_needs_it():
    x = tensorlib.ones(3, requires_grad=True)
    w = tensorlib.ones(3, requires_grad=True)
    y = x * 1
    z = y * w
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
