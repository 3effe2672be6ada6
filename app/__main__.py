"""`python -m app`: serve the API (SQLite by default; migrations run at start)."""

from __future__ import annotations

import uvicorn

from app.main import create_app
from app.settings import Settings


def main() -> None:
    settings = Settings()
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port)


if __name__ == "__main__":
    main()
