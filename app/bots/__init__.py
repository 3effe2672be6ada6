"""Bots that play a seat through its public view only (seed 002): easy, medium and hard."""

from app.bots.base import Bot, NoMoveError, has_move
from app.bots.levels import DISPLAY_NAMES, LEVELS, get_bot

__all__ = ["DISPLAY_NAMES", "LEVELS", "Bot", "NoMoveError", "get_bot", "has_move"]
