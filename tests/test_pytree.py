import collections
import dataclasses

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import tree_util as tu

Point = collections.namedtuple("Point", ["x", "y"])


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


tu.register_pytree_node(Pair, lambda p: ((p.a, p.b), "pair"), lambda aux, c: Pair(*c))


@tu.register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object


@dataclasses.dataclass
class Config:
    lr: object
    name: str


tu.register_dataclass(Config, data_fields=["lr"], meta_fields=["name"])

TREES = [
    1.0,
    (1, 2.0),
    [1, (2, 3), [4]],
    {"b": 1, "a": (2, 3)},
    None,
    (None, 1),
    Point(1.0, [2.0, 3.0]),
    Params(np.ones(2), 3.0),
    Config(0.1, "sgd"),
    {"p": Pair(1, {"z": 2})},
    (),
    [],
    {},
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_round_trip(tree):
    leaves, treedef = tu.tree_flatten(tree)
    rebuilt = tu.tree_unflatten(treedef, leaves)
    leaves2, treedef2 = tu.tree_flatten(rebuilt)
    assert treedef == treedef2 and hash(treedef) == hash(treedef2)
    assert all(a is b for a, b in zip(leaves, leaves2))
    assert type(rebuilt) is type(tree)


def test_dict_keys_sorted_and_none_is_a_node():
    assert tu.tree_leaves({"b": 1, "a": 2}) == [2, 1]
    assert tu.tree_leaves([None, 1, None]) == [1]
    assert tu.tree_structure({"b": 1, "a": 2}) == tu.tree_structure({"a": 0, "b": 0})


def test_structure_distinguishes_containers():
    assert tu.tree_structure((1, 2)) != tu.tree_structure([1, 2])
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure((1, 2))
    assert tu.tree_structure(Config(1, "a")) != tu.tree_structure(Config(1, "b"))


def test_tree_map_multiple_trees():
    out = tu.tree_map(lambda a, b: a + b, {"x": 1, "y": (2, 3)}, {"x": 10, "y": (20, 30)})
    assert out == {"x": 11, "y": (22, 33)}
    with pytest.raises(ValueError, match="structures differ"):
        tu.tree_map(lambda a, b: a, (1, 2), [1, 2])


def test_is_leaf():
    leaves = tu.tree_leaves([(1, 2), (3, 4)], is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2), (3, 4)]


def test_deep_tree_is_not_recursion_limited():
    tree = 0
    for _ in range(3000):
        tree = (tree,)
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == [0]


def test_unflatten_wrong_leaf_count():
    _, td = tu.tree_flatten((1, 2))
    with pytest.raises(ValueError, match="expects 2 leaves, got 3"):
        tu.tree_unflatten(td, [1, 2, 3])


def test_make_jaxpr_pytree_in_and_out():
    def f(params, batch):
        y = params.w * batch["x"] + params.b
        return {"y": y, "aux": (y.sum(), None)}

    params = Params(np.ones(3), 0.5)
    closed = fg.make_jaxpr(f)(params, {"x": np.arange(3.0)})
    assert len(closed.jaxpr.invars) == 3
    fg.check_jaxpr(closed)
    out = tu.tree_unflatten(closed.out_tree, fg.eval_closed_jaxpr(closed, np.ones(3), 0.5, np.arange(3.0)))
    np.testing.assert_allclose(out["y"], np.arange(3.0) + 0.5)
    assert out["aux"][1] is None
    eager = f(params, {"x": np.arange(3.0)})
    np.testing.assert_allclose(out["aux"][0], eager["aux"][0])
