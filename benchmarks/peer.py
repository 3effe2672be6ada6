"""This server beside the boardgame.io peer, in the same minutes: server CPU per move, ratios.

    python benchmarks/peer.py --peer DIR [--rounds 3] [--tables 100] [--seconds 10] [--think 0.5]
        [--db postgresql sqlite] [--peer-storage memory postgres] [--http]

``DIR`` is a copy of ``../shared/peers/bgio`` with its ``node_modules`` (``npm ci`` there once):
its ``run.sh`` plays the same workload shape on boardgame.io's server and prints the same
figures as ``benchmarks/server.py``. Each round runs every configuration once, one after the
other, in an order rotated from round to round so that no configuration always runs first or
last: the peer with each ``--peer-storage``, and this server on each ``--db`` with its moves on
the table socket (the peer's go over its socket too), one process with the Redis bus on
(``server.py --processes 1 --ws-moves``), persisting every move; ``--http`` adds the same with
the moves over HTTP. Each run's last line is parsed; the script prints each round and the
medians, and the ratio of this server's server CPU per move at capacity to the in-memory
peer's, round by round (each from runs minutes apart) and of the medians; on SQLite, also net
of SQLite's own writes, which run in the server's process (``sqlite_cpu_ms``) and which the
in-memory peer has no counterpart of. The last line is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
JSON = dict[str, Any]


def _last_json(output: str) -> JSON:
    for line in reversed(output.splitlines()):
        if line.startswith("{"):
            parsed: JSON = json.loads(line)
            return parsed
    raise RuntimeError(f"no JSON line in:\n{output[-2000:]}")


def run_ours(db: str, ws_moves: bool, args: argparse.Namespace) -> JSON:
    command = [sys.executable, str(ROOT / "benchmarks" / "server.py"), "--db", db]
    command += ["--tables", str(args.tables), "--seconds", str(args.seconds)]
    command += ["--think", str(args.think), "--processes", "1"]
    if ws_moves:
        command.append("--ws-moves")
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    result: JSON = _last_json(done.stdout)[db]
    capacity, paced = result["capacity"], result["paced"]
    return {
        "cpu_ms": capacity["server_cpu_ms_per_move"],
        "capacity_moves_per_s": capacity["moves_per_s"],
        "paced_p99_ms": paced["move_p99_ms"],
        "paced_cpu_ms": paced["server_cpu_ms_per_move"],
        "client_cpu_ms": capacity["client_cpu_ms_per_move"],
        "database_cpu_ms": capacity["database_cpu_ms_per_move"],
        # SQLite's writes, inside the server's process: part of cpu_ms.
        "sqlite_cpu_ms": capacity.get("sqlite_cpu_ms_per_move", 0.0),
        "gc_share": capacity.get("gc_share"),
        "refused": capacity["refused"] + paced["refused"],
        "load": capacity["loadavg_1m"],
    }


def run_peer(storage: str, args: argparse.Namespace) -> JSON:
    command = ["./run.sh", storage, "--tables", str(args.tables)]
    command += ["--seconds", str(args.seconds), "--think", str(args.think)]
    env = {**os.environ, "PORT": str(args.peer_port)}
    done = subprocess.run(
        command, cwd=args.peer, capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"the peer failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    result = _last_json(done.stdout)
    capacity, paced = result["capacity"], result["paced"]
    return {
        "cpu_ms": result["server_cpu_ms_per_move_capacity"],
        "capacity_moves_per_s": result["capacity_moves_per_s"],
        "paced_p99_ms": result["paced_p99_ms"],
        "paced_cpu_ms": paced["server_cpu_ms_per_move"],
        "client_cpu_ms": capacity["client_cpu_ms_per_move"],
        "refused": capacity["errors"] + paced["errors"],
        "load": capacity["loadavg_1m"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--peer", type=Path, required=True, help="a copy of shared/peers/bgio")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--think", type=float, default=0.5)
    parser.add_argument("--db", nargs="+", default=["postgresql", "sqlite"])
    parser.add_argument("--peer-storage", nargs="+", default=["memory"])
    parser.add_argument("--peer-port", type=int, default=18501)
    parser.add_argument("--http", action="store_true", help="also this server's moves over HTTP")
    args = parser.parse_args()

    configs: list[str] = [f"peer-{s}" for s in args.peer_storage]
    configs += [f"ours-{db}-ws" for db in args.db]
    if args.http:
        configs += [f"ours-{db}-http" for db in args.db]
    runs: dict[str, list[JSON]] = {c: [] for c in configs}
    for round_ in range(args.rounds):
        shift = round_ % len(configs)
        for config in configs[shift:] + configs[:shift]:
            kind, what, *rest = config.split("-")
            out = run_peer(what, args) if kind == "peer" else run_ours(what, rest == ["ws"], args)
            runs[config].append(out)
            print(f"round {round_ + 1} {config:<20} {json.dumps(out)}", flush=True)

    peer = runs[configs[0]]
    medians = {c: statistics.median(r["cpu_ms"] for r in runs[c]) for c in configs}
    print(f"\nserver CPU per move at capacity (ms), {args.rounds} rounds, medians:")
    ratios: JSON = {}
    for config in configs:
        each = [r["cpu_ms"] for r in runs[config]]
        by_round = [
            round(r["cpu_ms"] / p["cpu_ms"], 2) for r, p in zip(runs[config], peer, strict=True)
        ]
        ratio = round(medians[config] / medians[configs[0]], 2)
        ratios[config] = {"of_medians": ratio, "by_round": by_round}
        print(
            f"  {config:<20} {medians[config]:.3f}  (each {each})  "
            f"/ {configs[0]}: {ratio} (by round {by_round})"
        )
        if any(r.get("sqlite_cpu_ms") for r in runs[config]):
            # The same without SQLite's own work in the server's process, which the peer
            # (persisting nothing) has no counterpart of.
            net = [r["cpu_ms"] - r["sqlite_cpu_ms"] for r in runs[config]]
            net_by_round = [round(n / p["cpu_ms"], 2) for n, p in zip(net, peer, strict=True)]
            net_ratio = round(statistics.median(net) / medians[configs[0]], 2)
            ratios[config] |= {"net_of_sqlite": net_ratio, "net_by_round": net_by_round}
            print(
                f"  {config + ' net':<20} {statistics.median(net):.3f}  "
                f"(SQLite's writes {[r['sqlite_cpu_ms'] for r in runs[config]]} taken out)  "
                f"/ {configs[0]}: {net_ratio} (by round {net_by_round})"
            )
    print(json.dumps({"benchmark": "peer", "medians": medians, "ratios": ratios, "runs": runs}))


if __name__ == "__main__":
    main()
