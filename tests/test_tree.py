"""funcgrad.tree and the rest of funcgrad.tree_util: key paths, keystr, registration by
class / with keys / dataclass, reduce, transpose, prefix matching, Partial through the
transforms."""
import collections
import dataclasses
import operator

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import tree
from funcgrad import tree_util as tu
from funcgrad.tree_util import DictKey, FlattenedIndexKey, GetAttrKey, Partial, SequenceKey

Pt = collections.namedtuple("Pt", ["x", "y"])


@tu.register_pytree_node_class
class Box:
    def __init__(self, value, label):
        self.value, self.label = value, label

    def tree_flatten(self):
        return (self.value,), self.label

    @classmethod
    def tree_unflatten(cls, label, children):
        return cls(children[0], label)


@tu.register_pytree_with_keys_class
class Linear:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def tree_flatten_with_keys(self):
        return ((GetAttrKey("w"), self.w), (GetAttrKey("b"), self.b)), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


class Anon:  # registered without keys
    def __init__(self, a, b):
        self.a, self.b = a, b


tu.register_pytree_node(Anon, lambda n: ((n.a, n.b), None), lambda _, c: Anon(*c))


@tu.register_dataclass
@dataclasses.dataclass
class Layer:
    w: object
    act: str = dataclasses.field(default="relu", metadata=dict(static=True))


@dataclasses.dataclass
class Opt:
    lr: object
    name: str
    cache: object = None


tu.register_dataclass(Opt, data_fields=["lr"], meta_fields=["name"], drop_fields=["cache"])


def test_tree_module_basics():
    t = {"b": (1, None, [2, 3]), "a": 4}
    leaves, td = tree.flatten(t)
    assert leaves == [4, 1, 2, 3]  # dicts by sorted key; None is an empty subtree
    assert tree.leaves(t) == leaves and tree.structure(t) == td
    assert tree.unflatten(td, [5, 6, 7, 8]) == {"a": 5, "b": (6, None, [7, 8])}
    assert tree.map(lambda x, y: x * y, t, t) == {"a": 16, "b": (1, None, [4, 9])}
    assert tree.reduce(operator.add, t) == 10 and tree.reduce(operator.add, t, 100) == 110
    assert tree.reduce(operator.add, [], 0) == 0
    with pytest.raises(TypeError, match="tree_reduce.*initializer"):
        tree.reduce(operator.add, [None])
    assert tree.all([1, (True, 2)]) and not tree.all([1, (0,)]) and tree.all([])
    # is_leaf stops the descent.
    assert tree.leaves([(1, 2), (3,)], is_leaf=lambda x: isinstance(x, tuple)) == [(1, 2), (3,)]
    assert tree.map(len, [(1, 2), (3,)], is_leaf=lambda x: isinstance(x, tuple)) == [2, 1]
    assert tree.all([0, 1], is_leaf=lambda x: isinstance(x, list)) is True  # the list itself is truthy


def test_tree_map_prefix_rule():
    # A leaf of the first tree matches a whole subtree of the others (JAX's rule).
    assert tree.map(lambda a, b: (a, b), [1, 2], [(3, 4), {"k": 5}]) == [(1, (3, 4)), (2, {"k": 5})]
    with pytest.raises(ValueError, match=r"tree_map.*tree 1.*prefix"):
        tree.map(lambda a, b: a, [1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match=r"tree_map.*prefix"):
        tree.map(lambda a, b: a, {"a": 1}, {"b": 1})


def test_key_paths_for_every_node_kind():
    t = {"a": [Pt(1, 2)], "b": (Layer(3),), "c": Linear(4, 5), "d": Anon(6, 7), "e": Box(8, "lbl"),
         "f": Opt(9, "sgd")}
    paths = [p for p, _ in tree.leaves_with_path(t)]
    assert [x for _, x in tree.leaves_with_path(t)] == tree.leaves(t)
    assert paths == [
        (DictKey("a"), SequenceKey(0), GetAttrKey("x")), (DictKey("a"), SequenceKey(0), GetAttrKey("y")),
        (DictKey("b"), SequenceKey(0), GetAttrKey("w")),
        (DictKey("c"), GetAttrKey("w")), (DictKey("c"), GetAttrKey("b")),
        (DictKey("d"), FlattenedIndexKey(0)), (DictKey("d"), FlattenedIndexKey(1)),
        (DictKey("e"), FlattenedIndexKey(0)),
        (DictKey("f"), GetAttrKey("lr")),
    ]
    assert tu.keystr(paths[0]) == "['a'][0].x"
    assert tu.keystr(paths[0], simple=True, separator="/") == "a/0/x"
    assert tu.keystr(paths[5]) == "['d'][<flat index 0>]"
    flat, td = tree.flatten_with_path(t)
    assert td == tree.structure(t) and len(flat) == 9
    named = tree.map_with_path(lambda p, x: tu.keystr(p), {"w": 1, "b": [2]})
    assert named == {"w": "['w']", "b": ["['b'][0]"]}
    assert tu.tree_map_with_path(lambda p, x, y: x + y, [1, 2], [10, 20]) == [11, 22]
    assert tu.tree_flatten_with_path(None)[0] == []
    assert tu.tree_leaves_with_path(5) == [((), 5)]
    assert hash(DictKey("a")) == hash(DictKey("a")) and repr(SequenceKey(1)) == "SequenceKey(idx=1)"


def test_registration_round_trips():
    for obj in (Box(np.ones(2), "x"), Linear(1.0, 2.0), Layer(np.zeros(3), "tanh"), Opt(0.1, "adam")):
        leaves, td = tree.flatten(obj)
        back = tree.unflatten(td, leaves)
        assert type(back) is type(obj) and tree.structure(back) == td
    assert tree.leaves(Layer(1.0, "tanh")) == [1.0]  # static field from the metadata
    assert tree.structure(Layer(1.0, "tanh")) != tree.structure(Layer(1.0, "relu"))
    assert tree.unflatten(tree.structure(Opt(1, "a", cache=[1])), [2]).cache is None  # dropped field
    with pytest.raises(TypeError, match="register_dataclass.*not a dataclass"):
        tu.register_dataclass(Anon)

    @dataclasses.dataclass
    class Half:
        a: object
        b: object

    with pytest.raises(ValueError, match="register_dataclass.*no init fields.*'z'"):
        tu.register_dataclass(Half, data_fields=["a", "z"], meta_fields=[])
    with pytest.raises(ValueError, match="already registered"):
        tu.register_pytree_node_class(Box)


def test_transpose():
    outer, inner = tree.structure([0, 0, 0]), tree.structure({"a": 0, "b": 0})
    t = [{"a": 1, "b": 2}, {"a": 3, "b": 4}, {"a": 5, "b": 6}]
    want = {"a": [1, 3, 5], "b": [2, 4, 6]}
    assert tree.transpose(outer, inner, t) == want
    assert tree.transpose(outer, None, t) == want
    assert tu.tree_transpose(inner, outer, want) == t
    with pytest.raises(TypeError, match="tree_transpose"):
        tree.transpose(outer, tree.structure((0, 0, 0)), t)


def test_custom_nodes_through_transforms():
    params = {"lin": Linear(np.array([1.0, 2.0]), 0.5), "layer": Layer(np.array([3.0]), "relu")}

    def loss(p, x):
        return fnp.sum(p["lin"].w * x + p["lin"].b) + fnp.sum(p["layer"].w ** 2)

    x = np.array([0.3, -0.2])
    g = fg.grad(loss)(params, x)
    assert isinstance(g["lin"], Linear) and g["layer"].act == "relu"
    np.testing.assert_allclose(g["lin"].w, x)
    assert float(g["lin"].b) == 2.0
    np.testing.assert_allclose(g["layer"].w, [6.0])
    assert float(fg.jit(loss)(params, x)) == pytest.approx(float(loss(params, x)))
    out = fg.jit(lambda p: Box(p["lin"].w * 2, "doubled"))(params)
    assert isinstance(out, Box) and out.label == "doubled"
    np.testing.assert_allclose(out.value, [2.0, 4.0])
    batched = fg.vmap(lambda b: b.value * 2, in_axes=(Box(0, "l"),))(Box(np.arange(6.0).reshape(3, 2), "l"))
    np.testing.assert_allclose(batched, np.arange(6.0).reshape(3, 2) * 2)


def _affine(x, *, shift):
    return 2 * x + shift


def test_partial_is_a_pytree_through_jit_vmap_grad():
    p = Partial(fnp.multiply, 2.0)
    assert p(4.0) == 8.0 and isinstance(p, Partial)
    leaves, td = tree.flatten(Partial(fnp.add, 1.0, out=None))
    assert leaves == [1.0]  # keyword None is an empty subtree; the function is structure
    assert tree.flatten(Partial(fnp.add, 1.0))[1] == tree.flatten(Partial(fnp.add, 5.0))[1]
    assert tree.flatten(Partial(fnp.add, 1.0))[1] != tree.flatten(Partial(fnp.subtract, 1.0))[1]

    apply = fg.jit(lambda f, x: f(x))
    assert apply(p, 3.0) == 6.0 and apply(Partial(fnp.multiply, 5.0), 3.0) == 15.0
    assert apply.cache_size() == 1  # the arguments are leaves: one compilation
    out = fg.vmap(lambda f, x: f(x))(Partial(fnp.multiply, np.arange(3.0)), np.full(3, 2.0))
    np.testing.assert_allclose(out, [0.0, 2.0, 4.0])
    g = fg.grad(lambda f, x: f(x))(Partial(fnp.power, 3.0), 2.0)  # d/db b**2 at b=3
    assert isinstance(g, Partial) and g.func is fnp.power and float(g.args[0]) == 6.0
    made = fg.jit(lambda a: Partial(fnp.add, a))(1.5)
    assert isinstance(made, Partial) and made(1.0) == 2.5
    kw = Partial(_affine, shift=np.ones(3))  # keyword arguments are leaves too
    np.testing.assert_allclose(fg.jit(lambda f, x: f(x))(kw, np.ones(3)), [3.0, 3.0, 3.0])
    np.testing.assert_allclose(fg.grad(lambda f: fnp.sum(f(1.0)))(kw).keywords["shift"], np.ones(3))
    assert [tu.keystr(k) for k, _ in tree.leaves_with_path(Partial(fnp.add, 1.0, 2.0))] == [".args[0]", ".args[1]"]


def test_flatten_up_to_errors_name_the_mismatch():
    td = tree.structure((0, [0, 0]))
    assert td.flatten_up_to((1, [2, {"x": 3}])) == [1, 2, {"x": 3}]
    with pytest.raises(ValueError, match=r"expected a \[\*, \*\] node, got a leaf"):
        td.flatten_up_to((1, 2))
