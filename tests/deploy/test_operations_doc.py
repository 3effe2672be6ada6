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
