"""The rule of ``app.db``: raw SQL is written one way, on ``db.connection()``."""

from __future__ import annotations

import ast
from pathlib import Path

import app.db
import app.tables

APP = Path(app.db.__file__).resolve().parent
TABLES = {name for name in dir(app.tables) if name[:1].isupper()}


def test_the_rule_is_written_where_the_connections_are():
    assert "Piccolo or raw SQL" in (app.db.__doc__ or "")


def test_no_table_runs_raw_sql_of_its_own():
    found = []
    for path in sorted(APP.rglob("*.py")):
        if "piccolo_migrations" in path.parts:
            continue  # migrations are Piccolo's own
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "raw" and isinstance(node.func.value, ast.Name)
                    and node.func.value.id in TABLES):
                found.append(f"{path.relative_to(APP)}:{node.lineno}")
    assert found == []
