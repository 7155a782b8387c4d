"""``funcgrad.tree``: the pytree functions under short names, as ``jax.tree``.

>>> import funcgrad as fg
>>> fg.tree.map(lambda x: 2 * x, {"a": 1, "b": (2, None)})
{'a': 2, 'b': (4, None)}
>>> fg.tree.leaves_with_path([1, {"k": 2}])
[((SequenceKey(idx=0),), 1), ((SequenceKey(idx=1), DictKey(key='k')), 2)]

``None`` is an empty subtree (no leaves), as in JAX; ``is_leaf`` stops the descent at
the nodes it accepts.
"""
import dataclasses

from funcgrad.core import pytree as _pt

__all__ = [
    "all", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map", "map_with_path",
    "reduce", "structure", "transpose", "unflatten", "broadcast", "reduce_associative", "static",
]


def map(f, tree, *rest, is_leaf=None):  # noqa: A001 - jax.tree.map
    """``f`` applied to corresponding leaves of ``tree`` and each tree in ``rest``."""
    return _pt.tree_map(f, tree, *rest, is_leaf=is_leaf)


def map_with_path(f, tree, *rest, is_leaf=None):
    """``f(key_path, leaf, *rest_leaves)`` for each leaf."""
    return _pt.tree_map_with_path(f, tree, *rest, is_leaf=is_leaf)


def leaves(tree, is_leaf=None) -> list:
    """The leaves of ``tree``, left to right (dicts by sorted key)."""
    return _pt.tree_leaves(tree, is_leaf)


def leaves_with_path(tree, is_leaf=None) -> list:
    """``[(key_path, leaf), ...]``."""
    return _pt.tree_leaves_with_path(tree, is_leaf)


def structure(tree, is_leaf=None):
    """The ``PyTreeDef`` of ``tree``."""
    return _pt.tree_structure(tree, is_leaf)


def flatten(tree, is_leaf=None):
    """``(leaves, treedef)``."""
    return _pt.tree_flatten(tree, is_leaf)


def flatten_with_path(tree, is_leaf=None):
    """``([(key_path, leaf), ...], treedef)``."""
    return _pt.tree_flatten_with_path(tree, is_leaf)


def unflatten(treedef, leaves):
    """The tree of structure ``treedef`` holding ``leaves``."""
    return _pt.tree_unflatten(treedef, leaves)


def reduce(function, tree, initializer=_pt._NO_INITIALIZER, is_leaf=None):
    """``functools.reduce(function, leaves(tree)[, initializer])``."""
    return _pt.tree_reduce(function, tree, initializer, is_leaf)


def all(tree, *, is_leaf=None) -> bool:  # noqa: A001 - jax.tree.all
    """Whether every leaf is truthy."""
    return _pt.tree_all(tree, is_leaf=is_leaf)


def transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """An outer tree of inner trees as an inner tree of outer trees."""
    return _pt.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def broadcast(prefix_tree, full_tree, is_leaf=None):
    """``prefix_tree``'s leaves repeated over the matching subtrees of ``full_tree``."""
    from funcgrad.tree_util import tree_broadcast

    return tree_broadcast(prefix_tree, full_tree, is_leaf)


def reduce_associative(operation, tree, *, identity=_pt._NO_INITIALIZER, is_leaf=None):
    """The leaves combined pairwise by the associative ``operation`` (balanced); ``identity``
    for a tree with no leaves."""
    from funcgrad.tree_util import tree_reduce_associative

    if identity is _pt._NO_INITIALIZER:
        return tree_reduce_associative(operation, tree, is_leaf=is_leaf)
    return tree_reduce_associative(operation, tree, identity=identity, is_leaf=is_leaf)


def static(**kwargs):
    """A ``dataclasses.field`` marked static for ``register_dataclass`` (its arguments are
    ``dataclasses.field``'s)."""
    metadata = dict(kwargs.pop("metadata", None) or {})
    metadata["static"] = True
    return dataclasses.field(metadata=metadata, **kwargs)
