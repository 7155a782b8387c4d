"""Loading untrusted export blobs: a program edited in the header and resealed (its
checksum recomputed, as anyone can) is checked in full before it is compiled or run.
Whatever the checker lets through cannot read or write outside its buffers; whatever
it stops is an ExportError naming the sub-program and the equation."""
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core.ir import ClosedJaxpr, Eqn, Jaxpr
from funcgrad.core.typecheck import JaxprTypeError, check_jaxpr
from funcgrad.errors import ExportError, LoweringError
from fuzz.blob_edit import BlobEditor, aval, ints
from fuzz.blob_mutate import _loss_while

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_x4 = np.array([0.3, -1.2, 0.8, 2.0])


def _double_twice(x):
    return lax.while_loop(lambda c: c[1] < 2, lambda c: (c[0] * 2.0, c[1] + 1), (x, 0))[0]


def while_carry_attack(n: int) -> bytes:
    """The exported ``_double_twice`` with its loop body declaring the f64[4] carry as
    f64[n] and computing with its last 4 elements ([n-4:n]): consistent in itself, so only
    a check of the body against the loop's operands stops it."""
    ed = BlobEditor(fg.export(fg.jit(_double_twice))(_x4).serialize())
    (loop,) = ed.eqns("while")
    body = ed.jaxpr(loop[3]["body_jaxpr"]["j"])
    body["in"][0] = aval("float64", [n])
    # Variables are numbered in binding order: 0, 1 the inputs, then equation outputs.
    # The new first equation binds 2; what used 0 now uses it, later numbers shift by one.
    shift = lambda a: a + 1 if type(a) is int and a >= 2 else (2 if a == 0 else a)  # noqa: E731
    for e in body["eqns"]:
        e[1] = [shift(a) for a in e[1]]
    body["out"] = [shift(a) for a in body["out"]]
    body["eqns"].insert(0, ["slice", [0], [aval("float64", [4])],
                            {"start_indices": ints([n - 4]), "limit_indices": ints([n]), "strides": None}])
    return ed.seal()


_ATTACK_SCRIPT = r"""
import pickle, sys
import numpy as np
import funcgrad as fg
sys.path.insert(0, sys.argv[2] + "/tests")
from funcgrad.errors import ExportError
from funcgrad.export.pickled_jit import _load_jitted
from test_export_untrusted import _double_twice, _x4, while_carry_attack

n = int(sys.argv[1])
jitted = fg.jit(_double_twice)
jitted(_x4)
loader, (name, names, nums, kw, entries) = jitted.__reduce__()


class Crafted:  # a pickle of the jitted function whose blob is the attack
    def __reduce__(self):
        return loader, (name, names, nums, kw, [(k, s, while_carry_attack(n)) for k, s, _ in entries])


blob, pickled = while_carry_attack(n), pickle.dumps(Crafted())
routes = {
    "deserialize().call": lambda: fg.deserialize(blob).call(_x4),
    "pickle.loads(jit)": lambda: pickle.loads(pickled)(_x4),
    "jit(e.call)": lambda: fg.jit(fg.deserialize(blob).call)(_x4),
}
for route, run in routes.items():
    try:
        out = run()
        print(route, "ACCEPTED", np.asarray(out).tolist())
    except ExportError as e:
        print(route, "REJECTED", str(e).splitlines()[0])
"""


@pytest.mark.parametrize("n", [8, 1000, 10**7])
def test_a_while_body_declaring_a_larger_carry_is_rejected_by_every_route(n):
    # (a subprocess: before the check, n = 10**7 died with SIGSEGV and smaller n read the heap)
    proc = subprocess.run([sys.executable, "-c", _ATTACK_SCRIPT, str(n), ROOT], capture_output=True, text=True,
                          cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT), timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 3, proc.stdout
    for line in lines:
        assert "REJECTED" in line, line
        assert "eqn 0 (while)" in line or "while" in line, line
        assert "body_jaxpr takes ['f64[%d]', 'i64[]'] but is given ['f64[4]', 'i64[]']" % n in line, line


def test_the_unedited_blob_still_runs():
    blob = fg.export(fg.jit(_double_twice))(_x4).serialize()
    np.testing.assert_array_equal(fg.deserialize(blob).call(_x4), _x4 * 4)


def _rejected(blob, *patterns):
    with pytest.raises(ExportError) as info:
        fg.deserialize(blob)
    msg = str(info.value)
    for p in patterns:
        assert p in msg, msg
    return msg


def test_a_tuple_fill_value_in_gather_is_rejected():
    f = lambda x, i: fnp.take(x, i, mode="fill", fill_value=-7.0)  # noqa: E731
    args = (np.ones(3), np.array([0, 5]))
    ed = BlobEditor(fg.export(fg.jit(f))(*args).serialize())
    (g,) = ed.eqns("gather")
    g[3]["fill_value"] = {"t": [{"f": (1.0).hex()}, {"f": (2.0).hex()}]}
    _rejected(ed.seal(), "gather", "fill_value=(1.0, 2.0)")
    ed_int = BlobEditor(fg.export(fg.jit(f))(np.arange(3), args[1]).serialize())
    (gi,) = ed_int.eqns("gather")
    gi[3]["fill_value"] = {"f": (0.5).hex()}  # a float fill for an integer gather: not a value it holds
    _rejected(ed_int.seal(), "gather", "fill_value must be None or a scalar of the operand's kind")
    # ... and the fill value of a valid program comes back and works
    loaded = fg.deserialize(fg.export(fg.jit(f))(*args).serialize())
    np.testing.assert_array_equal(loaded.call(*args), [1.0, -7.0])


def test_a_host_callback_in_a_blob_is_refused():
    ed = BlobEditor(fg.export(fg.jit(lambda x: fnp.sin(x) * 2))(_x4).serialize())
    (sin,) = ed.eqns("sin")
    sin[0] = "callback"
    _rejected(ed.seal(), "eqn 0 (callback)", "host callback")
    sin[3] = {"callback": None, "out_avals": {"t": [{"a": aval("float64", [4])}]}, "effect": None,
              "ordered": False, "vmap_method": None}
    _rejected(ed.seal(), "host callback")


def _cond_blob():
    f = lambda x: lax.cond(x[0] > 0, lambda v: v * 2, lambda v: -v, x)  # noqa: E731
    return BlobEditor(fg.export(fg.jit(f))(_x4).serialize())


def test_cond_branches_must_take_the_operands():
    ed = _cond_blob()
    (c,) = ed.eqns("cond")
    branch = ed.jaxpr(c[3]["branches"]["t"][1]["j"])
    branch["in"][0] = aval("float64", [1000])
    _rejected(ed.seal(), "cond: branch 1 takes ['f64[1000]'] but operands are ['f64[4]']")
    branch["in"][0] = aval("float32", [4])  # a wrong dtype: the same
    _rejected(ed.seal(), "cond: branch 1 takes ['f32[4]']")


def test_a_scan_body_whose_xs_shape_lies_is_rejected():
    f = lambda c, x: lax.scan(lambda c, v: (c + v, c * v), c, x)  # noqa: E731
    ed = BlobEditor(fg.export(fg.jit(f))(0.0, np.ones(3)).serialize())
    (s,) = ed.eqns("scan")
    body = ed.jaxpr(s[3]["jaxpr"]["j"])
    body["in"][1] = aval("float64", [64])
    _rejected(ed.seal(), "scan: body inputs ['f64[]', 'f64[64]'] do not match operands ['f64[]', 'f64[]']")
    body["in"][1] = aval("float64", [])
    s[3]["length"] = 300  # the scan's own length lies about xs
    _rejected(ed.seal(), "scan: scanned input f64[3] must have leading dimension 300")


def _grad_while_blob():
    return BlobEditor(fg.export(fg.jit(fg.grad(_loss_while)))(np.abs(_x4) + 0.5).serialize())


def test_tape_primitives_with_lying_types_are_rejected():
    ed = _grad_while_blob()
    (wt,) = ed.eqns("while_tape")
    wt[3]["tape_aval"]["a"]["tape"].append(aval("float64", [1000]))  # a record larger than the body writes
    _rejected(ed.seal(), "while_tape: the body's residuals")
    ed = _grad_while_blob()
    (ta,) = ed.eqns("tape_apply")
    body = ed.jaxpr(ta[3]["body"]["j"])
    body["in"][0] = aval("float64", [1000])  # a record field read as larger than it is
    _rejected(ed.seal(), "tape_apply: body takes ['f64[1000]'")
    ed = _grad_while_blob()
    (wt,) = ed.eqns("while_tape")
    wt[2][-1]["tape"].pop()  # the equation's declared tape output
    _rejected(ed.seal(), "while_tape output", "is declared tape[")


def test_a_wrong_dtype_in_a_while_body_input_is_rejected():
    ed = BlobEditor(fg.export(fg.jit(_double_twice))(_x4).serialize())
    (loop,) = ed.eqns("while")
    ed.jaxpr(loop[3]["body_jaxpr"]["j"])["in"][1] = aval("int32", [])
    _rejected(ed.seal(), "while: body_jaxpr takes ['f64[4]', 'i32[]'] but is given ['f64[4]', 'i64[]']")
    ed = BlobEditor(fg.export(fg.jit(_double_twice))(_x4).serialize())
    (loop,) = ed.eqns("while")
    ed.jaxpr(loop[3]["cond_jaxpr"]["j"])["in"][0] = aval("float32", [4])
    _rejected(ed.seal(), "while: cond_jaxpr takes ['f32[4]', 'i64[]']")


def test_params_are_checked_by_type_and_the_path_is_named():
    ed = BlobEditor(fg.export(fg.jit(_double_twice))(_x4).serialize())
    (loop,) = ed.eqns("while")
    loop[3]["body_nconsts"] = True  # a bool is not a count
    _rejected(ed.seal(), "eqn 0 (while)", "body_nconsts=True")
    loop[3]["body_nconsts"] = 0
    body = ed.jaxpr(loop[3]["body_jaxpr"]["j"])
    mul = next(e for e in body["eqns"] if e[0] == "broadcast_in_dim")
    mul[3]["shape"] = {"t": [{"f": (4.0).hex()}]}
    _rejected(ed.seal(), "eqn 0 (while).body_jaxpr: eqn 0 (broadcast_in_dim)", "shape=(4.0,)")
    mul[3]["shape"] = ints([4])
    mul[3]["extra"] = 1
    _rejected(ed.seal(), "'broadcast_in_dim' has no param(s) ['extra']")


def test_sizes_beyond_what_64_bit_offsets_hold_are_rejected():
    ed = BlobEditor(fg.export(fg.jit(lambda x: x.reshape(2, 2) * 2))(_x4).serialize())
    (r,) = ed.eqns("reshape")
    r[2][0] = aval("float64", [2 ** 40, 2 ** 40])
    r[3]["new_sizes"] = ints([2 ** 40, 2 ** 40])
    _rejected(ed.seal(), "more than")


def test_debug_typecheck_compares_sub_jaxpr_inputs_with_the_operands():
    closed = fg.make_jaxpr(_double_twice)(_x4)
    (loop,) = closed.jaxpr.eqns
    big_body = fg.make_jaxpr(lambda c, i: (c[4:] * 2.0, i + 1))(np.zeros(8), 0)
    bad = Eqn(loop.primitive, loop.inputs, loop.outputs, dict(loop.params, body_jaxpr=big_body))
    jaxpr = Jaxpr(closed.jaxpr.constvars, closed.jaxpr.invars, [bad], closed.jaxpr.outvars)
    with pytest.raises(JaxprTypeError, match=r"body_jaxpr takes \['f64\[8\]', 'i64\[\]'\]"):
        check_jaxpr(jaxpr)
    # the compiled lowering does not rely on the check having run: it refuses the body too
    from funcgrad import lowering

    with pytest.raises(LoweringError, match="sub-jaxpr's declared inputs"):
        lowering.compile_jaxpr(ClosedJaxpr(jaxpr, []), name="bad_while")


def test_a_loaded_jitted_function_with_a_valid_program_still_pickles_and_runs():
    jitted = fg.jit(_double_twice)
    jitted(_x4)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(jitted))(_x4), _x4 * 4)


def test_every_exportable_primitive_declares_its_param_kinds():
    """A primitive with a compiled form can appear in a blob: the loader must know the
    type of each of its params (``funcgrad/export/check.py``), or it refuses them all."""
    import inspect

    from funcgrad.core.primitive import PRIMITIVES, abstract_eval_rules, lower_rules
    from funcgrad.export.check import OPTIONAL_PARAMS, PARAM_KINDS, REFUSED

    wrong = {}
    for name, prim in PRIMITIVES.items():
        if prim not in lower_rules or name in REFUSED:
            continue
        params = inspect.signature(abstract_eval_rules[prim]).parameters.values()
        declared = {p.name for p in params if p.kind is p.KEYWORD_ONLY}
        defaults = {p.name for p in params if p.kind is p.KEYWORD_ONLY and p.default is not p.empty}
        if declared != set(PARAM_KINDS.get(name, {})) or defaults != OPTIONAL_PARAMS.get(name, set()):
            wrong[name] = (sorted(declared), sorted(defaults))
    assert not wrong, wrong
