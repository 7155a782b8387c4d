"""funcgrad.numpy: ``einsum`` in every form and ``einsum_path``.

Subscripts strings (explicit ``'ij,jk->ik'`` or implicit ``'ij,jk'``), NumPy's sublist
form (``einsum(a, [0, 1], b, [1, 2], [0, 2])``), ``'...'`` with broadcasting, and
repeated labels within an operand (diagonals and traces, ``'ii->i'``, ``'ii'``).
Labels used by one operand only are summed first; operands are then contracted
pairwise with ``dot_general``, in the order ``optimize`` picks: ``False`` left to
right, anything else (``True``, ``'greedy'``, ``'optimal'``, JAX's default ``'auto'``)
greedily, always contracting the pair whose result grows the data least, or the
explicit path an ``einsum_path`` returned. ``precision`` is accepted (CPU products
are always computed at full precision); ``preferred_element_type`` (or NumPy's
``dtype``) is the dtype the products are computed and returned in.

>>> fnp.einsum('ij,jk->ik', np.ones((2, 3)), np.ones((3, 4))).shape
(2, 4)
"""
from __future__ import annotations

import math

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.core.precision import check_precision
from funcgrad.numpy_api import _util
from funcgrad.numpy_api import products as _products
from funcgrad.numpy_api._util import shape_of

__all__ = ["einsum", "einsum_path"]


# --- parsing ------------------------------------------------------------------------------
def _parse_term(term, ndim, k):
    """Labels of one input term: letters, with '...' expanded to ints (right-aligned
    ellipsis dims, counted from the end so broadcasting lines them up)."""
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise ValueError(f"einsum: invalid subscript {term!r} for operand {k}: '.' only as one '...'")
    head, dots, tail = term.partition("...")
    for c in head + tail:
        if not c.isalpha():
            raise ValueError(f"einsum: invalid subscript character {c!r} in {term!r} (letters only)")
    nell = ndim - len(head) - len(tail)
    if (nell < 0) or (nell > 0 and not dots):
        raise ValueError(
            f"einsum: operand {k} has {ndim} dimensions but its subscripts {term!r} name "
            f"{len(head) + len(tail)}"
        )
    return list(head) + list(range(-nell, 0)) + list(tail), bool(dots)


def _parse_einsum(subscripts, shapes):
    if not isinstance(subscripts, str):
        raise TypeError("einsum: only the subscripts-string form is supported, e.g. einsum('ij,jk->ik', a, b)")
    spec = subscripts.replace(" ", "")
    lhs, arrow, rhs = spec.partition("->")
    if "->" in rhs or ("-" in lhs) or (">" in lhs):
        raise ValueError(f"einsum: invalid subscripts {subscripts!r} (use one '->')")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(
            f"einsum: subscripts {subscripts!r} name {len(terms)} operands but {len(shapes)} were given"
        )
    labels, any_dots = [], False
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        lab, dots = _parse_term(term, len(shape), k)
        labels.append(lab)
        any_dots |= dots
    nell = max([-min([l for l in lab if isinstance(l, int)], default=0) for lab in labels], default=0)
    ell = list(range(-nell, 0))
    if arrow:
        if rhs.count("...") > 1 or "." in rhs.replace("...", ""):
            raise ValueError(f"einsum: invalid output subscripts {rhs!r}")
        head, dots, tail = rhs.partition("...")
        for c in head + tail:
            if not c.isalpha():
                raise ValueError(f"einsum: invalid subscript character {c!r} in output {rhs!r}")
        if len(set(head + tail)) != len(head + tail):
            raise ValueError(f"einsum: output subscripts {rhs!r} repeat a label")
        out = list(head) + (ell if dots else []) + list(tail)
        present = {l for lab in labels for l in lab}
        for c in head + tail:
            if c not in present:
                raise ValueError(f"einsum: output label {c!r} does not appear in any input of {subscripts!r}")
        if nell and not dots:
            raise ValueError(
                f"einsum: inputs of {subscripts!r} have '...' dimensions, so the output needs '...' too"
            )
    else:  # implicit mode: '...' first, then letters used exactly once, alphabetically
        counts = {}
        for lab in labels:
            for l in lab:
                if isinstance(l, str):
                    counts[l] = counts.get(l, 0) + 1
        out = ell + sorted(l for l, c in counts.items() if c == 1)
    return labels, out


def _einsum_sizes(labels, shapes, subscripts):
    sizes = {}
    for k, (lab, shape) in enumerate(zip(labels, shapes)):
        for l, d in zip(lab, shape):
            s = sizes.get(l, d)
            if d != 1 and s != 1 and d != s:
                what = f"label {l!r}" if isinstance(l, str) else "a '...' dimension"
                raise ValueError(
                    f"einsum: size of {what} is {s} in an earlier operand but {d} in operand {k} "
                    f"(shape {shape}) of {subscripts!r}"
                )
            sizes[l] = d if s == 1 else s
    return sizes


def _take_diagonals(x, lab):
    """Collapse repeated labels of one operand to their diagonal (e.g. 'ii' -> 'i')."""
    while len(set(lab)) != len(lab):
        rep = next(l for l in lab if lab.count(l) > 1)
        pos = [i for i, l in enumerate(lab) if l == rep]
        keep = [i for i, l in enumerate(lab) if l != rep]
        x = lax.transpose(x, keep + pos)
        shape = shape_of(x)
        n, r = shape[-1], len(pos)
        lead = shape[: len(keep)]
        # element (i, i, ..., i) of r axes of size n sits at i * (n**(r-1) + ... + 1)
        stride = sum(n ** j for j in range(r))
        flat = lax.reshape(x, lead + (n ** r,))
        nl = len(lead)
        limit = (n - 1) * stride + 1 if n else 0
        x = lax.slice(flat, (0,) * (nl + 1), lead + (limit,), (1,) * nl + (max(stride, 1),))
        lab = [lab[i] for i in keep] + [rep]
    return x, lab


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _sublist_term(sub, what):
    """One NumPy sublist (ints 0..51 and ``...``) as a subscripts term: 0 -> 'A', 26 -> 'a'."""
    if not isinstance(sub, (list, tuple)):
        raise TypeError(f"einsum: {what} must be a list of ints (and ...), got {type(sub).__name__}")
    out = []
    for s in sub:
        if s is Ellipsis:
            out.append("...")
            continue
        try:
            s = int(s.__index__())
        except AttributeError:
            raise TypeError(f"einsum: {what} holds {s!r}; sublist labels are ints in [0, 52) or ...") from None
        if not 0 <= s < 52:
            raise ValueError(f"einsum: {what} holds the label {s}; sublist labels must be in [0, 52)")
        out.append(_LETTERS[s])
    return "".join(out)


def _split_sublists(args):
    """NumPy's interleaved form ``(op0, sub0, op1, sub1, ..., [out])`` -> (subscripts, ops)."""
    ops, terms = list(args[0::2]), []
    pairs = len(args) // 2
    for k in range(pairs):
        terms.append(_sublist_term(args[2 * k + 1], f"the sublist of operand {k}"))
    ops = ops[:pairs]
    spec = ",".join(terms)
    if len(args) % 2:
        spec += "->" + _sublist_term(args[-1], "the output sublist")
    return spec, ops


def _subscripts_and_operands(subscripts, operands):
    if isinstance(subscripts, str):
        return subscripts, list(operands)
    return _split_sublists((subscripts,) + tuple(operands))


# --- contraction order ------------------------------------------------------------------------
def _size(labels, sizes):
    return math.prod(sizes[l] for l in labels)


def _kept(labels, others, out):
    """Labels of a (pairwise) result that the other operands or the output still use."""
    need = set(out).union(*map(set, others))
    return [l for l in labels if l in need]


def _pair_labels(la, lb, others, out):
    union = list(dict.fromkeys(list(la) + list(lb)))
    return _kept(union, others, out)


def greedy_path(labels, out, sizes):
    """NumPy-convention path (each step names two positions in the current list; their
    result goes to the end): at each step the pair whose result is smallest compared
    with its inputs (NumPy's ``greedy`` cost), ties to the first pair."""
    terms, path = [list(lab) for lab in labels], []
    while len(terms) > 1:
        best = None
        for i in range(len(terms)):
            for j in range(i + 1, len(terms)):
                others = [t for k, t in enumerate(terms) if k not in (i, j)]
                res = _pair_labels(terms[i], terms[j], others, out)
                cost = _size(res, sizes) - _size(terms[i], sizes) - _size(terms[j], sizes)
                if best is None or cost < best[0]:
                    best = (cost, i, j, res)
        _, i, j, res = best
        terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [res]
        path.append((i, j))
    return path


def _left_to_right(n):
    return [(0, 1)] + [(0, n - 1 - k) for k in range(1, n - 1)] if n > 1 else []


def _explicit_path(optimize, n):
    """A user's path (``['einsum_path', (0, 1), ...]`` or the list of pairs) as pairs."""
    steps = list(optimize[1:] if optimize and optimize[0] == "einsum_path" else optimize)
    pairs, m = [], n
    for step in steps:
        step = tuple(int(i) for i in step)
        if len(set(step)) != len(step) or not all(0 <= i < m for i in step) or not step:
            raise ValueError(f"einsum: invalid contraction {step} in optimize path for {m} remaining operands")
        while len(step) > 2:  # a many-operand step: contract its first two, keep the rest
            pairs.append(step[:2])
            m -= 1
            step = tuple(i - sum(i > s for s in step[:2]) for i in step[2:]) + (m - 1,)
        if len(step) == 2:
            pairs.append(step)
            m -= 1
    if m != 1 and n > 0:
        raise ValueError(f"einsum: the optimize path leaves {m} operands uncontracted; it must end with one")
    return pairs


def _path(optimize, labels, out, sizes):
    n = len(labels)
    if isinstance(optimize, (list, tuple)):
        return _explicit_path(optimize, n)
    if optimize is False or optimize is None:
        return _left_to_right(n)
    if optimize is True or optimize in ("greedy", "optimal", "auto", "dp", "branch-all", "branch-2"):
        return greedy_path(labels, out, sizes)
    raise ValueError(f"einsum: optimize must be a bool, a path, or one of 'greedy', 'optimal', 'auto'; "
                     f"got {optimize!r}")


# --- einsum -------------------------------------------------------------------------------------
def _prepare(fname, subscripts, operands, dtype):
    subscripts, ops = _subscripts_and_operands(subscripts, operands)
    if not ops:
        raise ValueError(f"{fname}: at least one operand is required")
    if dtype is not None:
        dtype = dtypes.canonicalize(dtype, what=f"{fname} preferred_element_type")
        ops = [_util.asarray(o, dtype, fname=fname) for o in ops]
    ops, result_dtype = _products._promote(fname, *ops)
    shapes = [shape_of(x) for x in ops]
    labels, out = _parse_einsum(subscripts, shapes)
    return subscripts, ops, result_dtype, labels, out, _einsum_sizes(labels, shapes, subscripts)


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None, preferred_element_type=None,
           dtype=None):
    """Einstein summation, like ``numpy.einsum`` / ``jax.numpy.einsum``.

    >>> a, b = np.arange(6.).reshape(2, 3), np.arange(12.).reshape(3, 4)
    >>> np.array_equal(fnp.einsum('ij,jk->ik', a, b), a @ b)
    True
    >>> float(fnp.einsum(a, [0, 1], a, [0, 1]))    # sublist form: sum of squares
    55.0
    """
    if out is not None:
        raise NotImplementedError("einsum: out= is not supported (funcgrad arrays are immutable); "
                                  "use the return value")
    if precision is not None:
        check_precision("einsum", precision)
    if dtype is not None and preferred_element_type is not None:
        raise TypeError("einsum: pass either dtype or preferred_element_type, not both")
    want = dtype if preferred_element_type is None else preferred_element_type
    subscripts, ops, result_dtype, labels, out, sizes = _prepare("einsum", subscripts, operands, want)
    terms = []
    for x, lab in zip(ops, labels):
        x, lab = _take_diagonals(x, lab)
        # A size-1 dim that broadcasts against a larger one: drop it (absent == broadcast).
        drop = [i for i, l in enumerate(lab) if shape_of(x)[i] == 1 and sizes[l] != 1]
        if drop:
            x = lax.reshape(x, tuple(d for i, d in enumerate(shape_of(x)) if i not in drop))
            lab = [l for i, l in enumerate(lab) if i not in drop]
        terms.append((x, lab))

    def reduce_private(x, lab, others):
        keep = _kept(lab, others, out)
        return _products._sum(x, [i for i, l in enumerate(lab) if l not in keep]), keep

    # Sum away labels that only one operand uses, before any contraction.
    terms = [reduce_private(x, lab, [l2 for j, (_, l2) in enumerate(terms) if j != k])
             for k, (x, lab) in enumerate(terms)]
    for i, j in _path(optimize, labels, out, sizes):
        (x, xl), (y, yl) = terms[i], terms[j]
        terms = [t for k, t in enumerate(terms) if k not in (i, j)]
        keep = set(_kept(list(xl) + list(yl), [lab for _, lab in terms], out))
        shared = [l for l in xl if l in yl]
        batch = [l for l in shared if l in keep]
        contract = [l for l in shared if l not in keep]
        acc = _products._dot_general(
            x, y,
            ([xl.index(l) for l in contract], [yl.index(l) for l in contract]),
            ([xl.index(l) for l in batch], [yl.index(l) for l in batch]),
        )
        acc_lab = batch + [l for l in xl if l not in shared] + [l for l in yl if l not in shared]
        terms.append(reduce_private(acc, acc_lab, [lab for _, lab in terms]))
    acc, acc_lab = terms[0]
    acc, acc_lab = reduce_private(acc, acc_lab, [])
    acc = lax.transpose(acc, [acc_lab.index(l) for l in out])
    # Output dims that every operand broadcast (all size 1 or dropped) come back here.
    out_shape = tuple(sizes[l] for l in out)
    if shape_of(acc) != out_shape:
        acc = lax.broadcast_in_dim(acc, out_shape, tuple(range(len(out_shape))))
    return _products._finish(acc, result_dtype)


# --- einsum_path ---------------------------------------------------------------------------------
def _term_text(lab, names):
    return "".join(names[l] for l in lab)


def einsum_path(subscripts, /, *operands, optimize="greedy", einsum_call=False):
    """The contraction order ``einsum`` would use, as NumPy returns it: ``(path, text)``
    where ``path`` is ``['einsum_path', (i, j), ...]`` (each step contracts two positions
    of the current operand list and appends the result; ``optimize=False`` gives one
    step over all operands) and ``text`` a readable report of the steps and their sizes.
    The path can be passed back as ``einsum(..., optimize=path)``.

    >>> a = np.ones((2, 3)); b = np.ones((3, 4)); c = np.ones((4, 5))
    >>> fnp.einsum_path('ij,jk,kl->il', a, b, c)[0]
    ['einsum_path', (1, 2), (0, 1)]
    """
    if einsum_call:
        raise NotImplementedError("einsum_path: einsum_call=True is NumPy-internal and not supported")
    subscripts, ops, _, labels, out, sizes = _prepare("einsum_path", subscripts, operands, None)
    n = len(labels)
    if optimize is False or optimize is None:
        pairs, path = None, ["einsum_path", tuple(range(n))]
    else:
        pairs = _path(optimize, labels, out, sizes)
        path = ["einsum_path", *pairs]
    free = iter(c for c in _LETTERS if c not in sizes)
    names = {l: (l if isinstance(l, str) else next(free)) for l in sizes}
    every = list(dict.fromkeys(l for lab in labels for l in lab))
    naive = _size(every, sizes) * max(n, 1)
    terms, lines, largest, cost = [list(lab) for lab in labels], [], 0, 0
    for i, j in (pairs if pairs is not None else _left_to_right(n)):
        others = [t for k, t in enumerate(terms) if k not in (i, j)]
        res = _pair_labels(terms[i], terms[j], others, out) if others else list(out)
        touched = list(dict.fromkeys(terms[i] + terms[j]))
        cost += _size(touched, sizes) * 2
        largest = max(largest, _size(res, sizes))
        step = f"{_term_text(terms[i], names)},{_term_text(terms[j], names)}->{_term_text(res, names)}"
        terms = others + [res]
        rest = ",".join(_term_text(t, names) for t in terms) + "->" + _term_text(out, names)
        lines.append(f"{len(touched):>4}    {step:<40} {rest}")
    spec = ",".join(_term_text(lab, names) for lab in labels) + "->" + _term_text(out, names)
    scaling = max([int(line.split()[0]) for line in lines], default=len(every))
    text = "\n".join([
        f"  Complete contraction:  {spec}",
        f"         Naive scaling:  {len(every)}",
        f"     Optimized scaling:  {scaling}",
        f"      Naive FLOP count:  {naive:.3e}",
        f"  Optimized FLOP count:  {max(cost, 1):.3e}",
        f"   Theoretical speedup:  {naive / max(cost, 1):.3f}",
        f"  Largest intermediate:  {largest:.3e} elements",
        "-" * 74,
        f"{'scaling':<8}{'current':<41}remaining",
        "-" * 74,
        *lines,
    ])
    return path, text
