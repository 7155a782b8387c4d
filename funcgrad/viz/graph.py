"""``Graph``: a program's picture as DOT text, rendered by Graphviz when it is installed.

The DOT text needs nothing; SVG/PNG need the optional ``graphviz`` Python package and
Graphviz's ``dot`` program (``pip install 'funcgrad[viz]'`` installs the package; the
program comes from the system, e.g. ``apt-get install graphviz``).
"""
from __future__ import annotations

import os

INSTALL_HINT = ("pip install 'funcgrad[viz]' for the graphviz package, and Graphviz's 'dot' program "
                "(e.g. apt-get install graphviz, brew install graphviz)")


class GraphvizNotFound(ImportError):
    """Rendering needs the optional graphviz package and the ``dot`` program."""


class Graph:
    """The picture of one program (see ``funcgrad.draw``).

    ``str(g)`` / ``g.dot``: Graphviz DOT text (always available). ``g.svg()``,
    ``g.png()``, ``g.render(path)``: rendered by Graphviz (optional extra). In Jupyter it
    shows as SVG, or as its DOT text when Graphviz is missing. ``g.nodes``, ``g.edges``,
    ``g.clusters``: the structure drawn (``funcgrad.viz.dot.Node``/``Edge``/``Cluster``),
    and ``g.jaxpr``: the program it shows.
    """

    def __init__(self, builder, jaxpr):
        self.dot = builder.text()
        self.nodes, self.edges, self.clusters = builder.nodes, builder.edges, builder.clusters
        self.name = builder.name
        self.jaxpr = jaxpr

    @property
    def source(self) -> str:  # (the name graphviz.Source uses)
        return self.dot

    def __str__(self):
        return self.dot

    def __repr__(self):
        n_eqns = sum(1 for n in self.nodes.values() if n.kind == "eqn")
        return f"<funcgrad Graph {self.name!r}: {n_eqns} equations, {len(self.clusters)} clusters>"

    # -- rendering (optional graphviz) ---------------------------------------------------
    def pipe(self, format: str) -> bytes:
        """The picture in ``format`` (any Graphviz output format: svg, png, pdf, ...)."""
        try:
            import graphviz
        except ImportError:
            raise GraphvizNotFound(f"Graph.{format}(): rendering needs the optional graphviz package: "
                                   f"{INSTALL_HINT}; str(graph) is the DOT text meanwhile") from None
        try:
            return graphviz.Source(self.dot).pipe(format=format)
        except graphviz.ExecutableNotFound:
            raise GraphvizNotFound(f"Graph.{format}(): Graphviz's 'dot' program is not on PATH: "
                                   f"{INSTALL_HINT}") from None

    def svg(self) -> str:
        return self.pipe("svg").decode("utf-8")

    def png(self) -> bytes:
        return self.pipe("png")

    def render(self, path, format: str | None = None) -> str:
        """Write the picture to ``path``, in ``format`` (default: the file's extension;
        ``.dot``/``.gv`` write the DOT text and need no Graphviz). Returns the path."""
        path = os.fspath(path)
        fmt = (format or os.path.splitext(path)[1].lstrip(".")).lower()
        if not fmt:
            raise ValueError(f"Graph.render: cannot tell the format of {path!r}: give it an extension "
                             "(.svg, .png, .pdf, .dot) or format=")
        data = self.dot.encode("utf-8") if fmt in ("dot", "gv") else self.pipe(fmt)
        with open(path, "wb") as f:
            f.write(data)
        return path

    # -- Jupyter -------------------------------------------------------------------------
    def _repr_svg_(self):
        try:
            return self.svg()
        except GraphvizNotFound:
            return None  # (Jupyter then shows the text form)

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": self.dot}
        svg = self._repr_svg_()
        if svg is not None:
            bundle["image/svg+xml"] = svg
        return bundle
