"""``verify`` on documents that are no record: a named refusal, never a crash."""

from __future__ import annotations

from typing import Any

import pytest

from app.engine import PRESETS
from app.engine.verify import FORMAT, VERSION, RecordMismatchError, verify

BASE: dict[str, Any] = {
    "format": FORMAT,
    "version": VERSION,
    "rules": PRESETS["standard"].to_dict(),
    "match_seed": "ab" * 32,
}


@pytest.mark.parametrize(
    ("record", "where"),
    [
        ([], "format"),
        ({}, "format"),
        ({**BASE, "version": 2}, "format"),
        ({**BASE, "rules": {"nope": 1}}, "rules"),
        ({**BASE, "hands": "x"}, "hands"),
        ({**BASE, "hands": []}, "hands"),
        ({**BASE, "hands": ["x"]}, "hand 1"),
        ({**BASE, "hands": [{"number": 1, "deal": {}}]}, "hand 1"),
    ],
)
def test_a_document_that_is_no_record_is_refused_where_it_differs(record: Any, where: str) -> None:
    with pytest.raises(RecordMismatchError) as caught:
        verify(record)
    assert caught.value.where == where
