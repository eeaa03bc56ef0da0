"""The inside of app/ is layered, and the layers are written down where they are kept.

``pyproject.toml``'s ``app-layers`` contract puts every module and folder of app/ in a
layer (it is exhaustive) and import-linter keeps the imports pointing down; these tests
run it, and check what it cannot see: an import hidden inside a function, a folder
whose ``__init__`` does not say what it holds, a folder the README's layout leaves out.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import app

ROOT = Path(__file__).resolve().parents[2]
APP = Path(app.__file__).parent
#: The command line loads each command's modules when that command runs; nothing
#: imports it, so its late imports cannot be hiding a cycle.
LATE_IMPORTS_ALLOWED = {APP / "cli.py"}


def _contract(contract_id: str) -> dict:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return next(c for c in config["tool"]["importlinter"]["contracts"]
                if c.get("id") == contract_id)


def _folders() -> list[Path]:
    return sorted(path.parent for path in APP.glob("*/__init__.py"))


def test_the_app_layer_contracts_are_kept():
    checked = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--no-cache", "--no-logo",
         "--contract", "app-layers", "--contract", "app-below-web"],
        cwd=ROOT, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "2 kept, 0 broken" in checked.stdout


def test_the_contract_places_every_folder_and_module_of_app():
    contract = _contract("app-layers")
    assert contract["containers"] == ["app"] and contract["exhaustive"] is True
    placed = {name.strip() for layer in contract["layers"]
              for name in layer.replace(":", "|").split("|")}
    present = {path.name for path in _folders()} | {
        path.stem for path in APP.glob("*.py") if path.name != "__init__.py"}
    assert placed == present


def test_the_features_sit_above_the_platform_and_below_the_wiring():
    layers = _contract("app-layers")["layers"]
    order = {name.strip(): index for index, layer in enumerate(layers)
             for name in layer.split("|")}
    assert order["http"] < order["bundle"] < order["telephony"] == order["diary"] \
        < order["notify"] < order["services"] < order["errors"]


def _late_app_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            found += [f"{path.relative_to(ROOT)}:{node.lineno} {name}" for name in names
                      if name == "app" or name.startswith("app.")]
    return found


def test_no_module_of_app_imports_app_inside_a_function():
    late = [line for path in sorted(APP.rglob("*.py")) if path not in LATE_IMPORTS_ALLOWED
            for line in _late_app_imports(path)]
    assert late == []


def test_every_folder_of_app_says_what_it_holds():
    for folder in _folders():
        docstring = ast.get_docstring(ast.parse((folder / "__init__.py").read_text()))
        assert docstring and len(docstring.split()) >= 8, folder.name


def test_the_readme_layout_names_every_folder_of_app():
    readme = (ROOT / "README.md").read_text()
    layout = readme[readme.index("## Layout"):]
    named = {name for line in layout.splitlines() if line.startswith("| `")
             for name in re.findall(r"`([^`]+)`", line.split("|")[1])}
    assert {f"app/{folder.name}/" for folder in _folders()} <= named
