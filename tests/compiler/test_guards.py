"""The guards' fingerprint (tensorlib/compiler/guards.py, walked by the Cython `_walk`): the
same state gives the same key, each kind of change gives another, and states it cannot walk
(nested past its depth bound) are not replayed but still give eager's results."""
import tensorlib as tl
import tensorlib.nn as nn
from tensorlib.compiler import guards


def _key(fn, module=None):
    return guards.fingerprint(guards.roots_of(fn, module)).key


def test_the_same_state_gives_the_same_key_and_each_change_another():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = tl.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    keys = [_key(model.__call__, model), _key(opt.step)]
    assert keys == [_key(model.__call__, model), _key(opt.step)]
    model.train(False)                          # a flag in a child's __dict__
    assert _key(model.__call__, model) != keys[0]
    model.train(True)
    assert _key(model.__call__, model) == keys[0]
    opt.param_groups[0]["lr"] = 0.05            # a hyperparameter
    assert _key(opt.step) != keys[1]
    opt.param_groups[0]["lr"] = 0.1
    model[0].weight.grad = tl.zeros(4, 3)       # a .grad appears
    assert _key(opt.step) != keys[1]
    old = model[2].weight
    model[2].weight = nn.Parameter(old.detach().clone())    # another parameter, same layout
    assert _key(model.__call__, model) != keys[0]


def test_the_fingerprint_lists_tensors_grads_and_devices():
    lin = nn.Linear(2, 2)
    lin.weight.grad = tl.ones(2, 2)
    fp = guards.fingerprint(guards.roots_of(lin.__call__, lin))
    assert id(lin.weight) in fp.tensors and id(lin.bias) in fp.tensors
    assert fp.grads_of[id(lin.weight.grad._storage)] is lin.weight
    assert [d.type for d in fp.devices] == ["cpu"]


def test_a_state_nested_past_the_depth_bound_runs_through_the_capture():
    deep = []
    for _ in range(3000):
        deep = [deep]

    def f(x):
        return x * 2 + len(deep)
    g = tl.compile(f)
    assert guards.fingerprint(guards.roots_of(f, None)) is None
    x = tl.arange(4.0)
    for _ in range(4):
        assert g(x).tolist() == f(x).tolist()
    assert g.replayed_calls == 0


def test_a_bound_plain_object_is_walked():
    class Scaler:
        def __init__(self):
            self.factor = 2.0

        def __call__(self, x):
            return x * self.factor
    s = Scaler()
    before = _key(s.__call__)
    s.factor = 3.0
    assert _key(s.__call__) != before
    g = tl.compile(s.__call__)
    x = tl.ones(3)
    for _ in range(4):
        assert g(x).tolist() == [3.0] * 3
    s.factor = 5.0
    assert g(x).tolist() == [5.0] * 3


SCALE = 2.0


def test_a_guard_reuses_its_fingerprint_until_anything_walked_changes():
    import collections
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = tl.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    table = collections.OrderedDict(a=1, b=2)
    box = [1.0]

    def f(x):
        return model(x) * SCALE * box[0] + len(table)
    guard = guards.Guard(guards.roots_of(f, None))
    opt_guard = guards.Guard(guards.roots_of(opt.step, None))

    def check(g, changed):
        before = g._last
        got = g.fingerprint()
        assert got.key == guards.fingerprint(g.sources).key       # always a walk's key
        assert (got.key is not before.key) == changed
        assert g.fingerprint().key is got.key                     # unchanged: reused

    guard.fingerprint()
    opt_guard.fingerprint()
    check(guard, False)
    model.train(False)                              # a flag: a dict's version
    check(guard, True)
    box[0] = 3.0                                    # a list item
    check(guard, True)
    table.move_to_end("a")                          # an OrderedDict's order
    check(guard, True)
    model[0].register_forward_hook(lambda *a: None)  # an empty hook dict fills
    check(guard, True)
    model[2].weight.grad = tl.zeros(2, 4)           # a .grad appears
    check(guard, True)
    model[2].weight.grad = tl.ones(2, 4)            # another .grad, same layout: same key
    check(guard, False)
    model[2].weight.data = tl.zeros(2, 4)           # a parameter's storage
    check(guard, True)
    global SCALE
    SCALE = 4.0                                     # a rebound global
    try:
        check(guard, True)
    finally:
        SCALE = 2.0
    check(guard, True)
    opt.param_groups[0]["lr"] = 0.05                # a hyperparameter in a list of dicts
    check(opt_guard, True)
    opt.state[model[0].weight]["momentum_buffer"] = tl.zeros(4, 3)   # optimizer state
    check(opt_guard, True)
    check(opt_guard, False)


def test_a_changed_closure_cell_is_seen():
    factor = 2.0

    def f(x):
        return x * factor
    guard = guards.Guard(guards.roots_of(f, None))
    first = guard.fingerprint().key
    assert guard.fingerprint().key is first
    factor = 3.0                                    # noqa: F841 - read by f through its cell
    assert guard.fingerprint().key != first
