"""Table ids: the UUID version 7 layout (RFC 9562), ordered by creation time, unguessable."""

from __future__ import annotations

import uuid

from app.store.tables import storable
from app.table.ids import table_id

# RFC 9562, appendix A.6: the example's timestamp, 2022-02-22 14:22:22 UTC (0x017F22E279B0 ms).
EXAMPLE_MS = 0x017F22E279B0


def test_an_id_is_a_version_7_uuid_led_by_its_millisecond() -> None:
    made = table_id(EXAMPLE_MS * 1_000_000 + 999_999)
    parsed = uuid.UUID(hex=made)
    assert len(made) == 32 and made == parsed.hex
    assert parsed.version == 7 and parsed.variant == uuid.RFC_4122
    assert made[:12] == "017f22e279b0"
    assert storable(made)


def test_ids_sort_by_creation_time_and_differ_within_a_millisecond() -> None:
    times = [EXAMPLE_MS * 1_000_000 + step * 1_000_000 for step in range(0, 5000, 7)]
    made = [table_id(t) for t in times]
    assert made == sorted(made)
    same = {table_id(EXAMPLE_MS * 1_000_000) for _ in range(10_000)}
    assert len(same) == 10_000  # 74 random bits each
    assert table_id() > made[-1]  # now sorts after 2022
