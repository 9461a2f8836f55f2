"""The exported program's names and signature structure against torch.export's."""
import pytest

import tensorlib as tl


def _torch_models(torch):
    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(6, 8)
            self.fc2 = torch.nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(torch.nn.functional.relu(self.fc1(x)))

    class CNN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
            self.bn = torch.nn.BatchNorm2d(4)
            self.pool = torch.nn.MaxPool2d(2)
            self.fc = torch.nn.Linear(4 * 4 * 4, 5)

        def forward(self, x):
            y = self.pool(torch.nn.functional.relu(self.bn(self.conv(x))))
            return self.fc(y.view(y.size(0), -1))
    return MLP, CNN


def _structure(sig):
    return [(s.kind.name, s.arg.name, s.target, s.persistent) for s in sig.input_specs]


@pytest.mark.parametrize("which", ["mlp", "cnn"])
def test_input_specs_match_torch(which):
    torch = pytest.importorskip("torch")
    from tests.export.models import MLP, cnn_eval
    t_mlp, t_cnn = _torch_models(torch)
    if which == "mlp":
        ours, theirs, shape = MLP(), t_mlp(), (2, 6)
    else:
        ours, theirs, shape = cnn_eval(), t_cnn().eval(), (2, 3, 8, 8)
    ep = tl.export.export(ours, (tl.randn(*shape),))
    tep = torch.export.export(theirs, (torch.randn(*shape),))
    assert _structure(ep.graph_signature) == _structure(tep.graph_signature)
    assert ep.graph_signature.parameters == tuple(tep.graph_signature.parameters)
    assert ep.graph_signature.buffers == tuple(tep.graph_signature.buffers)
    assert ep.graph_signature.user_inputs == tuple(tep.graph_signature.user_inputs)
    assert len(ep.graph_signature.user_outputs) == len(tep.graph_signature.user_outputs)
    assert list(ep.state_dict) == list(tep.state_dict)
    assert list(ep.module().state_dict()) == list(tep.module().state_dict())


def test_errors_match_torch_types():
    torch = pytest.importorskip("torch")
    _, t_cnn = _torch_models(torch)
    tep = torch.export.export(t_cnn().eval(), (torch.randn(2, 3, 8, 8),),
                              dynamic_shapes={"x": {0: torch.export.Dim("b", max=8)}})
    from tests.export.models import cnn_eval
    ep = tl.export.export(cnn_eval(), (tl.randn(2, 3, 8, 8),),
                          dynamic_shapes={"x": {0: tl.export.Dim("b", max=8)}})
    for call, x in ((tep, torch.randn(9, 3, 8, 8)), (ep, tl.randn(9, 3, 8, 8))):
        with pytest.raises(AssertionError, match=r"x.size\(\)\[0\] <= 8"):
            call.module()(x)
    for program in (tep, ep):
        with pytest.raises(RuntimeError, match="Unable to call ExportedProgram directly"):
            program(None)
