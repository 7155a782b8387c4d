"""Public pytree utilities (``fg.tree_util``, as ``jax.tree_util``), and ``Partial``."""
import functools
from typing import Any, Union

from funcgrad.core import pytree as _pt
from funcgrad.core.pytree import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    PyTreeDef,
    SequenceKey,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    register_pytree_with_keys_class,
    tree_all,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_leaves_with_path,
    tree_map,
    tree_map_with_path,
    tree_reduce,
    tree_structure,
    tree_transpose,
    tree_unflatten,
    treedef_children,
    treedef_is_leaf,
)

__all__ = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "Partial", "PyTreeDef", "SequenceKey", "keystr",
    "register_dataclass", "register_pytree_node", "register_pytree_node_class", "register_pytree_with_keys",
    "register_pytree_with_keys_class", "tree_all", "tree_flatten", "tree_flatten_with_path", "tree_leaves",
    "tree_leaves_with_path", "tree_map", "tree_map_with_path", "tree_reduce", "tree_structure",
    "tree_transpose", "tree_unflatten", "treedef_children", "treedef_is_leaf",
    "KeyEntry", "KeyPath", "all_leaves", "default_registry", "flatten_one_level", "flatten_one_level_with_keys",
    "is_tree_node", "register_static", "tree_broadcast", "tree_reduce_associative", "treedef_tuple",
]


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: its positional and keyword arguments
    are children (leaves), the function is static structure. So it can be passed to
    (and returned from) ``jit``, ``vmap`` and ``grad`` functions as an argument.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> scale = Partial(fnp.multiply, 2.0)
    >>> fg.jit(lambda f, x: f(x))(scale, 3.0)
    Array(6.)
    """

    def __repr__(self):
        return "Partial(" + super().__repr__().partition("(")[2]


def _partial_flatten(p):
    return (p.args, p.keywords), p.func


def _partial_flatten_with_keys(p):
    return ((GetAttrKey("args"), p.args), (GetAttrKey("keywords"), p.keywords)), p.func


register_pytree_with_keys(Partial, _partial_flatten_with_keys, lambda func, c: Partial(func, *c[0], **c[1]),
                          _partial_flatten)


KeyEntry = Union[SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey, Any]
KeyPath = tuple  # tuple[KeyEntry, ...]: the keys from the root to a leaf (``tree_flatten_with_path``)


def all_leaves(iterable, is_leaf=None) -> bool:
    """Whether every element of ``iterable`` is a leaf (``None`` is not: it is an empty node).

    >>> all_leaves([1.0, "a"]), all_leaves([1.0, (2.0,)])
    (True, False)
    """
    items = list(iterable)
    return all(_pt.node_of(x, is_leaf) is None for x in items)


def is_tree_node(typ) -> bool:
    """Whether ``typ`` is a pytree node type: a registered class (``tuple``, ``list``,
    ``dict``, ``NoneType`` and the user's) or a namedtuple class.

    >>> is_tree_node(list), is_tree_node(float)
    (True, False)
    """
    return _pt.is_node_type(typ)


def flatten_one_level(tree):
    """``(children, aux_data)`` of the root node of ``tree`` (one level only; a dict's
    children by sorted key, its aux data the keys). ``ValueError`` for a leaf.

    >>> flatten_one_level({"b": 1, "a": [2]})
    (([2], 1), ('a', 'b'))
    """
    node = _pt.node_of(tree)
    if node is None:
        raise ValueError(f"flatten_one_level: can't tree-flatten type {type(tree)}: it is a leaf")
    return tuple(node[1]), node[2]


def flatten_one_level_with_keys(tree):
    """``(((key, child), ...), aux_data)`` of the root node of ``tree``; ``ValueError`` for a leaf.

    >>> flatten_one_level_with_keys([5, 6])[0]
    ((SequenceKey(idx=0), 5), (SequenceKey(idx=1), 6))
    """
    node = _pt.node_with_keys(tree)
    if node is None:
        raise ValueError(f"flatten_one_level_with_keys: can't tree-flatten type {type(tree)}: it is a leaf")
    return tuple(zip(node[1], node[0])), _pt.node_of(tree)[2]


def register_static(cls):
    """Register ``cls`` as a pytree with no leaves: an instance is all structure (it must be
    hashable and comparable), so it passes through ``jit`` as a static value. Usable as a
    decorator; returns ``cls``.

    >>> @register_static
    ... class Mode:
    ...     def __init__(self, name): self.name = name
    ...     def __eq__(self, other): return isinstance(other, Mode) and other.name == self.name
    ...     def __hash__(self): return hash(self.name)
    >>> tree_leaves([Mode("fast"), 1.0])
    [1.0]
    """
    register_pytree_node(cls, lambda node: ((), node), lambda node, _: node)
    return cls


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """``prefix_tree`` with each leaf repeated over the subtree of ``full_tree`` at its place
    (``prefix_tree``'s structure must be a prefix of ``full_tree``'s).

    >>> tree_broadcast([1, {"a": 2}], [(3, 4), {"a": [5, 6]}])
    [(1, 1), {'a': [2, 2]}]
    """
    leaves, treedef = tree_flatten(prefix_tree, is_leaf)
    subtrees = treedef.flatten_up_to(full_tree)
    return tree_unflatten(treedef, [tree_map(lambda _, x=x: x, sub, is_leaf=is_leaf)
                                    for x, sub in zip(leaves, subtrees)])


_NO_IDENTITY = object()


def tree_reduce_associative(operation, tree, *, identity=_NO_IDENTITY, is_leaf=None):
    """The leaves of ``tree`` combined pairwise by the associative ``operation`` as a
    balanced tree (``op(op(a, b), op(c, d))``-shaped, as JAX's); ``identity`` is the
    result for a tree with no leaves (a ``TypeError`` without it).

    >>> tree_reduce_associative(lambda a, b: (a, b), [1, 2, 3, 4, 5])
    ((1, 2), (3, (4, 5)))
    """
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _NO_IDENTITY:
            raise TypeError("tree_reduce_associative: the tree has no leaves; give identity= for this case")
        return identity

    def reduce(items):  # recursion depth is log2(len(leaves))
        if len(items) == 1:
            return items[0]
        half = len(items) // 2
        return operation(reduce(items[:half]), reduce(items[half:]))

    return reduce(leaves)


def treedef_tuple(treedefs) -> PyTreeDef:
    """The structure of a tuple whose children have the structures ``treedefs``.

    >>> treedef_tuple([tree_structure(1), tree_structure([1, 2])])
    PyTreeDef((*, [*, *]))
    """
    return PyTreeDef(tuple, None, tuple(treedefs))


class PyTreeRegistry:
    """The pytree registry's methods, as JAX's ``default_registry`` has them (funcgrad has one
    registry: these act on it)."""

    def flatten(self, tree, leaf_predicate=None):
        """``(leaves, treedef)``."""
        return tree_flatten(tree, leaf_predicate)

    def flatten_with_path(self, tree, leaf_predicate=None):
        """``([(key_path, leaf), ...], treedef)``."""
        return tree_flatten_with_path(tree, leaf_predicate)

    def flatten_one_level(self, tree):
        """``(children, aux_data)`` of the root, or None for a leaf."""
        node = _pt.node_of(tree)
        return None if node is None else (node[1], node[2])

    def flatten_one_level_with_keys(self, tree):
        """``(children, aux_data, keys)`` of the root, or None for a leaf."""
        node = _pt.node_with_keys(tree)
        return None if node is None else (node[0], _pt.node_of(tree)[2], node[1])

    def is_node(self, typ) -> bool:
        """Whether ``typ`` is a node type."""
        return is_tree_node(typ)

    def register_node(self, nodetype, to_iterable, from_iterable, to_iterable_with_keys=None):
        """``register_pytree_node`` (``to_iterable_with_keys`` returns ``((key, child), ...), aux``)."""
        register_pytree_node(nodetype, to_iterable, from_iterable, to_iterable_with_keys)

    def register_dataclass_node(self, nodetype, data_fields, meta_fields):
        """``register_dataclass`` with explicit field lists."""
        register_dataclass(nodetype, data_fields, meta_fields)


default_registry = PyTreeRegistry()
