"""docs/operations.md documents every setting, with its default as ``Settings`` has it."""

from __future__ import annotations

import re
from pathlib import Path

from app.settings import Settings

DOC = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def test_every_setting_is_documented_with_its_default() -> None:
    rows = {
        m.group(1): m.group(2)
        for m in re.finditer(r"^\| `([A-Z_]+)` \| ([^|]+) \|", DOC.read_text(), re.MULTILINE)
    }
    for name, field in Settings.model_fields.items():
        variable = name.upper()
        assert variable in rows, f"{variable} is not in docs/operations.md"
        default = "unset" if field.default is None else f"`{field.default}`"
        if isinstance(field.default, bool):
            default = f"`{str(field.default).lower()}`"
        assert rows[variable].strip() == default, variable


def test_the_settings_table_names_no_setting_that_is_gone() -> None:
    """A row of the table is a field of ``Settings``, or says which other program reads it."""
    text = DOC.read_text()
    table = text[text.index("## Settings") :]
    table = table[: table.index("\n## ")]
    names = {name.upper() for name in Settings.model_fields}
    stale = [
        m.group(1)
        for m in re.finditer(r"^\| `([A-Z_0-9]+)` \| [^|]+ \| ([^\n]*)$", table, re.MULTILINE)
        if m.group(1) not in names and "not `Settings`" not in m.group(2)
    ]
    assert stale == []
