"""The function index in docs/reference/numpy-index.md (tools/function_index.py) lists every funcgrad.numpy and
funcgrad.numpy.linalg name: regenerate it when you add one."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _tool():
    spec = importlib.util.spec_from_file_location("function_index", ROOT / "tools" / "function_index.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_readme_function_index_is_current():
    assert _tool().main(["--check"]) == 0, "run: python tools/function_index.py"


def test_index_lists_every_name_once():
    import funcgrad.numpy as fnp
    import funcgrad.numpy_api as api

    section = _tool().render()
    for name in [n for n in api.__all__ if n != "linalg"] + list(fnp.linalg.__all__):
        assert f"`{name}`" in section, name
    assert section.count("`gcd`") == 1 and "- **float_parts**:" in section and "- **linalg_extra**:" in section
