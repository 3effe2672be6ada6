"""`python -m app`: serve the API (SQLite by default; migrations run at start)."""

from __future__ import annotations

import uvicorn

from app import logs
from app.api.edge.protocols import uvicorn_options
from app.main import create_app
from app.settings import Settings


def main() -> None:
    settings = Settings()
    logs.configure(settings)
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        # Our handler and our access log (``app.api.edge.access``), which keeps tokens out.
        log_config=None,
        access_log=False,
        **uvicorn_options(settings),
    )


if __name__ == "__main__":
    main()
