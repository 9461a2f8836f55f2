"""The machinery of nn.Module's full backward hooks (register_full_backward_hook and its pre
hook): the module's tensor inputs and outputs are routed through an identity autograd Function
whose nodes carry the hooks."""
import warnings

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.autograd.function import Function


# NOTE [ Full backward hooks ]
# A module's backward hooks see the gradients with respect to its tensor inputs and outputs.
# As in PyTorch (torch/utils/hooks.py::BackwardHook), the tensors that require grad are routed
# through an identity autograd Function on the way in and on the way out. The output node's
# pre-hook receives grad_output (and runs the backward pre-hooks, which may replace it); the
# input node's post-hook receives grad_input and runs the backward hooks, which may replace
# grad_input. When no input requires grad the backward hooks run from the output node with
# grad_input all None.

class _BackwardHookFunction(Function):
    @staticmethod
    def forward(ctx, *tensors):
        ctx.set_materialize_grads(False)
        outs = tuple(t.view_as(t) for t in tensors)
        return outs

    @staticmethod
    def backward(ctx, *grads):
        return grads


class _BackwardHook:
    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_positions = None

    def _apply(self, values, on_grads):
        """Route the tensors requiring grad in `values` (a tuple) through the identity
        Function; on_grads is registered on its node. Returns the new tuple and the positions
        that were routed."""
        positions = [i for i, v in enumerate(values)
                     if isinstance(v, TensorImpl) and v._requires_grad]
        if not positions or not tensorlib.is_grad_enabled():
            return values, None
        routed = _BackwardHookFunction.apply(*(values[i] for i in positions))
        node = routed[0]._grad_fn
        on_grads(node, positions)
        out = list(values)
        for i, r in zip(positions, routed):
            out[i] = r
        return tuple(out), positions

    def _pack(self, grads, positions, n):
        full = [None] * n
        for i, g in zip(positions, grads):
            full[i] = g
        return tuple(full)

    def setup_input_hook(self, args):
        self.n_inputs = len(args)

        def on_node(node, positions):
            def hook(grad_inputs, grad_outputs):
                grad_input = self._pack(grad_inputs, positions, self.n_inputs)
                result = self._run_hooks(grad_input)
                if result is None:
                    return None
                return tuple(result[i] for i in positions)
            node.register_hook(hook)
        new_args, self.input_positions = self._apply(tuple(args), on_node)
        return new_args

    def _run_hooks(self, grad_input):
        changed = None
        for hook in self.user_hooks:
            out = hook(self.module, grad_input, self.grad_outputs)
            if out is None:
                continue
            out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            if len(out) != len(grad_input):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(grad_input)}")
            grad_input = changed = out
        return changed

    def setup_output_hook(self, result):
        single = isinstance(result, TensorImpl)
        values = (result,) if single else result
        if not isinstance(values, tuple):
            return result

        def on_node(node, positions):
            def pre_hook(grads):
                n = len(values)
                grad_output = self._pack(grads, positions, n)
                for hook in self.user_pre_hooks:
                    out = hook(self.module, grad_output)
                    if out is None:
                        continue
                    out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
                    if len(out) != n:
                        raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                           f"grad_output, got {len(out)}, but expected {n}")
                    grad_output = out
                self.grad_outputs = grad_output
                if self.input_positions is None and self.user_hooks:
                    warnings.warn("Full backward hook is firing when gradients are computed "
                                  "with respect to module outputs since no inputs require "
                                  "gradients. See the documentation of "
                                  "Module.register_full_backward_hook for more details.",
                                  stacklevel=5)
                    self._run_hooks((None,) * self.n_inputs)
                return tuple(grad_output[i] for i in positions)
            node.register_prehook(pre_hook)
        new, _ = self._apply(values, on_node)
        return new[0] if single else new
