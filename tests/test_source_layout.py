"""A module's public names stand at its top: a literal ``__all__`` comes right after
the docstring (and ``from __future__``), before the imports, as PEP 8 places module
dunders. (A package whose ``__all__`` is built from its modules' must follow the
imports it reads them from; it is not checked here.)"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(path for folder in ("adapters", "app", "benchmarks", "core", "kernels",
                                     "tests", "tools")
                 for path in (ROOT / folder).rglob("*.py*")
                 if path.suffix in (".py", ".pyi") and "__pycache__" not in path.parts)


def _literal_names(node: ast.AST) -> bool:
    return isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(item, ast.Constant) and isinstance(item.value, str) for item in node.elts)


def misplaced_all(source: str) -> int | None:
    """The line of a literal ``__all__`` that follows an import or other code, if any."""
    body = ast.parse(source).body
    for position, node in enumerate(body):
        if (isinstance(node, ast.Assign) and _literal_names(node.value)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)):
            before = body[:position]
            docstring = bool(before) and isinstance(before[0], ast.Expr) and isinstance(
                getattr(before[0], "value", None), ast.Constant)
            rest = before[1:] if docstring else before
            if all(isinstance(n, ast.ImportFrom) and n.module == "__future__" for n in rest):
                return None
            return node.lineno
    return None


def test_the_check_finds_an_all_after_the_imports():
    assert misplaced_all('"""Doc."""\nimport os\n__all__ = ["x"]\n') == 3
    assert misplaced_all('"""Doc."""\nfrom __future__ import annotations\n'
                         '__all__ = ["x"]\nimport os\n') is None
    assert misplaced_all('from . import _a\n__all__ = [*_a.__all__]\n') is None


def test_the_sources_are_found():
    assert len(SOURCES) > 300


def test_every_modules_public_names_stand_before_its_imports():
    misplaced = [f"{path.relative_to(ROOT)}:{line}" for path in SOURCES
                 if (line := misplaced_all(path.read_text(encoding="utf-8"))) is not None]
    assert misplaced == []
