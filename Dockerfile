# The Gin Rummy server: `docker build -t ginrummy . && docker run -p 8000:8000 ginrummy`.
# SQLite in the /data volume by default; set DATABASE_URL (postgresql+asyncpg://...) otherwise.
# Migrations run at start (MIGRATE_ON_START=true); with several replicas, run them once
# (`alembic upgrade head`, the compose file's `migrate` service) and set it false.
# docs/operations.md has every setting, and how to build with podman (`--format docker`, or the
# HEALTHCHECK is dropped) and where no registry is reachable (scripts/container_images.py).

# The web client is built in a stage of its own; only its web/dist reaches the image. It takes
# the TypeScript SDK from its sources (web/tsconfig.json), with the SDK's runtime dependencies.
FROM node:20-slim AS web
WORKDIR /src/clients/typescript
COPY clients/typescript/package.json clients/typescript/package-lock.json ./
RUN npm ci --no-audit --no-fund --omit=dev
WORKDIR /src/web
COPY web/package.json web/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY clients/typescript/src /src/clients/typescript/src
COPY web/ ./
RUN npx vite build

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /srv/ginrummy

# The dependencies first, from the lock (every version pinned, every file's hash checked), so
# a code change does not reinstall them. The server itself is not installed: it runs from this
# tree (below).
COPY requirements.lock ./
RUN pip install --no-deps --require-hashes -r requirements.lock \
    && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin ginrummy \
    && mkdir /data \
    && chown ginrummy /data

COPY app ./app
# The migrations are found beside the package (app/store/migrate.py): `python -m app` run from
# this directory imports this tree, with the Alembic scripts next to it.
COPY alembic.ini ./
COPY alembic ./alembic
# Served at / (app/api/routes/web.py finds it beside the app package).
COPY --from=web /src/web/dist ./web/dist

USER 10001

ENV HOST=0.0.0.0 \
    PORT=8000 \
    PUBLIC_URL=http://localhost:8000 \
    DATABASE_URL=sqlite+aiosqlite:////data/ginrummy.db

VOLUME ["/data"]
EXPOSE 8000

HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/livez' % os.environ.get('PORT', '8000'), timeout=3)"]

CMD ["python", "-m", "app"]
