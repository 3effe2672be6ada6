"""``ginrummy-bot``: the bot kit on the command line (docs/sdk.md).

    ginrummy-bot --config bot.toml
    ginrummy-bot --server http://127.0.0.1:8000 --name Rob \\
        --engine "python -m app.bots.engine --level hard" --create --vs easy --rule target=30

Command-line options override the config file's keys. At the end it prints a JSON summary (each
table and its matches' results) as its last line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import shlex
import signal
import sys
from collections.abc import Sequence
from typing import Any

from ginrummy_client.bot.config import Config, CreateSpec, WebhookSpec
from ginrummy_client.bot.kit import BotKit


def _rules(pairs: Sequence[str]) -> dict[str, Any]:
    """``--rule key=value`` overrides, each value read as JSON when it parses (numbers, bools)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ginrummy-bot", description="Play Gin Rummy tables as a bot.")
    p.add_argument("--config", help="a TOML file of settings")
    p.add_argument("--server")
    p.add_argument("--name")
    p.add_argument("--token")
    p.add_argument("--token-file")
    p.add_argument("--engine", help="the engine's command line (the line protocol)")
    p.add_argument("--choose", help="a Python engine: module:function")
    p.add_argument("--matches", type=int)
    p.add_argument("--concurrency", type=int)
    p.add_argument("--delay", type=float, help="seconds to wait before each move")
    p.add_argument("--follow", action="store_true", help="play every table the player is told of")
    p.add_argument(
        "--ladder", action="store_true", help="be available for the bot ladder and play it"
    )
    p.add_argument("--invite", action="append", default=[], help="accept this invite code")
    p.add_argument("--create", action="store_true", help="create a table")
    p.add_argument("--preset", default="standard")
    p.add_argument("--rule", action="append", default=[], help="a rule override, key=value")
    p.add_argument("--vs", choices=("easy", "medium", "hard"), help="seat a server bot to play")
    p.add_argument("--webhook", metavar="HOST:PORT", help="play from webhooks, listening here")
    p.add_argument("--webhook-url", help="the URL the server POSTs to (default from --webhook)")
    p.add_argument("--poll", type=float, default=10.0, help="webhook mode: look this often too")
    lobby = p.add_argument_group("the lobby")
    lobby.add_argument("--accept-challenges", action="store_true", help="accept challenges")
    lobby.add_argument("--challenge-preset", action="append", default=[], help="only these")
    lobby.add_argument("--casual-only", action="store_true", help="decline rated challenges")
    lobby.add_argument("--rated-only", action="store_true", help="decline casual challenges")
    lobby.add_argument("--seek", action="store_true", help="seek a game (--preset, --rule)")
    lobby.add_argument("--rated", action="store_true", help="the seek is rated")
    lobby.add_argument("--lobby-games", type=int, help="stop after this many lobby tables")
    p.add_argument("-v", "--verbose", action="store_true")
    return p


def config_of(argv: Sequence[str]) -> Config:
    args = parser().parse_args(argv)
    config = Config.load(args.config) if args.config else Config()
    for key in ("server", "name", "token", "token_file", "choose", "matches", "concurrency"):
        value = getattr(args, key)
        if value is not None:
            setattr(config, key, value)
    if args.delay is not None:
        config.delay = args.delay
    if args.engine:
        config.engine = shlex.split(args.engine)
    config.follow = config.follow or args.follow
    config.ladder = config.ladder or args.ladder
    config.invites = [*config.invites, *args.invite]
    if args.create:
        config.create.append(CreateSpec(args.preset, _rules(args.rule), args.vs))
    lobby_options(config, args)
    if args.webhook:
        config.webhook = WebhookSpec(args.webhook, args.webhook_url, args.poll)
    return config


def lobby_options(config: Config, args: argparse.Namespace) -> None:
    config.accept_challenges = config.accept_challenges or args.accept_challenges
    if args.challenge_preset:
        config.challenges.presets = list(args.challenge_preset)
    if args.casual_only:
        config.challenges.rated = False
    if args.rated_only:
        config.challenges.casual = False
    if args.seek:
        config.seek.append({"preset": args.preset, "rules": _rules(args.rule), "rated": args.rated})
    if args.lobby_games is not None:
        config.lobby_games = args.lobby_games


def main(argv: Sequence[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if "-v" in args or "--verbose" in args:
        logging.basicConfig(level=logging.INFO)
    try:
        summary = asyncio.run(_until_stopped(BotKit(config_of(args))))
    except (KeyboardInterrupt, asyncio.CancelledError):
        sys.exit(130)  # stopped (Ctrl-C, SIGTERM): the kit cancelled its seeks on the way out
    print(json.dumps(summary), flush=True)


async def _until_stopped(kit: BotKit) -> Any:
    """The kit's run, cancelled (its ``finally`` blocks run) on SIGTERM as on Ctrl-C."""
    task = asyncio.current_task()
    if task is not None:
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    return await kit.run()


if __name__ == "__main__":
    main()
