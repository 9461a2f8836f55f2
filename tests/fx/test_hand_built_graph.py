"""Proxies around the Nodes of a Graph built by hand (no symbolic trace): operators and
methods on them append Nodes to that Graph, through fx.proxy.GraphAppendingTracer or the
tracer a Proxy makes for itself when given none."""
import tensorlib
from tensorlib.fx import Graph, GraphModule, Proxy
from tensorlib.fx.proxy import GraphAppendingTracer


def test_operators_and_methods_on_hand_made_proxies_build_a_runnable_graph():
    graph = Graph()
    x = Proxy(graph.placeholder("x"), GraphAppendingTracer(graph))
    y = Proxy(graph.placeholder("y"))                 # no tracer given: one for its graph
    out = ((x + y) * 2).relu().sum(dim=0)
    graph.output(out.node)
    module = GraphModule(tensorlib.nn.Module(), graph)
    a = tensorlib.tensor([[1.0, -4.0], [2.0, 1.0]])
    b = tensorlib.tensor([[0.5, 1.0], [-3.0, 1.0]])
    assert module(a, b).tolist() == ((a + b) * 2).relu().sum(dim=0).tolist()
    assert [n.op for n in graph.nodes].count("call_function") == 2   # add, mul
    assert [n.op for n in graph.nodes].count("call_method") == 2     # relu, sum


def test_functions_called_on_hand_made_proxies_are_nodes_through_torch_function():
    """tensorlib.relu(proxy), F.leaky_relu(proxy), tensorlib.cat([proxy, proxy]) outside a
    trace: each one call_function node (F.leaky_relu one node, not the ops of its body)."""
    F = tensorlib.nn.functional
    graph = Graph()
    x = Proxy(graph.placeholder("x"))
    y = tensorlib.cat([tensorlib.relu(x), F.leaky_relu(x, 0.1)], dim=0)
    z = tensorlib.where(y > 0, y, 0.0)
    graph.output(z.node)
    targets = [n.target for n in graph.nodes if n.op == "call_function"]
    assert targets[:3] == [tensorlib.relu, F.leaky_relu, tensorlib.cat]
    assert tensorlib.where in targets
    module = GraphModule(tensorlib.nn.Module(), graph)
    a = tensorlib.tensor([-2.0, 3.0])
    want = tensorlib.cat([a.relu(), F.leaky_relu(a, 0.1)])
    assert module(a).tolist() == tensorlib.where(want > 0, want, 0.0).tolist()


def test_a_module_called_on_proxies_inlines_into_a_traced_graph():
    """Swap a traced call_module node for the module's own functions, called on Proxies of
    the node's arguments (the inlining recipe of PyTorch's fx examples)."""
    class Net(tensorlib.nn.Module):
        def __init__(self):
            super().__init__()
            self.act = tensorlib.nn.LeakyReLU(0.2)

        def forward(self, x):
            return self.act(x) * 3.0

    traced = tensorlib.fx.symbolic_trace(Net())
    tracer = GraphAppendingTracer(traced.graph)
    (node,) = [n for n in traced.graph.nodes if n.op == "call_module"]
    with traced.graph.inserting_before(node):
        inlined = traced.act(*[Proxy(a, tracer) for a in node.args])
    node.replace_all_uses_with(inlined.node)
    traced.graph.erase_node(node)
    traced.recompile()
    assert "call_module" not in [n.op for n in traced.graph.nodes]
    a = tensorlib.tensor([-1.0, 2.0])
    assert traced(a).tolist() == Net()(a).tolist()
