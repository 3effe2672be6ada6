"""Bots that play a seat through its public view only (seed 002): easy, medium and hard."""

import os

# The value network's matrices are tiny (a few dozen rows; app/bots/network.py): OpenBLAS's
# thread pool made a 48-row batch 20-40 times dearer in CPU time than one thread on this
# 2-core machine under load. Set before numpy first loads, which every import of app.bots.*
# comes after (a process that loaded numpy before keeps its own setting).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


from app.bots.base import Bot, NoMoveError, has_move
from app.bots.levels import DISPLAY_NAMES, LEVELS, get_bot

__all__ = ["DISPLAY_NAMES", "LEVELS", "Bot", "NoMoveError", "get_bot", "has_move"]
