"""``tools/jax_names.py``: the table of JAX's names against funcgrad's runs without JAX (from
the committed snapshot of JAX 0.10.2's names), the one list of names left out on purpose
(``funcgrad/_omitted.py``) holds only JAX names funcgrad lacks, the page generated from it is
current, and the rows filled to JAX's surface stay filled."""
import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "jax_names.py"


@pytest.fixture(scope="module")
def tool():
    if not TOOL.exists():
        pytest.skip("tools/ not next to the package (installed copy)")
    spec = importlib.util.spec_from_file_location("jax_names", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def snapshot(tool):
    import json

    return json.loads(tool.SNAPSHOT.read_text())["rows"]


@pytest.fixture(scope="module")
def table(tool, snapshot):
    return {row: rest for row, *rest in tool.table(snapshot)}


def test_snapshot_rows_are_the_tools_rows(tool, snapshot):
    assert list(snapshot) == list(tool.ROWS)
    assert len(snapshot["numpy"]) == 416 and "float8_e4m3fn" in snapshot["numpy"]
    assert not any(n.endswith("_p") for n in snapshot["lax"])
    assert "pmap" not in snapshot["top level"] and "grad" in snapshot["top level"]


def test_omitted_names_are_jax_names_funcgrad_lacks(tool, snapshot):
    from funcgrad._omitted import OMITTED

    for row, names in OMITTED.items():
        assert row in snapshot, row
        for name, reason in names.items():
            assert name in snapshot[row], f"{row}: {name} is not a JAX name"
            assert not tool._has(row, name), f"{row}: {name} is implemented now; remove it from _omitted.py"
            assert len(reason) > 20, f"{row}: {name} needs a reason"


def test_the_differences_page_is_current(tool):
    assert tool.main(["--check"]) == 0


@pytest.mark.parametrize("row", ["numpy", "lax", "nn", "tree_util+tree"])
def test_filled_rows_stay_at_95_percent(table, row):
    n_jax, n_funcgrad, _, missing = table[row]
    assert n_funcgrad >= 0.95 * n_jax, f"{row}: {n_funcgrad}/{n_jax}; missing {missing}"
    assert not missing, f"{row}: missing {missing} (implement, or leave out with a reason in funcgrad/_omitted.py)"


def test_the_table_prints_without_jax(tool, capsys):
    assert tool.main([]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:3] == ["row", "JAX", "funcgrad"]
    assert "top level" in out and "% with omitted" in out
