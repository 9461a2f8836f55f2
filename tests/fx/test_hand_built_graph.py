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
