"""The rest of ``jax.tree_util`` / ``jax.tree``: values as JAX 0.10.2 gives them."""
import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import tree_util as tu


class Point(NamedTuple):
    x: float
    y: float


def test_all_leaves_and_is_tree_node():
    assert tu.all_leaves([1, 2.0, np.ones(2)]) and not tu.all_leaves([1, None, 2])
    assert not tu.all_leaves([1, (2,)]) and tu.all_leaves([1, (2,)], is_leaf=lambda x: isinstance(x, tuple))
    assert tu.is_tree_node(type(None)) and tu.is_tree_node(list) and tu.is_tree_node(Point)
    assert not tu.is_tree_node(int) and not tu.is_tree_node(np.ndarray)
    assert tu.default_registry.is_node(dict)


def test_flatten_one_level():
    assert tu.flatten_one_level({"b": 1, "a": [2]}) == (([2], 1), ("a", "b"))
    assert tu.flatten_one_level(None) == ((), None)
    assert tu.flatten_one_level(Point(1, 2)) == ((1, 2), None)
    keyed, aux = tu.flatten_one_level_with_keys({"b": 1, "a": [2]})
    assert keyed == ((tu.DictKey("a"), [2]), (tu.DictKey("b"), 1)) and aux == ("a", "b")
    with pytest.raises(ValueError, match="flatten_one_level.*leaf"):
        tu.flatten_one_level(1.0)
    assert tu.default_registry.flatten_one_level(1.0) is None
    children, aux, keys = tu.default_registry.flatten_one_level_with_keys([3, 4])
    assert list(children) == [3, 4] and keys == [tu.SequenceKey(0), tu.SequenceKey(1)]


def test_register_static_passes_through_jit_as_structure():
    @tu.register_static
    class Scale:
        def __init__(self, k):
            self.k = k

        def __eq__(self, other):
            return isinstance(other, Scale) and other.k == self.k

        def __hash__(self):
            return hash(self.k)

    s = Scale(3.0)
    leaves, treedef = tu.tree_flatten([s, 2.0])
    assert leaves == [2.0] and tu.tree_unflatten(treedef, [5.0])[0] is s
    traces = []

    @fg.jit
    def f(scale, x):
        traces.append(1)
        return scale.k * x

    np.testing.assert_allclose(f(s, np.arange(3.0)), 3.0 * np.arange(3.0))
    np.testing.assert_allclose(f(Scale(4.0), np.arange(3.0)), 4.0 * np.arange(3.0))
    assert len(traces) == 2  # a new static value is a new signature


def test_tree_broadcast():
    assert tu.tree_broadcast([1, {"a": 2}], [(3, 4), {"a": [5, 6]}]) == [(1, 1), {"a": [2, 2]}]
    assert fg.tree.broadcast(0.5, {"w": 1, "b": (2, 3)}) == {"w": 0.5, "b": (0.5, 0.5)}
    with pytest.raises(ValueError, match="prefix"):
        tu.tree_broadcast([1, 2], (3, 4))


def test_tree_reduce_associative():
    assert tu.tree_reduce_associative(lambda a, b: (a, b), [1, 2, 3, 4, 5]) == ((1, 2), (3, (4, 5)))
    assert fg.tree.reduce_associative(lambda a, b: a + b, {"a": 1, "b": [2, 3]}) == 6
    assert tu.tree_reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        fg.tree.reduce_associative(lambda a, b: a + b, [])


def test_treedef_tuple_and_key_types():
    td = tu.treedef_tuple([tu.tree_structure(1), tu.tree_structure([1, 2])])
    assert td == tu.tree_structure((1, [2, 3]))
    assert tu.tree_unflatten(td, [1, 2, 3]) == (1, [2, 3])
    path, _ = tu.tree_flatten_with_path({"a": [1]})[0][0]
    assert isinstance(path, tu.KeyPath) and path == (tu.DictKey("a"), tu.SequenceKey(0))


def test_tree_static_field():
    @tu.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: np.ndarray
        name: str = fg.tree.static(default="add")

    op = Op(np.ones(2))
    leaves, treedef = fg.tree.flatten(op)
    assert len(leaves) == 1 and fg.tree.unflatten(treedef, leaves).name == "add"
