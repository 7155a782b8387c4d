"""Pytrees: nested containers (tuple, list, dict, None, namedtuple, registered classes,
dataclasses) flattened to a list of leaves plus a hashable ``PyTreeDef``.

dict children are ordered by sorted key, as in JAX, so the structure does not depend
on insertion order. Flattening is iterative (no recursion limit on deep trees).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, NamedTuple


class _NodeType(NamedTuple):
    to_iterable: Callable  # node -> (children, aux_data)
    from_iterable: Callable  # (aux_data, children) -> node


_registry: dict[type, _NodeType] = {}


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable) -> None:
    """Register ``nodetype`` as a pytree node.

    ``flatten_func(node) -> (children, aux_data)``; ``unflatten_func(aux_data, children)
    -> node``. ``aux_data`` must be hashable and comparable.

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    """
    if nodetype in _registry:
        raise ValueError(f"{nodetype.__name__} is already registered as a pytree node")
    _registry[nodetype] = _NodeType(flatten_func, unflatten_func)


def register_dataclass(cls=None, *, data_fields=None, meta_fields=None):
    """Register a dataclass as a pytree node (usable as a decorator).

    By default every field is a child (data); name ``meta_fields`` to keep some fields
    as static structure instead (they must be hashable).
    """

    def register(cls):
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"register_dataclass: {cls.__name__} is not a dataclass")
        names = [f.name for f in dataclasses.fields(cls) if f.init]
        meta = tuple(meta_fields or ())
        data = tuple(data_fields) if data_fields is not None else tuple(n for n in names if n not in meta)
        unknown = set(data + meta) - set(names)
        if unknown:
            raise ValueError(f"register_dataclass: {cls.__name__} has no init fields {sorted(unknown)}")

        def flatten(obj):
            return [getattr(obj, n) for n in data], tuple(getattr(obj, n) for n in meta)

        def unflatten(aux, children):
            return cls(**dict(zip(data, children)), **dict(zip(meta, aux)))

        register_pytree_node(cls, flatten, unflatten)
        return cls

    return register if cls is None else register(cls)


def _dict_flatten(d):
    keys = sorted(d)
    return [d[k] for k in keys], tuple(keys)


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields") and type(x) is not tuple


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c))
register_pytree_node(list, lambda l: (l, None), lambda _, c: list(c))
register_pytree_node(dict, _dict_flatten, lambda keys, c: dict(zip(keys, c)))
register_pytree_node(type(None), lambda n: ((), None), lambda _, c: None)

_NAMEDTUPLE = _NodeType(lambda t: (tuple(t), None), None)


def _node_of(x, is_leaf):
    """(node_type_key, children, aux) for an internal node, or None for a leaf."""
    if is_leaf is not None and is_leaf(x):
        return None
    typ = type(x)
    nt = _registry.get(typ)
    if nt is not None:
        children, aux = nt.to_iterable(x)
        return typ, list(children), aux
    if _is_namedtuple(x):
        return typ, list(x), None
    return None


class PyTreeDef:
    """Hashable structure of a pytree: node type, aux data and child structures."""

    __slots__ = ("node_type", "aux", "children", "num_leaves", "_hash")

    def __init__(self, node_type, aux, children: tuple):
        self.node_type = node_type  # None for a leaf
        self.aux = aux
        self.children = children
        self.num_leaves = 1 if node_type is None else sum(c.num_leaves for c in children)
        self._hash = None

    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self.children)

    def _key(self):
        return (self.node_type, self.aux, self.children)

    def __eq__(self, other):
        return isinstance(other, PyTreeDef) and self._key() == other._key()

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(self._key())
        return self._hash

    def __repr__(self):
        return f"PyTreeDef({self._str()})"

    def _str(self) -> str:
        if self.node_type is None:
            return "*"
        inner = ", ".join(c._str() for c in self.children)
        if self.node_type is tuple:
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        if self.node_type is list:
            return f"[{inner}]"
        if self.node_type is dict:
            return "{" + ", ".join(f"{k!r}: {c._str()}" for k, c in zip(self.aux, self.children)) + "}"
        if self.node_type is type(None):
            return "None"
        return f"{self.node_type.__name__}[{self.aux!r}]({inner})"

    def unflatten(self, leaves):
        return tree_unflatten(self, leaves)


_LEAF = PyTreeDef(None, None, ())


_flat_defs: dict = {}  # (tuple or list, n) -> treedef of a flat sequence of n leaves


def _is_leaf_fast(x) -> bool:
    """True for a value that is certainly a leaf (not a registered node, not a tuple)."""
    return type(x) not in _registry and not isinstance(x, tuple)


def tree_flatten(tree, is_leaf: Callable[[Any], bool] | None = None):
    """Flatten ``tree`` into ``(leaves, treedef)``. Iterative, so depth is unbounded."""
    if is_leaf is None:
        # Fast paths for the shapes every transform flattens on each call: a single
        # array, and a tuple or list of arrays (e.g. positional arguments).
        typ = type(tree)
        if typ not in _registry and not isinstance(tree, tuple):
            return [tree], _LEAF
        if typ is tuple or typ is list:
            for x in tree:
                if not _is_leaf_fast(x):
                    break
            else:
                key = (typ, len(tree))
                td = _flat_defs.get(key)
                if td is None:
                    td = _flat_defs[key] = PyTreeDef(typ, None, (_LEAF,) * len(tree))
                return list(tree), td
    leaves: list = []
    # Post-order construction with an explicit stack of (node, state).
    stack: list = [(tree, None)]
    built: list = []
    while stack:
        x, pending = stack.pop()
        if pending is None:
            node = _node_of(x, is_leaf)
            if node is None:
                leaves.append(x)
                built.append(_LEAF)
                continue
            typ, children, aux = node
            stack.append((x, (typ, aux, len(children))))
            for c in reversed(children):
                stack.append((c, None))
        else:
            typ, aux, n = pending
            kids = tuple(built[len(built) - n:]) if n else ()
            del built[len(built) - n:]
            built.append(PyTreeDef(typ, aux, kids))
    return leaves, built[0]


def tree_unflatten(treedef: PyTreeDef, leaves):
    """Rebuild a pytree of structure ``treedef`` from ``leaves``."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(
            f"tree_unflatten: structure {treedef} expects {treedef.num_leaves} leaves, got {len(leaves)}"
        )
    node_type = treedef.node_type
    if node_type is None:
        return leaves[0]
    if node_type is tuple and _flat_defs.get((tuple, len(leaves))) is treedef:
        return tuple(leaves)  # a flat tuple (the treedef tree_flatten's fast path made)
    it = iter(leaves)

    def build(td: PyTreeDef):
        if td.node_type is None:
            return next(it)
        children = [build(c) for c in td.children]
        nt = _registry.get(td.node_type)
        if nt is not None:
            return nt.from_iterable(td.aux, children)
        return td.node_type(*children)  # namedtuple

    return build(treedef)


def tree_leaves(tree, is_leaf=None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree, *rest, is_leaf=None):
    """Apply ``f`` to corresponding leaves of ``tree`` and of each tree in ``rest``."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    all_leaves = [leaves]
    for r in rest:
        r_leaves, r_def = tree_flatten(r, is_leaf)
        if r_def != treedef:
            raise ValueError(f"tree_map: structures differ: {treedef} vs {r_def}")
        all_leaves.append(r_leaves)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(*all_leaves)])


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef.node_type is None


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    return list(treedef.children)


def tree_all(tree) -> bool:
    return all(tree_leaves(tree))
