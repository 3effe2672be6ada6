"""Train LUNA's value network on self-play and export its weights for ``app.bots.network``.

    python -m training.train --seed 1 --matches 6000 --workers 2

plays the self-play matches (``training.selfplay``; the positions are kept in
``training/data/``), fits the MLP (``app.bots.features`` rows -> 64 -> 32 -> 1, ReLU, the
hand's points to the seat divided by ``SCALE``, mean squared error, Adam) on all but the last
tenth of the matches, reports its error on that tenth, and writes the weights to
``app/bots/luna_value.npz``. PyTorch is needed here only (``pip install -e '.[train]'``);
the server runs the network in numpy. The same seed, matches and workers give the same data;
the fit is seeded too (PyTorch's CPU kernels may still differ in the last bits).
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from app.bots.features import WIDTH, expand
from app.bots.network import SCALE, WEIGHTS
from training.selfplay import LEVELS, Positions, generate, load, save

HIDDEN = (64, 32)


def model() -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(WIDTH, HIDDEN[0]),
        nn.ReLU(),
        nn.Linear(HIDDEN[0], HIDDEN[1]),
        nn.ReLU(),
        nn.Linear(HIDDEN[1], 1),
    )


def fit(
    data: Positions,
    *,
    seed: int,
    epochs: int,
    batch: int = 1024,
    lr: float = 1e-3,
    decay: float = 1e-2,
) -> tuple[nn.Sequential, dict[str, float]]:
    """The fitted network and its mean squared errors (in points²) on the held-out tenth."""
    torch.manual_seed(seed)
    x = torch.from_numpy(expand(data[0], data[1]))
    y = torch.from_numpy(data[2] / SCALE).unsqueeze(1)
    cut = int(len(y) * 0.9)
    net = model()
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=decay)
    loss = nn.MSELoss()
    g = torch.Generator().manual_seed(seed)
    # A hand's positions share one label: the data holds far fewer independent outcomes than
    # positions, and the network overfits within a few epochs. Keep the epoch that did best
    # on the held-out matches.
    best, kept = float("inf"), copy.deepcopy(net.state_dict())
    for _ in range(epochs):
        order = torch.randperm(cut, generator=g)
        for i in range(0, cut, batch):
            idx = order[i : i + batch]
            opt.zero_grad()
            loss(net(x[idx]), y[idx]).backward()
            opt.step()
        with torch.no_grad():
            held = float(loss(net(x[cut:]), y[cut:]))
        if held < best:
            best, kept = held, copy.deepcopy(net.state_dict())
    net.load_state_dict(kept)
    with torch.no_grad():
        held = float(loss(net(x[cut:]), y[cut:])) * SCALE**2
        train = float(loss(net(x[:cut]), y[:cut])) * SCALE**2
        base = float(((y[cut:] - y[:cut].mean()) ** 2).mean()) * SCALE**2
    return net, {"held_out_mse": held, "train_mse": train, "constant_mse": base}


def export(net: nn.Sequential, path: Path, meta: dict[str, Any]) -> None:
    layers = [m for m in net if isinstance(m, nn.Linear)]
    arrays: dict[str, Any] = {}
    for i, layer in enumerate(layers, 1):
        arrays[f"w{i}"] = layer.weight.detach().numpy().T.astype(np.float32)
        arrays[f"b{i}"] = layer.bias.detach().numpy().astype(np.float32)
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    np.savez_compressed(path, **arrays)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--matches", type=int, default=6000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--levels", default=",".join(LEVELS), help="the levels paired")
    p.add_argument("--data", type=Path, help="positions saved before (skips the self-play)")
    p.add_argument("--out", type=Path, default=WEIGHTS)
    args = p.parse_args()
    started = time.perf_counter()
    if args.data:
        data = load(args.data)
    else:
        levels = tuple(args.levels.split(","))
        data = generate(args.seed, args.matches, args.workers, levels)
        name = f"selfplay-{args.seed}-{args.matches}-{'-'.join(levels)}.npz".replace(":", "")
        save(Path("training/data") / name, data)
    played = time.perf_counter() - started
    torch.set_num_threads(max(1, args.workers))
    net, errors = fit(data, seed=args.seed, epochs=args.epochs)
    meta = {
        "command": f"python -m training.train --seed {args.seed} --matches {args.matches}"
        f" --workers {args.workers} --epochs {args.epochs} --levels {args.levels}",
        "levels": args.levels.split(","),
        "seed": args.seed,
        "matches": args.matches,
        "positions": len(data[2]),
        "hidden": list(HIDDEN),
        **{k: round(v, 2) for k, v in errors.items()},
    }
    export(net, args.out, meta)
    print(f"self-play {played:.0f} s, fit {time.perf_counter() - started - played:.0f} s")
    print(json.dumps(meta))


if __name__ == "__main__":
    main()
