"""Ops pickle by reference to their public names, as PyTorch's functions do (a module that
holds an activation function, e.g. a GP kernel, goes through pickle.dumps/loads)."""
import pickle

import pytest

import tensorlib as tl

F = tl.nn.functional


@pytest.mark.parametrize("op", [tl.sigmoid, tl.exp, tl.tanh, tl.add, tl.zeros, F.sigmoid,
                                F.softplus, F.relu, F.gelu, tl.special.expit, tl.linalg.norm,
                                tl.Tensor.exp, tl.Tensor.sigmoid, tl.Tensor.add],
                         ids=lambda op: op.__name__)
def test_ops_round_trip_through_pickle_as_the_same_object(op):
    assert pickle.loads(pickle.dumps(op)) is op


class Holder:
    def __init__(self):
        self.activation = tl.exp
        self.weight = tl.ones(2)


def test_an_object_holding_an_op_pickles_and_still_computes():
    copy = pickle.loads(pickle.dumps(Holder()))
    assert copy.activation is tl.exp
    assert copy.activation(copy.weight).tolist() == tl.exp(tl.ones(2)).tolist()
