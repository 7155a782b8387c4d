"""``fnp.ufunc`` / ``fnp.frompyfunc`` and the ufunc methods of funcgrad.numpy's own
functions: what the op-table rows (``tests/op_rows/ufuncs.py``: values vs NumPy, grads,
vmap, jit) do not cover — NumPy's object-array ``frompyfunc``, attributes, traced
indices, the fast forms being used, immutability, typed errors, docstring examples."""
import doctest
import operator

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.numpy_api import ufuncs


def _close(got, want):
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, np.asarray(want, dtype=got.dtype), rtol=1e-14)


def test_frompyfunc_against_numpys_object_ufunc():
    f = lambda a, b: a * b - a  # noqa: E731
    x, y = np.arange(1.0, 7.0).reshape(2, 3), np.array([2.0, -1.0, 0.5])
    ours, theirs = fnp.frompyfunc(f, 2, 1), np.frompyfunc(f, 2, 1)
    _close(ours(x, y), theirs(x, y).astype(float))
    _close(ours.outer(y, y), theirs.outer(y, y).astype(float))
    _close(ours.accumulate(x, axis=1), theirs.accumulate(x, axis=1).astype(float))
    _close(ours.reduce(x, axis=1), theirs.reduce(x, axis=1).astype(float))
    _close(ours.reduceat(y, [0, 2]), theirs.reduceat(y, [0, 2]).astype(float))
    at = x.astype(object)
    theirs.at(at, (np.array([0, 0, 1]), np.array([2, 2, 0])), 3.0)
    _close(ours.at(x, (np.array([0, 0, 1]), np.array([2, 2, 0])), 3.0, inplace=False), at.astype(float))
    # a one-dimensional fold over every element, in order (NumPy's order too)
    _close(fnp.frompyfunc(operator.sub, 2, 1).reduce(np.arange(5.0), axis=None), np.subtract.reduce(np.arange(5.0)))


def test_attributes_and_identity():
    uf = fnp.frompyfunc(operator.add, 2, 1, identity=0)
    assert (uf.nin, uf.nout, uf.nargs, uf.identity, uf.__name__) == (2, 1, 2, 0, "add")
    assert repr(uf) == "<fnp.ufunc 'add'>" and isinstance(uf, fnp.ufunc)
    named = fnp.ufunc(operator.add, 2, 1, name="plus", nargs=3)
    assert (named.__name__, named.nargs) == ("plus", 3)
    assert uf == fnp.frompyfunc(operator.add, 2, 1, identity=0) and hash(uf) == hash(fnp.frompyfunc(operator.add, 2, 1,
                                                                                                     identity=0))
    assert uf != fnp.frompyfunc(operator.add, 2, 1)
    with pytest.raises(AttributeError):
        uf.nin = 3
    for name in ("add", "multiply", "logical_and", "bitwise_and", "maximum", "subtract"):
        ours, theirs = getattr(fnp, name), getattr(np, name)
        assert isinstance(ours, fnp.ufunc)
        assert (ours.nin, ours.nout, ours.nargs) == (theirs.nin, theirs.nout, 2)
        assert ours.identity == theirs.identity
    assert (fnp.negative.nin, fnp.modf.nout, fnp.divmod.nin) == (1, 2, 2)
    assert not isinstance(fnp.sum, fnp.ufunc)


def test_own_functions_keep_their_eager_fast_path():
    """The methods are attributes on the final public function objects: nothing wraps them."""
    assert fnp.add.eager_fast and fnp.add.general is not fnp.add
    assert fnp.add._ufunc._impls["call"] is fnp.add
    x = np.arange(3.0)
    np.testing.assert_array_equal(fnp.add(x, x), 2 * x)


def test_fast_forms_are_used():
    x = np.arange(6.0).reshape(2, 3)
    assert "reduce_sum" in str(fg.make_jaxpr(lambda v: fnp.add.reduce(v))(x))
    assert "cumsum" in str(fg.make_jaxpr(lambda v: fnp.add.accumulate(v))(x))
    assert "scatter" in str(fg.make_jaxpr(lambda v: fnp.add.at(v, ([0, 0], [1, 1]), 1.0, inplace=False))(x))
    assert "scan" in str(fg.make_jaxpr(lambda v: fnp.subtract.reduce(v))(x))
    assert "scan" not in str(fg.make_jaxpr(lambda v: fnp.bitwise_or.reduce(v))(np.arange(6)))


def test_at_with_traced_indices_and_jit():
    sub = fnp.frompyfunc(operator.sub, 2, 1)
    x, idx, b = np.arange(5.0), np.array([4, 1, 4, 4]), np.array([1.0, 2.0, 3.0, 4.0])
    want = x.copy()
    np.subtract.at(want, idx, b)
    f = fg.jit(lambda v, i, w: sub.at(v, i, w, inplace=False))
    got = f(x, idx, b)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(fg.jit(lambda v, i: fnp.negative.at(v, i, inplace=False))(x, idx),
                                  [0.0, -1.0, 2.0, 3.0, -4.0])


def test_reduceat_with_traced_indices():
    x, idx = np.arange(8.0), np.array([0, 4, 1, 5])
    got = fg.jit(lambda v, i: fnp.maximum.reduceat(v, i))(x, idx)
    np.testing.assert_array_equal(got, np.maximum.reduceat(x, idx))


def test_ufunc_as_static_jit_argument():
    f = fg.jit(lambda uf, v: uf.reduce(v), static_argnums=0)
    x = np.arange(1.0, 5.0)
    assert f(fnp.frompyfunc(operator.sub, 2, 1), x) == np.subtract.reduce(x)
    assert f(fnp.frompyfunc(operator.mul, 2, 1), x) == np.multiply.reduce(x)


def test_results_are_values():
    x = np.arange(3.0)
    out = fnp.add.at(x, [], 1.0, inplace=False)  # nothing to update: still a new read-only value
    assert not out.flags.writeable and not np.shares_memory(out, x)
    empty = fnp.frompyfunc(operator.add, 2, 1, identity=0).reduce(np.zeros(0))
    assert np.ndim(empty) == 0 and empty == 0.0


def test_grad_through_a_python_ufunc():
    hyp = fnp.frompyfunc(lambda a, b: fnp.sqrt(a * a + b * b), 2, 1)
    x = np.array([3.0, 4.0, 12.0])
    g = fg.grad(lambda v: hyp.reduce(v))(x)  # sqrt(3^2 + 4^2 + 12^2) = 13
    np.testing.assert_allclose(g, x / 13.0, rtol=1e-14)
    fg.test_util.check_grads(lambda v: hyp.accumulate(v), (x,), order=2)
    fg.test_util.check_grads(lambda v: hyp.outer(v, v[:2]), (x,), order=1)


@pytest.mark.parametrize("call,err,words", [
    (lambda: fnp.negative.reduce(np.ones(3)), ValueError, ["negative.reduce", "binary", "nin=1"]),
    (lambda: fnp.divmod.accumulate(np.ones(3)), ValueError, ["divmod.accumulate", "nout=2"]),
    (lambda: fnp.negative.outer(np.ones(3), np.ones(3)), ValueError, ["negative.outer", "binary"]),
    (lambda: fnp.subtract.reduce(np.ones((0, 2))), ValueError, ["subtract.reduce", "(0, 2)", "no identity"]),
    (lambda: fnp.maximum.reduce(np.ones(3), where=np.ones(3, bool)), ValueError, ["maximum.reduce", "initial"]),
    (lambda: fnp.add.reduce(np.ones(3), where=np.ones(3)), TypeError, ["add.reduce", "bool", "float64"]),
    (lambda: fnp.add.reduce(np.ones(3), where=np.ones(2, bool)), ValueError, ["add.reduce", "(2,)", "(3,)"]),
    (lambda: fnp.add.reduce(np.ones(3), initial=np.ones(2)), ValueError, ["add.reduce", "initial", "(2,)"]),
    (lambda: fnp.add.reduce(np.ones(3), axis=1), ValueError, ["add.reduce"]),
    (lambda: fnp.add.reduce(np.ones(3), out=np.ones(())), NotImplementedError, ["add.reduce", "out"]),
    (lambda: fnp.add.accumulate(np.ones((2, 2)), axis=None), ValueError, ["add.accumulate", "one integer axis"]),
    (lambda: fnp.add.accumulate(np.float64(1.0)), ValueError, ["add.accumulate", "scalar"]),
    (lambda: fnp.add.at(np.ones(3), [0], 1.0), NotImplementedError, ["add.at", "inplace=False"]),
    (lambda: fnp.negative.at(np.ones(3), [0], 1.0, inplace=False), TypeError, ["negative.at", "nin=1"]),
    (lambda: fnp.subtract.at(np.ones(3), [0], inplace=False), TypeError, ["subtract.at", "nin=2"]),
    (lambda: fnp.subtract.at(np.ones(3), [0, 1], np.ones(3), inplace=False), ValueError, ["subtract.at", "(3,)",
                                                                                           "(2,)"]),
    (lambda: fnp.add.reduceat(np.ones(4), [0, 4]), IndexError, ["add.reduceat", "4", "[0, 4)"]),
    (lambda: fnp.add.reduceat(np.ones(4), [[0]]), TypeError, ["add.reduceat", "1-d integer"]),
    (lambda: fnp.add.reduceat(np.float64(1.0), [0]), ValueError, ["add.reduceat", "shape ()"]),
    (lambda: fnp.frompyfunc(operator.add, 2, 1)(np.ones(2)), TypeError, ["add", "2 positional", "got 1"]),
    (lambda: fnp.frompyfunc(operator.add, 2, 1)(np.ones(2), 1.0, out=np.ones(2)), NotImplementedError, ["out"]),
    (lambda: fnp.frompyfunc(operator.add, 2, 1)("a", 1.0), TypeError, ["add"]),
    (lambda: fnp.frompyfunc(3, 2, 1), TypeError, ["ufunc", "callable", "int"]),
    (lambda: fnp.frompyfunc(operator.add, 0, 1), ValueError, ["ufunc", "nin", "0"]),
    (lambda: fnp.frompyfunc(operator.add, 2.5, 1), TypeError, ["ufunc", "nin", "float"]),
    (lambda: fnp.frompyfunc(lambda a, b: fnp.ones(2), 2, 1).reduce(np.ones(3)), ValueError, ["reduce",
                                                                                            "elementwise"]),
])
def test_errors_name_the_method_and_shapes(call, err, words):
    with pytest.raises(err) as info:
        call()
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def test_docstring_examples():
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    parser = doctest.DocTestParser()
    globs = {"fnp": fnp, "np": np, "operator": operator}
    objects = [ufuncs.ufunc, ufuncs.frompyfunc] + [getattr(ufuncs.ufunc, m) for m in
                                                   ("reduce", "accumulate", "at", "reduceat", "outer")]
    for obj in objects:
        runner.run(parser.get_doctest(obj.__doc__, dict(globs), obj.__qualname__, None, 0))
    result = runner.summarize(verbose=False)
    assert result.attempted >= 7 and result.failed == 0, result
