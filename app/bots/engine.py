"""The built-in levels as an external engine of the bot kit (``ginrummy-bot``, docs/sdk.md):
the line protocol on stdin and stdout, one JSON object a line.

    python -m app.bots.engine --level hard

It answers ``hello`` with ``ready``, each ``turn`` (``view``: the seat's table view, with
``events``, the seat's events of the current match, which hard reads its opponent from) with
the level's ``action`` (``kind`` null: nothing to do), and exits on ``quit`` or at the end of its
input.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from app.bots.base import NoMoveError
from app.bots.levels import DISPLAY_NAMES, LEVELS, get_bot


def answer(level: str, message: dict[str, Any]) -> dict[str, Any] | None:
    """The reply to one message of the kit (None: none, or the end)."""
    kind = message.get("type")
    if kind == "hello":
        return {"type": "ready", "name": DISPLAY_NAMES.get(level, level), "protocol": 1}
    if kind != "turn":
        return None
    view = message["view"]
    try:
        action = get_bot(level).choose(view["game"], view.get("events", []))
    except NoMoveError:
        action = {"kind": None}  # nothing to do now
    return {"type": "action", "id": message["id"], **action}


def serve(level: str, lines: TextIO, out: TextIO) -> None:
    for line in lines:
        message = json.loads(line)
        if message.get("type") == "quit":
            return
        reply = answer(level, message)
        if reply is not None:
            out.write(json.dumps(reply) + "\n")
            out.flush()


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m app.bots.engine", description=__doc__)
    p.add_argument("--level", default="medium", choices=LEVELS)
    serve(p.parse_args().level, sys.stdin, sys.stdout)


if __name__ == "__main__":
    main()
