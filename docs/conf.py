"""Sphinx configuration: ``pip install -e '.[docs]'`` then
``sphinx-build -W -b html docs docs/_build/html``."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))

project = "funcgrad"
author = "the funcgrad developers"
copyright = "2026, the funcgrad developers"
extensions = ["myst_parser", "sphinx.ext.autodoc", "apigen"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "api/_*"]
html_theme = "alabaster"
html_static_path = ["_static"]
autodoc_member_order = "bysource"
autodoc_typehints = "none"
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]
