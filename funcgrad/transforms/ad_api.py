"""The public API of autodiff: jvp, linearize, vjp, grad, value_and_grad,
linear_transpose, jacfwd, jacrev, hessian, stop_gradient (re-exported as ``funcgrad.*``).
All take and return pytrees.

Everything here is a thin pytree wrapper around the interpreters: ``jvp.py`` (forward
mode), ``linearize.py`` (the JVP with its tangent work recorded, ``vjp_flat``) and
``transpose.py`` (the reverse-mode walker); an outermost ``grad`` runs on the eager tape
of ``eager_vjp.py`` instead.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import ad_util, dtypes, pytree
from funcgrad.core.ad_util import Zero, instantiate, is_differentiable, tangent_aval
from funcgrad.core.array import grad_results, leaf_values
from funcgrad.core.prims.elementwise import stop_gradient_p
from funcgrad.core.staging import flatten_fun
from funcgrad.core.trace import Tracer, get_aval_any
from funcgrad.core.wrapping import fun_name, wraps
from funcgrad.transforms import eager_vjp
from funcgrad.transforms.batching import argument_error, argument_leaf, leaf_owner
from funcgrad.transforms.jvp import jvp_flat
from funcgrad.transforms.linearize import linearize_flat, vjp_flat
from funcgrad.transforms.transpose import backward_pass


def _check_inputs(fname, leaves, args):
    """Raise the TypeError for the first of ``leaves`` (of the arguments ``args``) that
    is not an array, naming it by its argument and key path."""
    for i, x in enumerate(leaves):
        try:
            get_aval_any(x)
        except TypeError as e:
            raise argument_error(f"{fname}: {leaf_owner(args, None, i)}", e) from None
    return leaves


def _as_array(x):
    return np.asarray(x) if isinstance(x, (bool, int, float, complex)) else x


def jvp(fun, primals, tangents):
    """Forward mode: ``(fun(*primals), J(primals) @ tangents)``.

    >>> jvp(fnp.sin, (0.0,), (1.0,))
    (Array(0.), Array(1.))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples (or lists) of arguments")
    p_leaves, p_tree = pytree.tree_flatten(tuple(primals))
    t_leaves, t_tree = pytree.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(f"jvp: primal and tangent arguments must have the same structure; got {p_tree} and {t_tree}")
    _check_inputs("jvp", p_leaves, tuple(primals))
    ts = []
    for i, (p, t) in enumerate(zip(p_leaves, t_leaves)):
        pa, ta = get_aval_any(p), get_aval_any(t)
        if pa.shape != ta.shape:
            raise ValueError(f"jvp: tangent {i} has shape {ta.shape} but its primal has shape {pa.shape}")
        ts.append(t if is_differentiable(pa) else Zero(tangent_aval(pa)))
    flat, out_tree = flatten_fun(fun, p_tree)
    outs, out_ts = jvp_flat(flat, p_leaves, ts)
    out_ts = [instantiate(t) for t in out_ts]
    tree = out_tree[0]
    return pytree.tree_unflatten(tree, leaf_values(outs)), pytree.tree_unflatten(tree, leaf_values(out_ts))


def linearize(fun, *primals):
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` evaluates the linear map."""
    p_leaves, p_tree = pytree.tree_flatten(primals)
    flat, out_tree = flatten_fun(fun, p_tree)
    outs, lin = linearize_flat(flat, p_leaves)

    def f_jvp(*tangents):
        t_leaves, t_tree = pytree.tree_flatten(tangents)
        if t_tree != p_tree:
            raise TypeError(f"linearize: tangents must have the primals' structure {p_tree}, got {t_tree}")
        return pytree.tree_unflatten(out_tree[0], leaf_values(lin(*t_leaves)))

    return pytree.tree_unflatten(out_tree[0], leaf_values(outs)), f_jvp


def _split_aux(out, fname):
    """``(output, aux)`` of the result of a function differentiated with ``has_aux``,
    checking that it is a pair. (Without ``has_aux``, the pair is ``(out, None)``.)"""
    if not (isinstance(out, tuple) and len(out) == 2):
        raise TypeError(f"{fname} with has_aux=True: the function must return a pair (output, aux)")
    return out


def _vjp_leaves(fun, p_leaves, p_tree, in_avals):
    """Run ``fun`` (pytree in, ``(output, aux or None)`` out, see ``_split_aux``) at
    ``p_leaves`` recording its linearization. Returns (primal output leaves then aux
    leaves, [output treedef, aux treedef (``None`` for a ``None`` aux), number of output
    leaves], output tangent avals, ``backward``)."""
    trees = []

    def flat(*leaves):
        out, aux = fun(*pytree.tree_unflatten(p_tree, leaves))
        out_leaves, out_tree = pytree.tree_flatten(out)
        if aux is None:  # (no aux treedef then: flattening None is not free)
            trees[:] = [out_tree, None, len(out_leaves)]
            return out_leaves
        # aux leaves ride along as extra outputs so they leave the trace as plain values.
        aux_leaves, aux_tree = pytree.tree_flatten(aux)
        trees[:] = [out_tree, aux_tree, len(out_leaves)]
        return out_leaves + aux_leaves

    outs, out_avals, backward = vjp_flat(flat, p_leaves, in_avals)
    return outs, trees, out_avals, backward


_FLOAT0 = dtypes.float0  # jax.dtypes.float0


def vjp(fun, *primals, has_aux=False):
    """Reverse mode: ``(fun(*primals), vjp_fun)``; ``vjp_fun(ct)`` returns a tuple with
    one cotangent per primal argument. With ``has_aux``, ``fun`` returns ``(out, aux)``
    and the result is ``(out, vjp_fun, aux)``."""
    p_leaves, p_tree = pytree.tree_flatten(primals)
    in_avals = _input_avals("vjp", p_leaves, primals)

    def pair_fun(*args):
        out = fun(*args)
        return _split_aux(out, "vjp") if has_aux else (out, None)

    outs, (out_tree, aux_tree, n_out), all_out_avals, backward = _vjp_leaves(pair_fun, p_leaves, p_tree, in_avals)
    out_avals = all_out_avals[:n_out]

    def vjp_fun(ct):
        ct_leaves, ct_tree = pytree.tree_flatten(ct)
        if ct_tree != out_tree:
            raise TypeError(f"vjp: cotangent structure {ct_tree} does not match the output structure {out_tree}")
        for i, (c, a) in enumerate(zip(ct_leaves, out_avals)):
            if a.dtype.kind not in "fc" and getattr(c, "dtype", None) == _FLOAT0:
                # (JAX's cotangent type for an integer/bool output; funcgrad has no float0 dtype)
                if np.shape(c) != a.shape:
                    raise ValueError(f"vjp: cotangent {i} has shape {np.shape(c)}, but the output has shape {a.shape}")
                continue
            try:
                ca = get_aval_any(c)
            except TypeError as e:  # (an unsupported dtype, say float16: name vjp)
                raise type(e)(f"vjp: cotangent {i}: {e}") from None
            if ca.shape != a.shape:
                raise ValueError(f"vjp: cotangent {i} has shape {ca.shape}, but the output has shape {a.shape}")
            # JAX: a float/complex output's cotangent has exactly its dtype (a real one for a
            # complex output would drop the imaginary part); integer outputs take any.
            if a.dtype.kind in "fc" and ca.dtype != a.dtype:
                raise TypeError(f"vjp: cotangent {i} has dtype {ca.dtype}, but output {i} (shape {a.shape}) "
                                f"has dtype {a.dtype}: pass a cotangent of the output's dtype")
        cts = [_as_array(c) if is_differentiable(a) else Zero(a) for c, a in zip(ct_leaves, out_avals)]
        cts = [
            c if type(c) is Zero or get_aval_any(c).dtype == a.dtype else _cast(c, a.dtype)
            for c, a in zip(cts, out_avals)
        ]
        cts += [Zero(a) for a in all_out_avals[n_out:]]
        cts_in = backward(cts)
        return pytree.tree_unflatten(p_tree, leaf_values([instantiate(c) for c in cts_in]))

    outs = leaf_values(outs)
    out = pytree.tree_unflatten(out_tree, outs[:n_out])
    if has_aux:
        return out, vjp_fun, _unflatten_aux(aux_tree, outs[n_out:])
    return out, vjp_fun


def _input_avals(fname, leaves, args):
    try:
        return [get_aval_any(x) for x in leaves]
    except TypeError:
        _check_inputs(fname, leaves, args)  # raises, naming the offending leaf
        raise


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


def _fname(fun) -> str:
    return fun_name(fun)


_OUTPUT_TYPES = (Tracer, np.ndarray, np.generic, float, int, bool)


def _check_output_type(out, what: str):
    """A differentiated function's output must be an array (checked before the reverse
    pass looks at it, so the error says it was the *output*)."""
    if not isinstance(out, _OUTPUT_TYPES):
        hint = (" (to return auxiliary data too, pass has_aux=True and return (output, aux))"
                if isinstance(out, (tuple, list, dict)) else "")
        shown = "None" if out is None else f"a {type(out).__name__}"
        raise TypeError(f"{what}: the function's output is {shown}, but it must be a real scalar array{hint}")


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """``(fun(*args), gradient)`` of a scalar real-valued ``fun`` w.r.t. ``argnums``.

    Complex arguments follow JAX's convention: the gradient of a real-valued f(x + iy)
    is df/dx - i df/dy (``grad(lambda z: abs(z)**2)(3+4j) == 6-8j``). A complex-valued
    ``fun`` needs ``holomorphic=True`` (complex arguments only): the gradient is then
    the complex derivative f'(z).

    ``allow_int=True`` (JAX's keyword) accepts integer and bool arguments: their gradient
    is ``numpy.zeros`` of the argument's shape *and dtype* (JAX returns its ``float0``
    dtype, which NumPy has no counterpart for). Without it they raise ``TypeError``.

    The argument handling is done here for both reverse modes: the eager tape (when
    ``grad`` is the outermost transform) and the general path (``vjp_flat``) each get the
    checked leaves and ``fun`` as a function of the differentiated arguments alone
    returning ``(output, aux or None)``; the output is checked here too.
    """

    argnums_for = {}  # number of positional arguments -> (single, normalized argnums)
    what = f"grad({_fname(fun)})"

    @wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        nums = argnums_for.get(len(args))
        if nums is None:
            nums = argnums_for[len(args)] = _argnums_tuple(argnums, len(args), "grad")
        single, nums = nums
        p_leaves, p_tree, in_avals = _grad_inputs(args, nums, allow_int, what)
        if holomorphic:
            _check_holomorphic_inputs(what, in_avals)

        def diff_fun(*diff):
            full = list(args)
            for a, v in zip(nums, diff):
                full[a] = v
            out = fun(*full, **kwargs)
            out, aux = _split_aux(out, "grad") if has_aux else (out, None)
            _check_output_type(out, what)
            return out, aux

        int_mask = None
        if allow_int and not all(is_differentiable(a) for a in in_avals):
            # Integer leaves are held fixed; only the others are differentiated.
            int_mask = [not is_differentiable(a) for a in in_avals]
            all_leaves, all_tree, all_avals, whole_fun = p_leaves, p_tree, in_avals, diff_fun
            p_leaves = [x for x, m in zip(all_leaves, int_mask) if not m]
            in_avals = [a for a, m in zip(all_avals, int_mask) if not m]
            p_tree = pytree.tree_structure(tuple(p_leaves))

            def diff_fun(*diff):
                it = iter(diff)
                leaves = [x if m else next(it) for x, m in zip(all_leaves, int_mask)]
                return whole_fun(*pytree.tree_unflatten(all_tree, leaves))

        if eager_vjp.usable():
            out, aux, backward = eager_vjp.grad_call(diff_fun, p_leaves, p_tree, in_avals)
        else:
            out, aux, backward = _grad_call(diff_fun, p_leaves, p_tree, in_avals)
        # The output is one real scalar: its cotangent is 1.
        g_leaves = [instantiate(c) for c in backward(np.array(1, _check_grad_output(out, what, holomorphic).dtype))]
        out, aux, g_leaves = grad_results(out, aux, g_leaves, p_leaves)
        if int_mask is not None:
            it = iter(g_leaves)
            g_leaves = [np.zeros(a.shape, a.dtype) if m else next(it) for a, m in zip(all_avals, int_mask)]
            p_tree = all_tree
        g = pytree.tree_unflatten(p_tree, g_leaves)
        g = g[0] if single else g
        if has_aux:
            return (out, aux), g
        return out, g

    return value_and_grad_f


def _grad_inputs(args, nums, allow_int=False, what="grad"):
    """(leaves, treedef, avals) of the differentiated arguments ``args[a] for a in nums``;
    raises ``TypeError`` for a leaf that is not an array or not real-valued (integer and
    bool leaves are allowed with ``allow_int``)."""
    p_leaves, p_tree = pytree.tree_flatten(tuple([args[a] for a in nums]))
    try:
        in_avals = [get_aval_any(x) for x in p_leaves]
    except TypeError:
        _check_differentiable(args, nums, allow_int, what)  # names the argument
        raise
    for aval in in_avals:
        if not is_differentiable(aval):
            _check_differentiable(args, nums, allow_int, what)
    return p_leaves, p_tree, in_avals


def _unflatten_aux(aux_tree, leaves):
    return None if aux_tree is None else pytree.tree_unflatten(aux_tree, leaves)


def _grad_call(diff_fun, p_leaves, p_tree, in_avals):
    """``eager_vjp.grad_call`` on the general reverse mode (any enclosing transform):
    (output, aux, ``backward(ct) -> gradient leaves``)."""
    outs, (out_tree, aux_tree, n_out), out_avals, backward = _vjp_leaves(diff_fun, p_leaves, p_tree, in_avals)
    out = pytree.tree_unflatten(out_tree, outs[:n_out])
    aux = _unflatten_aux(aux_tree, outs[n_out:])
    aux_cts = [Zero(a) for a in out_avals[n_out:]]  # (aux outputs get no cotangent)
    return out, aux, lambda ct: backward([ct] + aux_cts)


def _check_holomorphic_inputs(what, avals):
    for i, a in enumerate(avals):
        if a.dtype.kind != "c":
            raise TypeError(f"{what} with holomorphic=True requires inputs with complex dtype, but input "
                            f"leaf {i} is {a.str_short()}")


def _check_grad_output(out, what="grad", holomorphic=False):
    aval = get_aval_any(out) if not isinstance(out, (tuple, list, dict)) else None
    if aval is not None and aval.shape == () and (aval.dtype.kind == "c") != holomorphic:
        if holomorphic:
            raise TypeError(f"{what} with holomorphic=True requires a complex output, but the function's "
                            f"output is {aval.str_short()}")
        raise TypeError(
            f"{what}: grad requires real-valued outputs, but the function's output is {aval.str_short()}. "
            "For holomorphic differentiation, pass holomorphic=True; for a non-holomorphic function with "
            "complex outputs, use fg.vjp directly (or differentiate its real part or its abs)."
        )
    if aval is None or aval.shape != () or aval.dtype.kind not in "fc":
        shown = aval.str_short() if aval is not None else type(out).__name__
        kind = "an integer-valued" if aval is not None and aval.shape == () else "a non-scalar"
        raise TypeError(
            f"{what}: grad requires a real scalar output, but the function's output is {kind} {shown}. Use "
            "fg.jacrev / fg.vjp for non-scalar outputs (or sum the output)."
        )
    return aval


_I64 = (-(2**63), 2**63 - 1)


def _check_differentiable(args, nums, allow_int=False, what="grad"):
    """Raise the error for the first differentiated argument that is not real-valued
    (or not an array at all, or a Python int beyond int64)."""
    for a in nums:
        leaves = pytree.tree_leaves(args[a])
        for k, leaf in enumerate(leaves):
            where = argument_leaf(str(a), args[a], k)
            if type(leaf) is int and not _I64[0] <= leaf <= _I64[1]:
                raise OverflowError(f"{what}: {where} is the Python int {leaf}, which does not fit in int64")
            try:
                aval = get_aval_any(leaf)
            except TypeError as e:
                raise argument_error(f"{what}: {where}", e) from None
            if not is_differentiable(aval) and not (allow_int and aval.dtype.kind in "biu"):
                raise TypeError(
                    f"{what}: grad requires real-valued (floating-point) or complex inputs, but {where} "
                    f"has dtype {aval.dtype.name}. Convert it with .astype(float), leave "
                    "it out of argnums, or pass allow_int=True (its gradient is then zero)."
                )


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """Gradient of a scalar real-valued ``fun`` w.r.t. argument(s) ``argnums``.

    ``allow_int=True`` accepts integer and bool arguments, whose gradient is an all-zero
    array of the argument's shape and dtype; complex arguments and ``holomorphic=True``:
    see ``value_and_grad``.

    >>> grad(lambda x: x ** 3)(2.0)
    Array(12.)
    >>> grad(lambda z: z ** 2, holomorphic=True)(1j)
    Array(0.+2.j)
    """
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @wraps(fun)
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


# --- Jacobians and Hessians: one batched jvp / vjp over a basis (vmap, no Python loop) ----

def _partial_on(fun, args, nums):
    def partial_f(*diff_args):
        full = list(args)
        for a, v in zip(nums, diff_args):
            full[a] = v
        return fun(*full)

    return partial_f


def _check_float_leaves(fname, leaves, holomorphic=False, complex_ok=False):
    """jacfwd: real inputs (complex ones with ``holomorphic``); jacrev: real or complex."""
    for leaf in leaves:
        aval = get_aval_any(leaf)
        if holomorphic and aval.dtype.kind != "c":
            raise TypeError(f"{fname} with holomorphic=True requires inputs with complex dtype, got {aval.str_short()}")
        if aval.dtype.kind == "c" and not (holomorphic or complex_ok):
            raise TypeError(
                f"{fname} requires real-valued inputs, got {aval.str_short()}. For holomorphic differentiation, "
                "pass holomorphic=True; for a non-holomorphic function of complex inputs, use fg.jvp directly."
            )
        if aval.dtype.kind not in "fc":
            raise TypeError(
                f"{fname} requires floating-point inputs, got {aval.str_short()}; convert with .astype(float)"
            )


def _check_float_outputs(fname, fun, out_leaves, holomorphic=False, complex_ok=True):
    """jacrev: real outputs (complex ones with ``holomorphic``); jacfwd: real or complex."""
    for i, o in enumerate(out_leaves):
        aval = get_aval_any(o)
        where = "output" if len(out_leaves) == 1 else f"output leaf {i}"
        if holomorphic and aval.dtype.kind != "c":
            raise TypeError(f"{fname}({_fname(fun)}) with holomorphic=True requires complex outputs, but the "
                            f"function's {where} is {aval.str_short()}")
        if aval.dtype.kind == "c" and not (holomorphic or complex_ok):
            raise TypeError(
                f"{fname}({_fname(fun)}) requires real-valued outputs, but the function's {where} is "
                f"{aval.str_short()}. For holomorphic differentiation, pass holomorphic=True; for a "
                "non-holomorphic function with complex outputs, use fg.vjp directly."
            )
        if aval.dtype.kind not in "fc":
            where = "output" if len(out_leaves) == 1 else f"output leaf {i}"
            raise TypeError(
                f"{fname}({_fname(fun)}) requires real-valued (floating-point) outputs, but the function's "
                f"{where} is {aval.str_short()}; its derivative is zero (or undefined): drop it or convert it"
            )


def _basis(avals):
    """Rows of the identity over all leaves' elements, split per leaf: leaf j gets an
    array of shape ``(total,) + aval_j.shape``."""
    sizes = [int(np.prod(a.shape, dtype=np.int64)) for a in avals]
    total = sum(sizes)
    dtype = dtypes.promote(*[a.dtype for a in avals]) if avals else np.float64
    eye = np.eye(total, dtype=dtype)
    out, start = [], 0
    for a, n in zip(avals, sizes):
        # (marked: compiled code may drop a product with it, ``lowering/algebra.py``)
        out.append(ad_util.mark_transform_basis(eye[:, start : start + n].reshape((total,) + a.shape).astype(a.dtype)))
        start += n
    return out, sizes


def _split_rows(y, sizes, row_shapes, tail_first: bool):
    """``y`` has a leading axis over all basis elements; split it per leaf and put each
    piece's element axes after (jacfwd) or before (jacrev) ``y``'s own axes."""
    from funcgrad import numpy as fnp

    pieces, start = [], 0
    y_shape = get_aval_any(y).shape[1:]
    for n, shape in zip(sizes, row_shapes):
        part = y[start : start + n]
        start += n
        if tail_first:  # rows are input elements: (n, *out) -> (*out, *in)
            part = fnp.moveaxis(part, 0, -1) if y_shape else part
            pieces.append(fnp.reshape(part, y_shape + shape))
        else:  # rows are output elements: (n, *in) -> (*out, *in)
            pieces.append(fnp.reshape(part, shape + y_shape))
    return pieces


def jacfwd(fun, argnums=0, holomorphic=False):
    """Jacobian by forward mode: one batched jvp over the input basis (``vmap``).
    Each output leaf gets a Jacobian of shape ``out.shape + in.shape`` per input leaf,
    arranged like the differentiated arguments. Inputs are real; ``holomorphic=True``
    takes complex inputs and outputs and gives the complex derivative, as JAX."""

    def jac_f(*args):
        from funcgrad.transforms.batching import vmap

        single, nums = _argnums_tuple(argnums, len(args), "jacfwd")
        diff_args = tuple(args[a] for a in nums)
        in_leaves, in_tree = pytree.tree_flatten(diff_args)
        _check_float_leaves("jacfwd", in_leaves, holomorphic)
        avals = [get_aval_any(x) for x in in_leaves]
        basis, sizes = _basis(avals)
        partial_f = _partial_on(fun, args, nums)

        primal_outs = []

        def pushfwd(*t_leaves):
            y, t = jvp(partial_f, diff_args, tuple(pytree.tree_unflatten(in_tree, t_leaves)))
            primal_outs[:] = pytree.tree_leaves(y)
            return t

        out = vmap(pushfwd)(*basis)
        _check_float_outputs("jacfwd", fun, primal_outs, holomorphic)
        per_out = []
        out_leaves, out_tree = pytree.tree_flatten(out)
        for y in out_leaves:
            pieces = _split_rows(y, sizes, [a.shape for a in avals], tail_first=True)
            per_arg = pytree.tree_unflatten(in_tree, pieces)
            per_out.append(per_arg[0] if single else per_arg)
        return pytree.tree_unflatten(out_tree, per_out)

    return jac_f


def jacrev(fun, argnums=0, holomorphic=False):
    """Jacobian by reverse mode: one vjp, pulled back over the output basis (``vmap``).
    Outputs are real (inputs real or complex: rows are ``grad``'s, JAX's convention);
    ``holomorphic=True`` takes complex inputs and outputs (the complex derivative)."""

    def jac_f(*args):
        from funcgrad.transforms.batching import vmap

        single, nums = _argnums_tuple(argnums, len(args), "jacrev")
        diff_args = tuple(args[a] for a in nums)
        in_leaves, in_tree = pytree.tree_flatten(diff_args)
        _check_float_leaves("jacrev", in_leaves, holomorphic, complex_ok=True)
        out, vjp_fun = vjp(_partial_on(fun, args, nums), *diff_args)
        out_leaves, out_tree = pytree.tree_flatten(out)
        _check_float_outputs("jacrev", fun, out_leaves, holomorphic, complex_ok=False)
        o_avals = [get_aval_any(o).update(dtype=_tangent_dtype(o)) for o in out_leaves]
        basis, sizes = _basis(o_avals)

        def pullback(*ct_leaves):
            return vjp_fun(pytree.tree_unflatten(out_tree, ct_leaves))

        cts = vmap(pullback)(*basis)  # tuple over diff args, leaves with a leading axis
        ct_leaves = pytree.tree_flatten(cts)[0]
        # ct_leaves[i] has shape (total_out, *in_i.shape); split the rows per output leaf.
        per_in = [_split_rows(c, sizes, [a.shape for a in o_avals], tail_first=False) for c in ct_leaves]
        per_out = []
        for k in range(len(out_leaves)):
            per_arg = pytree.tree_unflatten(in_tree, [p[k] for p in per_in])
            per_out.append(per_arg[0] if single else per_arg)
        return pytree.tree_unflatten(out_tree, per_out)

    return jac_f


def _tangent_dtype(leaf):
    dt = get_aval_any(leaf).dtype
    return dt if dt.kind in "fc" else np.dtype(np.float64)


def hessian(fun, argnums=0, holomorphic=False):
    """Hessian as forward-over-reverse: ``jacfwd(jacrev(fun))``."""
    return jacfwd(jacrev(fun, argnums, holomorphic), argnums, holomorphic)


def stop_gradient(x):
    """``x`` with derivatives blocked (on every leaf of a pytree)."""
    return pytree.tree_map(lambda l: stop_gradient_p.bind(l) if get_aval_any(l).dtype.kind in "fc" else l, x)
