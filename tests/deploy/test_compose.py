"""The deployment files, checked without a Docker engine: the compose file's topology, health
checks and start order; Compose's own validation of it; its migration command run for real on
a fresh PostgreSQL database; and hadolint on the Dockerfile."""

from __future__ import annotations

import asyncio
import ipaddress
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import asyncpg
import yaml
from alembic.script import ScriptDirectory

from app.settings import Settings
from app.store.migrate import alembic_config
from tests.api.conftest import pg_database

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
BIN = Path(sys.executable).parent
# Environment variables the replicas get that are not ``Settings``: read by uvicorn itself.
UVICORN_ENV = {"FORWARDED_ALLOW_IPS"}


def services() -> dict[str, Any]:
    compose: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    found: dict[str, Any] = compose["services"]
    return found


def test_topology_database_and_redis_healthy_then_migrate_once_then_replicas() -> None:
    found = services()
    assert set(found) == {"postgres", "redis", "migrate", "app1", "app2", "nginx"}
    for dependency in ("postgres", "redis"):
        assert found[dependency]["healthcheck"]["test"], dependency
    assert found["migrate"]["command"] == ["alembic", "upgrade", "head"]
    assert found["migrate"]["restart"] == "no"
    assert found["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    for name in ("app1", "app2"):
        app = found[name]
        assert app["depends_on"] == {
            "postgres": {"condition": "service_healthy"},
            "redis": {"condition": "service_healthy"},
            "migrate": {"condition": "service_completed_successfully"},
        }
        env = app["environment"]
        assert env["MIGRATE_ON_START"] == "false"
        assert env["LOG_FORMAT"] == "json"
        assert env["DATABASE_URL"] == found["migrate"]["environment"]["DATABASE_URL"]
        assert "/readyz" in " ".join(app["healthcheck"]["test"])
        # Every variable is a setting (a typo would be silently ignored) with a valid value.
        fields = {f.upper() for f in Settings.model_fields}
        assert set(env) - fields <= UVICORN_ENV
        settings = Settings(**{k.lower(): v for k, v in env.items() if k.upper() in fields})
        assert settings.redis_url is not None and not settings.migrate_on_start
    assert found["app1"] == found["app2"]
    nginx = found["nginx"]
    # deploy/nginx.conf is a whole configuration (tests/cluster runs it as one): it replaces
    # nginx.conf, and the published port is the one it listens on.
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    assert re.search(r"^events \{", conf, re.M)
    assert "./deploy/nginx.conf:/etc/nginx/nginx.conf:ro" in nginx["volumes"]
    listen = re.findall(r"^\s*listen (\d+);", conf, re.M)
    # Published on 8080 unless HTTP_PORT says another ([address:]port; the tests take a free one).
    assert [f"${{HTTP_PORT:-8080}}:{port}" for port in listen] == nginx["ports"]
    assert nginx["depends_on"] == {
        "app1": {"condition": "service_healthy"},
        "app2": {"condition": "service_healthy"},
    }


def test_the_replicas_trust_the_forwarded_address_of_nginx_alone() -> None:
    """A client's own X-Forwarded-For must not name its address: the replicas trust the header
    from nginx's fixed address only (not ``*``), an address of the compose network far above
    those the engine hands out one by one from its bottom to the stack's other containers."""
    compose: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    found = compose["services"]
    proxy = ipaddress.ip_address(found["nginx"]["networks"]["default"]["ipv4_address"])
    (pool,) = compose["networks"]["default"]["ipam"]["config"]
    network = ipaddress.ip_network(pool["subnet"])
    assert proxy in network
    assert int(proxy) - int(network.network_address) > 10 * len(found)
    for name in ("app1", "app2"):
        assert found[name]["environment"]["FORWARDED_ALLOW_IPS"] == str(proxy)


def test_compose_validates_the_file() -> None:
    """Compose's own schema check (no engine needed): the v2 plugin or the Debian package."""
    if (
        shutil.which("docker")
        and subprocess.run(
            ["docker", "compose", "version"], capture_output=True, check=False
        ).returncode
        == 0
    ):
        command = ["docker", "compose"]
    else:
        assert shutil.which("docker-compose"), "install docker-compose (.ci/run does)"
        command = ["docker-compose"]
    result = subprocess.run(
        [*command, "-f", str(COMPOSE), "config", "-q"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr


async def _revision(url: str) -> str:
    conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        revision: str = await conn.fetchval("SELECT version_num FROM alembic_version")
        return revision
    finally:
        await conn.close()


def test_the_migrate_service_command_migrates_a_fresh_database() -> None:
    command = services()["migrate"]["command"]
    head = ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()
    with pg_database("ginrummy_migrate") as url:
        result = subprocess.run(
            [str(BIN / command[0]), *command[1:]],
            cwd=ROOT,
            env={**os.environ, "DATABASE_URL": url},
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        assert asyncio.run(_revision(url)) == head


def test_dockerfile_lints_clean_with_hadolint() -> None:
    result = subprocess.run(
        [str(BIN / "hadolint"), str(ROOT / "Dockerfile")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == ""
