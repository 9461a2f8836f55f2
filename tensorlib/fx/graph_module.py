"""fx.GraphModule: a Module whose forward is generated from its Graph (readable Python in
`.code`), holding the submodules, parameters and buffers the graph refers to."""
import linecache

from tensorlib.nn.modules.module import Module

_count = [0]


def _get_path(root, path):
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _set_path(gm, path, value):
    *parents, last = path.split(".")
    obj = gm
    for p in parents:
        child = obj._modules.get(p) if isinstance(obj, Module) else None
        if child is None:
            child = Module()
            setattr(obj, p, child)
        obj = child
    setattr(obj, last, value)


class GraphModule(Module):
    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self._class_name = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("call_module", "get_attr"):
                    _set_path(self, node.target, _get_path(root, node.target))
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("call_module", "get_attr"):
                    _set_path(self, node.target, root[node.target])
        else:
            raise RuntimeError(f"GraphModule: root must be a Module or a dict, not "
                               f"{type(root).__name__}")
        self.graph = graph

    @property
    def graph(self):
        return self.__dict__["_graph"]

    @graph.setter
    def graph(self, g):
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        return self.__dict__["_code"]

    def recompile(self):
        """Regenerate forward from the graph (after editing it)."""
        src, globals_ = self.graph.python_code("self")
        _count[0] += 1
        filename = f"<eval_with_key>.{_count[0]}"
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        namespace = dict(globals_)
        exec(compile(src, filename, "exec"), namespace)
        self.__dict__["_code"] = src
        self.__dict__["forward"] = namespace["forward"].__get__(self)
        return src

    def print_readable(self, print_output=True):
        text = (f"class {self._class_name}(tensorlib.nn.Module):\n"
                + "".join(f"    {line}\n" for line in self.code.splitlines()))
        if print_output:
            print(text)
        return text

    def __str__(self):
        return f"{super().__str__()}\n\n\n{self.code}"

    def _get_name(self):
        return self._class_name
