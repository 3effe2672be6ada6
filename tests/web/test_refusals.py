"""Every refusal code the server can send has words in both of the web client's languages.

The codes are read from the server's source: the first argument of each typed error (and of
the functions that build an error body), a ``"code"`` key of a literal, and what is assigned
to a variable named ``code``; the words are the entries of each language in
``web/src/refusals.ts``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]{4,}")
ERRORS = {
    "ServiceError",
    "UnauthenticatedError",
    "ForbiddenError",
    "NotFoundError",
    "ConflictError",
    "InvalidError",
    "RateLimitedError",
    "RuleError",
    "_error",
    "error_body",
}


def _strings(node: ast.AST, constants: dict[str, str]) -> set[str]:
    out = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            out.add(sub.value)
        elif isinstance(sub, ast.Name) and sub.id in constants:
            out.add(constants[sub.id])
    return {s for s in out if CODE.fullmatch(s)}


def server_codes() -> set[str]:
    codes: set[str] = set()
    for path in (ROOT / "app").rglob("*.py"):
        tree = ast.parse(path.read_text())
        constants = {
            target.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.args:
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in ERRORS:
                    codes |= _strings(node.args[0], constants)
            elif isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == "code" and value is not None:
                        codes |= _strings(value, constants)
            elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "code" for t in node.targets
            ):
                codes |= _strings(node.value, constants)
    return codes


def client_words() -> dict[str, set[str]]:
    """The codes each language's table in refusals.ts has words for."""
    source = (ROOT / "web/src/refusals.ts").read_text()
    out = {}
    for lang, opening in (("pt", "const pt = {"), ("en", "const en: Record<Code, string> = {")):
        body = source[source.index(opening) : source.index("\n};", source.index(opening))]
        out[lang] = set(re.findall(r"^  (\w+):\s*\S", body, re.MULTILINE))
    return out


def test_the_codes_read_include_those_of_each_kind() -> None:
    codes = server_codes()
    # An engine refusal, a table command's, the HTTP edge's and a socket's.
    assert {
        "not_your_turn",
        "rematch_already_offered",
        "method_not_allowed",
        "token_revoked",
    } <= codes
    assert {"webhook_url_refused", "token_expired", "invalid_request"} <= codes


def test_every_refusal_code_has_words_in_both_languages() -> None:
    codes = server_codes()
    for lang, words in client_words().items():
        missing = sorted(codes - words)
        assert not missing, f"{lang}: no words for {missing}"
