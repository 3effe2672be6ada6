"""The README is the front door: it links every document in docs/, and every link it has
to a file of the repository points at one that exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_the_readme_links_every_document_in_docs() -> None:
    linked = set(re.findall(r"\]\((docs/[^)#]+\.md)", README))
    documents = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}
    assert documents - linked == set()


def test_every_file_the_readme_links_exists() -> None:
    targets = re.findall(r"\]\(((?!https?:)[^)#]+)", README)
    assert targets
    assert [t for t in targets if not (ROOT / t).exists()] == []
