"""`python -m app`: serve the API (SQLite by default; migrations run at start)."""

from __future__ import annotations

import uvicorn

from app import logs
from app.main import create_app
from app.settings import Settings


def main() -> None:
    settings = Settings()
    logs.configure(settings)
    # No per-message deflate on WebSockets: the messages are small JSON, and compressing each
    # one for each recipient costs more CPU than the bytes it saves are worth here.
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        ws_per_message_deflate=False,
        ws_max_size=settings.ws_max_message_bytes,
        # Our handler and our access log (``app.api.access``), which keeps tokens out.
        log_config=None,
        access_log=False,
        ws_ping_interval=settings.ws_ping_interval,
        ws_ping_timeout=settings.ws_ping_timeout,
    )


if __name__ == "__main__":
    main()
