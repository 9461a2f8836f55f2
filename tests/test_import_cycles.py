"""No module-level import circle of tensorlib spans more than one layer (issue #33).

The graph: one node per module of the package, an arrow for each import that runs when the
module is imported (module level, also inside `if`/`try`/class bodies; not inside functions).
`from a import b` points at the module a.b when there is one, else at a. A bare
`import tensorlib` is no arrow: it binds the package object, whose names are looked up when a
function runs, not at import. Strongly connected components of the graph are the circles;
each member's layer is the first part of its name below tensorlib (see LAYERS), others are
outside the layering."""
import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1] / "tensorlib"

# core < ops < autograd formulas < nn/optim/utils < compile/fx/export (docs/layout.md)
LAYERS = {"_C": 0, "_tensor": 0, "ops": 1, "autograd": 2, "nn": 3, "optim": 3, "utils": 3,
          "compiler": 4, "fx": 4, "export": 4, "jit": 4}


def _module_name(path):
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _import_time_nodes(tree):
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        else:
            stack.extend(ast.iter_child_nodes(node))


def import_graph(modules):
    """{module: set of modules it imports at import time}; modules: {name: source}."""
    def resolve(name):
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, (source, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        targets = set()
        for node in _import_time_nodes(ast.parse(source)):
            if isinstance(node, ast.Import):
                targets.update(resolve(a.name) for a in node.names if a.name != "tensorlib")
                continue
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([node.module] if node.module else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                targets.add(sub if sub in modules else resolve(base))
        targets.discard(None)
        targets.discard(name)
        graph[name] = targets
    return graph


def circles(graph):
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.add(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def layer(module):
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


def _package_modules():
    return {_module_name(p): (p.read_text(), p.name == "__init__.py")
            for p in ROOT.rglob("*.py")}


def test_no_import_circle_spans_layers():
    spanning = [sorted(c) for c in circles(import_graph(_package_modules()))
                if len({layer(m) for m in c} - {None}) > 1]
    assert spanning == [], f"import circles across layers (break with a hook or a move): " \
                           f"{spanning}"


def test_circle_finder_sees_a_circle_across_layers():
    modules = {
        "tensorlib.ops.a": ("from tensorlib.autograd import b\n", False),
        "tensorlib.autograd": ("", True),
        "tensorlib.autograd.b": ("import tensorlib\nif True:\n    import tensorlib.ops.a\n",
                                 False),
        "tensorlib.nn.c": ("def f():\n    import tensorlib.ops.a\n", False),
    }
    graph = import_graph(modules)
    assert graph["tensorlib.autograd.b"] == {"tensorlib.ops.a"}      # bare facade: no arrow
    assert graph["tensorlib.nn.c"] == set()                           # call time: no arrow
    assert circles(graph) == [frozenset({"tensorlib.ops.a", "tensorlib.autograd.b"})]
    assert {layer(m) for m in circles(graph)[0]} == {1, 2}


def test_circle_finder_handles_deep_chains():
    """Iterative, so a long chain does not hit the recursion limit."""
    n = sys.getrecursionlimit() + 10
    graph = {f"m{i}": {f"m{(i + 1) % n}"} for i in range(n)}
    assert circles(graph) == [frozenset(graph)]

