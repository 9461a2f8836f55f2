r"""L-BFGS (torch.optim.LBFGS), with PyTorch's optional strong-Wolfe line search.

The scalars of the update are 0-d tensors where PyTorch's are (``ys``, ``H_diag``, ``ro``,
``al``, the directional derivatives, the first step length): as in PyTorch they are computed
in the parameters' dtype, stay on their device, and are saved by `state_dict` as tensors that
`load_state_dict` casts and moves with the parameters."""
import tensorlib
from tensorlib.optim._validation import check_hyperparameters
from tensorlib.optim.optimizer import Optimizer, _to_scalar

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2,
    clamped to `bounds` (default: [x1, x2] in order); their midpoint when the cubic has
    none (minFunc's polyinterp)."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if not d2_square >= 0:   # (NaN included)
        return (lo + hi) / 2.0
    d2 = d2_square.sqrt()
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, lo), hi)


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    r"""Find a step `t` along `d` from `x` that meets the strong Wolfe conditions
    (sufficient decrease, :math:`|g_t^\top d| \le -c_2 g^\top d`), with at most `max_ls`
    evaluations after the first: first bracket such a step, extrapolating by cubic
    interpolation, then zoom into the bracket (minFunc's WolfeLineSearch). Returns the
    loss, flat gradient and step of the best point found, and the evaluations made.

    Each bracket end is a point ``[t, f, g, gtd]``."""
    d_norm = d.abs().max()
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    prev = [0, f, g, gtd]
    ls_iter = 0
    bracket = None
    while ls_iter < max_ls:
        new = [t, f_new, g_new, gtd_new]
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= prev[1]):
            bracket = [prev, new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            return f_new, g_new, t, evals
        if gtd_new >= 0:
            bracket = [prev, new]
            break
        # no bracket yet: extrapolate past t, to at most ten times as far
        t = _cubic_interpolate(prev[0], prev[1], prev[3], t, f_new, gtd_new,
                               bounds=(t + 0.01 * (t - prev[0]), t * 10))
        prev = new
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if bracket is None:   # out of evaluations: the better of the start and the last trial
        bracket = [[0, f, g, gtd], [t, f_new, g_new, gtd_new]]

    low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
    insuf_progress = False
    while ls_iter < max_ls:
        if abs(bracket[1][0] - bracket[0][0]) * d_norm < tolerance_change:
            break
        lo_t, hi_t = min(bracket[0][0], bracket[1][0]), max(bracket[0][0], bracket[1][0])
        t = _cubic_interpolate(bracket[0][0], bracket[0][1], bracket[0][3],
                               bracket[1][0], bracket[1][1], bracket[1][3])
        # a trial within 10% of an end makes little progress; the second time in a row, or
        # when it lands on (or past) an end, move it 10% of the bracket inside instead
        eps = 0.1 * (hi_t - lo_t)
        if min(hi_t - t, t - lo_t) < eps:
            if insuf_progress or t >= hi_t or t <= lo_t:
                t = hi_t - eps if abs(t - hi_t) < abs(t - lo_t) else lo_t + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        new = [t, f_new, g_new, gtd_new]
        if f_new > (f + c1 * t * gtd) or f_new >= bracket[low][1]:
            bracket[high] = new
            low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
        else:
            done = abs(gtd_new) <= -c2 * gtd
            if not done and gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = new
            if done:
                break
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals


def _flat_grad(params):
    """All gradients as one new vector; a parameter without a gradient contributes zeros."""
    return tensorlib.cat([
        tensorlib.zeros(p.numel(), dtype=p.dtype, device=p.device) if p.grad is None
        else p.grad.reshape(-1) for p in params])


def _add_flat(params, step_size, update):
    """params += step_size * update, `update` being flat."""
    offset = 0
    for p in params:
        numel = p.numel()
        p.add_(update[offset:offset + numel].view_as(p), alpha=step_size)
        offset += numel


def _directional_evaluate(closure, params, x, t, d):
    """The loss and flat gradient at x + t d; the parameters are left at `x`."""
    _add_flat(params, t, d)
    loss = float(closure())
    flat_grad = _flat_grad(params)
    for p, saved in zip(params, x):
        p.copy_(saved)
    return loss, flat_grad


class LBFGS(Optimizer):
    r"""Implements the L-BFGS algorithm (heavily inspired by `minFunc
    <https://www.cs.ubc.ca/~schmidtm/Software/minFunc.html>`_).

    One `step(closure)` runs up to ``max_iter`` quasi-Newton iterations, re-evaluating the
    closure as it goes; the curvature history carries over between steps. As in PyTorch
    there is a single parameter group, and the optimizer's global state lives in
    ``state[first parameter]`` (so `load_state_dict` casts and moves it with the
    parameters). It keeps ``history_size + 1`` flat copies of the parameters' size.

    Args:
        params (iterable): iterable of parameters to optimize (one group only).
        lr (float, Tensor, optional): learning rate (default: 1)
        max_iter (int, optional): maximal number of iterations per optimization step
            (default: 20)
        max_eval (int, optional): maximal number of function evaluations per optimization
            step (default: max_iter * 5 // 4).
        tolerance_grad (float, optional): termination tolerance on first order optimality
            (default: 1e-7).
        tolerance_change (float, optional): termination tolerance on function
            value/parameter changes (default: 1e-9).
        history_size (int, optional): update history size (default: 100).
        line_search_fn (str, optional): either 'strong_wolfe' or None (default: None).

    Example:
        >>> optimizer = tensorlib.optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")
        >>> def closure():
        ...     optimizer.zero_grad()
        ...     loss = loss_fn(model(input), target)
        ...     loss.backward()
        ...     return loss
        >>> optimizer.step(closure)
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        check_hyperparameters(lr=lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")

    @tensorlib.no_grad()
    def step(self, closure):
        """Perform a single optimization step (up to ``max_iter`` L-BFGS iterations).

        Args:
            closure (Callable): A closure that reevaluates the model and returns the loss;
                it is called with grad enabled, several times per step.
        """
        closure = tensorlib.enable_grad()(closure)
        group = self.param_groups[0]
        params = group["params"]
        lr = _to_scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = _flat_grad(params)
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_flat_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # descent direction: steepest descent at first, then the two-loop recursion
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:   # keep only pairs with clearly positive curvature
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = flat_grad.neg()
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q.add_(old_dirs[i], alpha=-al[i])
                d = r = tensorlib.mul(q, H_diag)
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r.add_(old_stps[i], alpha=al[i] - be_i)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # step length: the first step ever moves the parameters by at most lr (l1 norm)
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:   # not a descent direction (to tolerance)
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p.clone() for p in params]

                def obj_func(x, t, d):
                    return _directional_evaluate(closure, params, x, t, d)

                # as in PyTorch, the line search keeps its own tolerance_change (1e-9)
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                _add_flat(params, t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                _add_flat(params, t, d)
                # a fixed step: re-evaluate for the next iteration, but not after the last
                # one (in a stochastic setting that evaluation would be wasted)
                if n_iter != max_iter:
                    loss = float(closure())
                    flat_grad = _flat_grad(params)
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change:   # the step barely moved
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss
