"""User-facing differentiation API: jvp, linearize, vjp, grad, value_and_grad,
linear_transpose, jacfwd, jacrev, hessian, stop_gradient. All take and return pytrees.

Everything here is a thin pytree wrapper around ``transforms/ad.py``.
"""
from __future__ import annotations

import functools

import numpy as np

from funcgrad.core import pytree
from funcgrad.core.ad_util import Zero, instantiate, is_differentiable, tangent_aval
from funcgrad.core.prims.elementwise import stop_gradient_p
from funcgrad.core.staging import flatten_fun
from funcgrad.core.trace import get_aval_any
from funcgrad.transforms.ad import backward_pass, jvp_flat, linearize_flat


def _check_inputs(fname, leaves):
    for i, x in enumerate(leaves):
        try:
            get_aval_any(x)
        except TypeError as e:
            raise TypeError(f"{fname}: input leaf {i}: {e}") from None
    return leaves


def _as_array(x):
    return np.asarray(x) if isinstance(x, (bool, int, float)) else x


def jvp(fun, primals, tangents):
    """Forward mode: ``(fun(*primals), J(primals) @ tangents)``.

    >>> jvp(fnp.sin, (0.0,), (1.0,))   # (0.0, 1.0)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples (or lists) of arguments")
    p_leaves, p_tree = pytree.tree_flatten(tuple(primals))
    t_leaves, t_tree = pytree.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(f"jvp: primal and tangent arguments must have the same structure; got {p_tree} and {t_tree}")
    _check_inputs("jvp", p_leaves)
    ts = []
    for i, (p, t) in enumerate(zip(p_leaves, t_leaves)):
        pa, ta = get_aval_any(p), get_aval_any(t)
        if pa.shape != ta.shape:
            raise ValueError(f"jvp: tangent {i} has shape {ta.shape} but its primal has shape {pa.shape}")
        ts.append(t if is_differentiable(pa) else Zero(tangent_aval(pa)))
    flat, out_tree = flatten_fun(fun, p_tree)
    outs, out_ts = jvp_flat(flat, p_leaves, ts)
    out_ts = [instantiate(t) for t in out_ts]
    return pytree.tree_unflatten(out_tree[0], outs), pytree.tree_unflatten(out_tree[0], out_ts)


def linearize(fun, *primals):
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` evaluates the linear map."""
    p_leaves, p_tree = pytree.tree_flatten(primals)
    flat, out_tree = flatten_fun(fun, p_tree)
    outs, lin = linearize_flat(flat, p_leaves)

    def f_jvp(*tangents):
        t_leaves, t_tree = pytree.tree_flatten(tangents)
        if t_tree != p_tree:
            raise TypeError(f"linearize: tangents must have the primals' structure {p_tree}, got {t_tree}")
        return pytree.tree_unflatten(out_tree[0], lin(*t_leaves))

    return pytree.tree_unflatten(out_tree[0], outs), f_jvp


def vjp(fun, *primals, has_aux=False):
    """Reverse mode: ``(fun(*primals), vjp_fun)``; ``vjp_fun(ct)`` returns a tuple with
    one cotangent per primal argument. With ``has_aux``, ``fun`` returns ``(out, aux)``
    and the result is ``(out, vjp_fun, aux)``."""
    p_leaves, p_tree = pytree.tree_flatten(primals)
    _check_inputs("vjp", p_leaves)
    trees = []  # [output treedef, aux treedef]

    def flat(*leaves):
        out = fun(*pytree.tree_unflatten(p_tree, leaves))
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError("vjp with has_aux=True: the function must return a pair (output, aux)")
            out, aux = out
        out_leaves, out_tree = pytree.tree_flatten(out)
        aux_leaves, aux_tree = pytree.tree_flatten(aux)
        trees[:] = [out_tree, aux_tree, len(out_leaves)]
        # aux leaves ride along as extra outputs so they leave the trace as plain values.
        return out_leaves + aux_leaves

    outs, lin = linearize_flat(flat, p_leaves)
    out_tree, aux_tree, n_out = trees
    out_avals = lin.out_avals[:n_out]

    def vjp_fun(ct):
        ct_leaves, ct_tree = pytree.tree_flatten(ct)
        if ct_tree != out_tree:
            raise TypeError(f"vjp: cotangent structure {ct_tree} does not match the output structure {out_tree}")
        for i, (c, a) in enumerate(zip(ct_leaves, out_avals)):
            ca = get_aval_any(c)
            if ca.shape != a.shape:
                raise ValueError(f"vjp: cotangent {i} has shape {ca.shape}, but the output has shape {a.shape}")
        cts = [_as_array(c) if is_differentiable(a) else Zero(a) for c, a in zip(ct_leaves, out_avals)]
        cts = [c if type(c) is Zero or get_aval_any(c).dtype == a.dtype else _cast(c, a.dtype) for c, a in zip(cts, out_avals)]
        cts += [Zero(a) for a in lin.out_avals[n_out:]]
        cts_in = backward_pass(lin.jaxpr, lin.consts, cts)
        return pytree.tree_unflatten(p_tree, [instantiate(c) for c in cts_in])

    out = pytree.tree_unflatten(out_tree, outs[:n_out])
    if has_aux:
        return out, vjp_fun, pytree.tree_unflatten(aux_tree, outs[n_out:])
    return out, vjp_fun


def _cast(x, dtype):
    from funcgrad.core import lax_api as lax

    return lax.convert_element_type(x, dtype)


def _argnums_tuple(argnums, nargs, fname):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for a in nums:
        if not -nargs <= a < nargs:
            raise ValueError(f"{fname}: argnums {argnums} out of range for {nargs} positional arguments")
    return single, tuple(a % nargs for a in nums)


def value_and_grad(fun, argnums=0, has_aux=False):
    """``(fun(*args), gradient)`` of a scalar real-valued ``fun`` w.r.t. ``argnums``."""

    @functools.wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        single, nums = _argnums_tuple(argnums, len(args), "grad")
        for a in nums:
            for leaf in pytree.tree_leaves(args[a]):
                aval = get_aval_any(leaf)
                if not is_differentiable(aval):
                    raise TypeError(
                        f"grad requires real-valued (floating-point) inputs, but argument {a} "
                        f"has dtype {aval.dtype.name}. Convert it with .astype(float), or leave "
                        "it out of argnums."
                    )

        def partial_f(*diff_args):
            full = list(args)
            for a, v in zip(nums, diff_args):
                full[a] = v
            return fun(*full, **kwargs)

        diff_args = [args[a] for a in nums]
        if has_aux:
            out, vjp_fun, aux = vjp(partial_f, *diff_args, has_aux=True)
        else:
            out, vjp_fun = vjp(partial_f, *diff_args)
        aval = get_aval_any(out) if not isinstance(out, (tuple, list, dict)) else None
        if aval is None or aval.shape != () or aval.dtype.kind != "f":
            shown = aval.str_short() if aval is not None else type(out).__name__
            raise TypeError(
                f"grad requires a real scalar output, but the function returned {shown}. Use "
                "fg.jacrev / fg.vjp for non-scalar outputs (or sum the output)."
            )
        g = vjp_fun(np.ones((), aval.dtype))
        g = g[0] if single else tuple(g)
        return ((out, aux), g) if has_aux else (out, g)

    return value_and_grad_f


def grad(fun, argnums=0, has_aux=False):
    """Gradient of a scalar real-valued ``fun`` w.r.t. argument(s) ``argnums``.

    >>> grad(lambda x: x ** 3)(2.0)   # 12.0
    """
    vg = value_and_grad(fun, argnums, has_aux)

    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        if has_aux:
            (_, aux), g = vg(*args, **kwargs)
            return g, aux
        return vg(*args, **kwargs)[1]

    return grad_f


def linear_transpose(fun, *primals):
    """Transpose of the linear function ``fun`` (at primal shapes ``primals``)."""
    p_leaves, p_tree = pytree.tree_flatten(primals)
    flat, out_tree = flatten_fun(fun, p_tree)
    _, lin = linearize_flat(flat, p_leaves)

    def transposed(ct):
        ct_leaves, ct_tree = pytree.tree_flatten(ct)
        if ct_tree != out_tree[0]:
            raise TypeError(f"linear_transpose: cotangent structure {ct_tree} != output structure {out_tree[0]}")
        cts = [instantiate(c) for c in backward_pass(lin.jaxpr, lin.consts, [_as_array(c) for c in ct_leaves])]
        return pytree.tree_unflatten(p_tree, cts)

    return transposed


# --- Jacobians and Hessians (basis loops; vmap replaces these with batching) -------------

def _std_basis(aval):
    n = int(np.prod(aval.shape, dtype=np.int64))
    eye = np.eye(n, dtype=aval.dtype)
    return [eye[i].reshape(aval.shape) for i in range(n)]


def _stack_jac(rows, out_shape, in_shape, dtype):
    from funcgrad import numpy as fnp

    if not rows:
        return fnp.zeros(out_shape + in_shape, dtype)
    return fnp.reshape(fnp.stack(rows, axis=-1), out_shape + in_shape)


def jacfwd(fun, argnums=0):
    """Jacobian by forward mode: one jvp per input element. Output pytree of arrays with
    shape ``out.shape + in.shape``."""

    def jac_f(*args):
        single, nums = _argnums_tuple(argnums, len(args), "jacfwd")
        results = []
        for a in nums:
            x = args[a]
            x_leaves, x_tree = pytree.tree_flatten(x)
            per_leaf = []
            for li, leaf in enumerate(x_leaves):
                aval = get_aval_any(leaf)
                columns = []
                for e in _std_basis(aval):
                    tangents = [np.zeros(get_aval_any(l).shape, get_aval_any(l).dtype) for l in x_leaves]
                    tangents[li] = e
                    full_t = [np.zeros_like(np.asarray(v, dtype=float)) if False else _zeros_tree(v) for v in args]
                    full_t[a] = pytree.tree_unflatten(x_tree, tangents)
                    _, t_out = jvp(fun, tuple(args), tuple(full_t))
                    columns.append(t_out)
                per_leaf.append(_assemble(columns, aval))
            results.append(pytree.tree_unflatten(x_tree, per_leaf) if len(x_leaves) > 1 or x_tree.node_type is not None else per_leaf[0])
        return results[0] if single else tuple(results)

    return jac_f


def _zeros_tree(tree):
    return pytree.tree_map(lambda l: np.zeros(get_aval_any(l).shape, _tangent_dtype(l)), tree)


def _tangent_dtype(leaf):
    dt = get_aval_any(leaf).dtype
    return dt if dt.kind == "f" else np.float64


def _assemble(columns, in_aval):
    """columns: list (over input elements) of output pytrees -> pytree of jacobians."""
    if not columns:
        return None
    out_leaves_list = [pytree.tree_flatten(c)[0] for c in columns]
    out_tree = pytree.tree_flatten(columns[0])[1]
    jacs = []
    for k in range(len(out_leaves_list[0])):
        rows = [ol[k] for ol in out_leaves_list]
        oaval = get_aval_any(rows[0])
        jacs.append(_stack_jac(rows, oaval.shape, in_aval.shape, oaval.dtype))
    return pytree.tree_unflatten(out_tree, jacs)


def jacrev(fun, argnums=0):
    """Jacobian by reverse mode: one vjp per output element."""

    def jac_f(*args):
        from funcgrad import numpy as fnp

        single, nums = _argnums_tuple(argnums, len(args), "jacrev")

        def partial_f(*diff_args):
            full = list(args)
            for a, v in zip(nums, diff_args):
                full[a] = v
            return fun(*full)

        out, vjp_fun = vjp(partial_f, *[args[a] for a in nums])
        out_leaves, out_tree = pytree.tree_flatten(out)
        per_out = []
        for k, o in enumerate(out_leaves):
            oaval = get_aval_any(o)
            rows = []
            for e in _std_basis(oaval.update(dtype=_tangent_dtype(o))):
                cts = [np.zeros(get_aval_any(l).shape, _tangent_dtype(l)) for l in out_leaves]
                cts[k] = e
                rows.append(vjp_fun(pytree.tree_unflatten(out_tree, cts)))
            # rows: list over output elements of tuples (per diff arg) of input pytrees
            per_arg = []
            for j, a in enumerate(nums):
                in_leaves_rows = [pytree.tree_flatten(r[j])[0] for r in rows]
                in_tree = pytree.tree_flatten(args[a])[1]
                leaves = []
                for li, leaf in enumerate(pytree.tree_leaves(args[a])):
                    iaval = get_aval_any(leaf)
                    if rows:
                        stacked = fnp.stack([r[li] for r in in_leaves_rows], axis=0)
                        leaves.append(fnp.reshape(stacked, oaval.shape + iaval.shape))
                    else:
                        leaves.append(fnp.zeros(oaval.shape + iaval.shape, _tangent_dtype(leaf)))
                per_arg.append(pytree.tree_unflatten(in_tree, leaves))
            per_out.append(per_arg[0] if single else tuple(per_arg))
        return pytree.tree_unflatten(out_tree, per_out)

    return jac_f


def hessian(fun, argnums=0):
    """Hessian as forward-over-reverse: ``jacfwd(jacrev(fun))``."""
    return jacfwd(jacrev(fun, argnums), argnums)


def stop_gradient(x):
    """``x`` with derivatives blocked (on every leaf of a pytree)."""
    return pytree.tree_map(lambda l: stop_gradient_p.bind(l) if get_aval_any(l).dtype.kind == "f" else l, x)
