"""The code on the pages a new user reads first runs as written (each page's ```python
blocks, in order, in one namespace)."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = ["README.md", "docs/getting-started.md", "docs/guide/transforms.md"]


@pytest.mark.parametrize("page", PAGES)
def test_page_code_runs(page, capsys):
    path = ROOT / page
    if not path.exists():
        pytest.skip(f"{page} not next to the package (installed copy)")
    blocks = re.findall(r"```python\n(.*?)```", path.read_text(), re.S)
    assert blocks, page
    namespace = {"__name__": "__docs__"}
    for block in blocks:
        exec(compile(block, str(path), "exec"), namespace)
