"""The load-time check of a deserialized program: nothing from a blob is compiled or run
before every equation of every sub-program has been checked.

A blob's checksum says only that it was not damaged: anyone can write a blob. So the
decoded program is checked in full, in three layers, before ``deserialize`` returns it:

1. **Sizes.** Every aval in the header has dimensions and an element count below
   ``MAX_ELEMENTS`` (compiled code computes offsets in 64-bit integers; this keeps every
   product of sizes far from overflow). Checked as the header is decoded (``codec``).
2. **Params, by type.** Each primitive's params are exactly the ones it declares, each
   of the type it must have (``PARAM_KINDS``: an int is an int, not a bool or a float,
   within ``MAX_INT``; a shape is a tuple of ints; a sub-program is a closed jaxpr; a
   dtype is one funcgrad supports...). Host callbacks are refused, as at export. Tapes
   appear only where a primitive takes or makes them, never as the program's inputs or
   outputs.
3. **Types.** ``check_jaxpr`` runs every equation's ``abstract_eval`` on its input
   types and compares the result with the declared outputs; the rules check the values
   of their params (axes in range, slice bounds within the shape, dimension numbers
   consistent, fill values of the right kind) and a higher-order primitive's rule
   checks that each sub-program's declared inputs and outputs are exactly the values it
   passes and gets (the compiled loops lay out their buffers by those types).

Whatever fails is an ``ExportError`` naming the sub-program path and the equation; an
unexpected exception inside a rule is reported the same way (never raised as is).
"""
from __future__ import annotations

import math

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.avals import ShapedArray
from funcgrad.core.ir import ClosedJaxpr
from funcgrad.core.typecheck import JaxprTypeError, check_jaxpr, subjaxprs
from funcgrad.errors import ExportError
from funcgrad.tapes import TapeAval

MAX_ELEMENTS = 1 << 44  # per array (and per dimension): 16 Ti elements, far from i64 overflow
MAX_INT = 1 << 62  # any int param
MAX_MESSAGE = 3000  # characters of the type checker's context kept in the error
# Primitives that run Python code of the process that exported them: never loaded.
REFUSED = {"callback": "a host callback (pure_callback, io_callback, debug.callback, debug.print) runs Python "
                       "code, which a blob cannot carry"}


def aval_problem(aval) -> str | None:
    """Why ``aval`` (decoded from a header) is too large to be safe, or None."""
    todo = [aval]
    while todo:
        a = todo.pop()
        if any(d > MAX_ELEMENTS for d in a.shape) or math.prod(a.shape) > MAX_ELEMENTS:  # (Python ints)
            return f"aval {a.str_short()} has more than {MAX_ELEMENTS} elements"
        if isinstance(a, TapeAval):
            todo.extend(a.res_avals)
    return None


# --- param kinds ------------------------------------------------------------------------------
# A kind is a predicate on the decoded value; composite kinds are built from these.

def _int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and -MAX_INT <= v <= MAX_INT


def _bool(v) -> bool:
    return isinstance(v, (bool, np.bool_))


def _str(v) -> bool:
    return isinstance(v, str)


def _dtype(v) -> bool:
    if isinstance(v, type) and issubclass(v, np.generic):
        v = np.dtype(v)
    return isinstance(v, np.dtype) and v in dtypes.SUPPORTED


def _jaxpr(v) -> bool:
    return isinstance(v, ClosedJaxpr)


def _tape(v) -> bool:
    return isinstance(v, TapeAval)


def _scalar(v) -> bool:  # (the rule checks it fits the operand's dtype)
    return isinstance(v, (bool, int, float, complex, np.bool_, np.number))


def tuple_of(kind):
    return lambda v: isinstance(v, tuple) and all(kind(x) for x in v)


def fixed(*kinds):
    return lambda v: isinstance(v, tuple) and len(v) == len(kinds) and all(k(x) for k, x in zip(kinds, v))


def optional(kind):
    return lambda v: v is None or kind(v)


_ints = tuple_of(_int)
_bools = tuple_of(_bool)
_axis = {"axis": _int}
_axes = {"axes": _ints}
_while = {"cond_jaxpr": _jaxpr, "body_jaxpr": _jaxpr, "cond_nconsts": _int, "body_nconsts": _int}

# primitive name -> {param: kind}. Every param a primitive declares, no other; a
# primitive not listed takes none (the elementwise families, linalg without options).
PARAM_KINDS: dict[str, dict] = {
    "argmax": {**_axis, "index_dtype": _dtype},
    "argmin": {**_axis, "index_dtype": _dtype},
    "bitcast_convert_type": {"new_dtype": _dtype},
    "broadcast_in_dim": {"shape": _ints, "broadcast_dimensions": _ints},
    "concatenate": {"dimension": _int},
    "cond": {"branches": lambda v: isinstance(v, tuple) and len(v) >= 1 and all(_jaxpr(b) for b in v)},
    "convert_element_type": {"new_dtype": _dtype, "weak_type": _bool},
    "cumprod": {**_axis, "reverse": _bool},
    "cumsum": {**_axis, "reverse": _bool},
    "dot_general": {"dimension_numbers": fixed(fixed(_ints, _ints), fixed(_ints, _ints))},
    "dynamic_slice": {"slice_sizes": _ints},
    "eig": {"compute_eigenvectors": _bool},
    "eigh": {"lower": _bool},
    "fft": {"fft_type": _str, "fft_lengths": _ints},
    "gather": {"mode": _str, "fill_value": optional(_scalar)},
    "integer_pow": {"y": _int},
    "iota": {"dtype": _dtype, "shape": _ints, "dimension": _int},
    "pad": {"padding_config": tuple_of(fixed(_int, _int, _int))},
    "polygamma": {"n": _int},
    "reduce_max": _axes, "reduce_min": _axes, "reduce_prod": _axes, "reduce_sum": _axes,
    "reshape": {"new_sizes": _ints},
    "rev": {"dimensions": _ints},
    "scan": {"jaxpr": _jaxpr, "num_consts": _int, "num_carry": _int, "length": _int, "reverse": _bool,
             "linear": optional(_bools)},
    "scatter": {"kind": _str, "mode": _str},
    "slice": {"start_indices": _ints, "limit_indices": _ints, "strides": optional(_ints)},
    "sort": {"dimension": _int, "num_keys": _int},
    "svd": {"full_matrices": _bool, "compute_uv": _bool},
    "tape_apply": {"body": _jaxpr, "num_consts": _int, "reverse": _bool, "linear": _bools},
    "tape_empty": {"aval": _tape},
    "tape_scan": {"body": _jaxpr, "num_tapes": _int, "num_consts": _int, "reverse": _bool, "linear": _bools,
                  "ys_aval": optional(_tape)},
    "tape_split": {"n": _int},
    "tape_zeros": {"aval": _tape},
    "transpose": {"permutation": _ints},
    "triangular_solve": {"lower": _bool, "transpose_a": _bool, "unit_diagonal": _bool},
    "while": _while,
    "while_tape": {**_while, "tape_aval": _tape},
}
# Params a rule gives a default to (a blob may leave them out).
OPTIONAL_PARAMS = {"convert_element_type": {"weak_type"}, "cumprod": {"reverse"}, "cumsum": {"reverse"},
                   "eig": {"compute_eigenvectors"}, "eigh": {"lower"}, "gather": {"fill_value"},
                   "scan": {"linear"}, "slice": {"strides"}, "sort": {"num_keys"},
                   "svd": {"full_matrices", "compute_uv"}}


def params_problem(prim_name: str, params: dict) -> str | None:
    """What is wrong with an equation's params (names and types), or None."""
    if prim_name in REFUSED:
        return f"primitive '{prim_name}' is refused: {REFUSED[prim_name]}"
    kinds = PARAM_KINDS.get(prim_name, {})
    unknown = sorted(set(params) - set(kinds), key=str)
    if unknown:
        return f"'{prim_name}' has no param(s) {unknown}"
    missing = sorted(set(kinds) - set(params) - OPTIONAL_PARAMS.get(prim_name, set()))
    if missing:
        return f"'{prim_name}' lacks its param(s) {missing}"
    for k, v in params.items():
        if not kinds[k](v):
            return f"'{prim_name}' param {k}={_short(v)} has the wrong type or is out of range"
    return None


def _short(v) -> str:
    text = repr(v)
    return text if len(text) <= 120 else text[:117] + "..."


# --- the program ------------------------------------------------------------------------------

def _tape_problem(e, positions) -> str | None:
    ins, outs = positions(e)
    for k, a in enumerate(e.inputs):
        if isinstance(a.aval, TapeAval) and k not in ins:
            return f"'{e.primitive.name}' takes no tape as its operand {k}"
    for k, v in enumerate(e.outputs):
        if isinstance(v.aval, TapeAval) and k not in outs:
            return f"'{e.primitive.name}' makes no tape as its output {k}"
    return None


def check_program(closed: ClosedJaxpr, name: str) -> None:
    """Raise ``ExportError`` unless the loaded program ``closed`` (the function ``name``
    of a blob) is well-formed and well-typed throughout (see the module docstring)."""
    from funcgrad.lowering.tapes import tape_positions  # (where the compiled code handles tapes)

    def fail(where, what):
        raise ExportError(f"funcgrad.export.deserialize: rejected program {name!r}: {where}: {what}")

    root = closed.jaxpr
    if any(isinstance(a, TapeAval) for a in closed.in_avals + closed.out_avals):
        fail("the program", "a run-time tape as an input or output of the function")

    def each_eqn(check):  # (iterative: programs can be deep)
        todo = [(root, "")]
        while todo:
            jaxpr, path = todo.pop()
            for i, e in enumerate(jaxpr.eqns):
                where = f"{path}eqn {i} ({e.primitive.name})"
                problem = check(e)
                if problem:
                    fail(where, problem)
                todo.extend((sub, f"{where}.{k}: ") for k, sub in subjaxprs(e.params))

    each_eqn(lambda e: params_problem(e.primitive.name, e.params))
    try:
        check_jaxpr(closed)
    except JaxprTypeError as err:
        cause = err.__cause__
        kind = "" if cause is None or isinstance(cause, (TypeError, ValueError)) else f" ({type(cause).__name__})"
        text = str(err)
        if len(text) > MAX_MESSAGE:
            text = text[:MAX_MESSAGE] + " ..."
        fail("type check", text + kind)
    except RecursionError:
        fail("type check", "the program is nested too deeply")
    except Exception as err:  # noqa: BLE001  (whatever a crafted program trips: one documented error)
        fail("type check", f"{type(err).__name__}: {_short(err)}")
    for a in closed.in_avals + closed.out_avals:
        if not isinstance(a, ShapedArray):
            fail("the program", f"input or output of type {type(a).__name__}")
    # Last: where tapes may go is read from count params the rules have now range-checked.
    each_eqn(lambda e: _tape_problem(e, tape_positions))
