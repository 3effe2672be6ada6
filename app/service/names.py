"""Player names: what another player is shown must be what it looks like, and no bot's.

``player_name`` normalises a name (NFC; variation selectors dropped; each run of whitespace one
space; trimmed) and refuses (422 ``invalid_name``) what would make it look like something else:
control and format characters (the bidi overrides and isolates that render ``gnp.live`` as
``exe...``, zero-width spaces and joiners, the word joiner, soft hyphen, tags), the other
invisible default-ignorable code points (Hangul fillers, the combining grapheme joiner, ...),
surrogates, private-use and unassigned code points, line and paragraph separators, a pile of
combining marks on one character, and more than ``NAME_MAX`` characters. A name that folds to a
bot's display name (``TITO``, ``CARMEN``, ``LUNA``: case, compatibility forms, accents, a few
Cyrillic and Greek look-alikes, digits for letters and anything not a letter or digit folded
away) is kept for the bots (422 ``reserved_name``).

The fold is a cheap stand-in for Unicode's confusable skeleton (UTS #39), which would cost a
10 MB table to guard three names.
"""

from __future__ import annotations

import re
import unicodedata

from app.bots import DISPLAY_NAMES
from app.errors import InvalidError

NAME_MAX = 40
# Combining marks one character may carry: Vietnamese, Thai and the Indic scripts need two or
# three; a "Zalgo" name stacks dozens.
MARKS_MAX = 3

# Refused anywhere: control, format (bidi controls, zero-width characters, tags...), surrogate,
# private use, unassigned; line and paragraph separators.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Default-ignorable code points (invisible) of other categories, and blanks that draw nothing.
_INVISIBLE = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\uffa0\U0001d173-\U0001d17a]"
)
# Variation selectors: they only choose how a character is drawn (an emoji's colour form).
_SELECTORS = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]")
_SPACES = re.compile(r"\s+")
# The bidirectional controls: marks, embeddings, overrides and isolates.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")

# Look-alikes of Latin letters in other scripts, and digits and signs read as letters, for the
# fold (lower case, after NFKD and casefold).
_LOOK_ALIKES = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o",
        "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i",
        "ј": "j", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "i",
        # Greek
        "α": "a", "β": "b", "γ": "y", "ε": "e", "η": "n", "ι": "i", "κ": "k", "μ": "u",
        "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ω": "w",
        # Armenian, Latin extensions
        "օ": "o", "ս": "u", "ո": "n", "ı": "i", "ɩ": "i", "ʟ": "l", "ɑ": "a", "ɡ": "g",
        # Digits and signs for letters; l and I look alike.
        "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "l": "i",
        "!": "i", "|": "i", "$": "s", "@": "a",
    }
)  # fmt: skip


def fold(name: str) -> str:
    """What ``name`` looks like, roughly: equal folds are names a reader could take for one
    another."""
    decomposed = unicodedata.normalize("NFKD", name).casefold()
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return "".join(c for c in bare.translate(_LOOK_ALIKES) if c.isalnum())


_RESERVED = {fold(name): name for name in DISPLAY_NAMES.values()}


def _invalid(message: str) -> InvalidError:
    return InvalidError("invalid_name", message)


def player_name(raw: str) -> str:
    """``raw`` as a player's name, normalised; ``invalid_name`` or ``reserved_name`` (both 422)
    when it may not be one."""
    name = unicodedata.normalize("NFC", _SELECTORS.sub("", raw))
    for c in name:
        category = unicodedata.category(c)
        if category in _REFUSED_CATEGORIES or _INVISIBLE.match(c):
            kind = "a bidi control" if _BIDI.match(c) else "an invisible or control character"
            raise _invalid(f"a name may not hold U+{ord(c):04X} ({kind})")
    name = _SPACES.sub(" ", name).strip()
    if not name:
        raise _invalid("a name needs something besides spaces")
    if len(name) > NAME_MAX:
        raise _invalid(f"a name has at most {NAME_MAX} characters")
    marks = 0
    for c in name:
        marks = marks + 1 if unicodedata.combining(c) else 0
        if marks > MARKS_MAX:
            raise _invalid(f"at most {MARKS_MAX} combining marks on one character")
    bot = _RESERVED.get(fold(name))
    if bot is not None:
        raise InvalidError("reserved_name", f"{bot} is a bot's name: choose another")
    return name
