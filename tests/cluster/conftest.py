"""Real processes: ``python -m app`` servers on one PostgreSQL database and one Redis, behind
nginx run from ``deploy/nginx.conf`` (its upstream and listen lines pointed at local ports).

The Redis is a ``redis-server`` of the tests' own, on a free port, so a test may stop and start
it; the prefix is unique all the same. Each server's output goes to a file the tests read (the
bus logs ``bus degraded`` and ``bus connected to redis``).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests.api.conftest import _free_port, pg_database
from tests.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
REDIS = shutil.which("redis-server") or "/usr/bin/redis-server"
NO_DISK = ("--save", "", "--appendonly", "no")


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


@dataclass
class RedisServer:
    port: int
    process: subprocess.Popen[bytes] | None = None
    password: str | None = None  # ``requirepass``: clients must AUTH

    @property
    def url(self) -> str:
        auth = "" if self.password is None else f":{self.password}@"
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self) -> None:
        secret = () if self.password is None else ("--requirepass", self.password)
        self.process = subprocess.Popen(
            [REDIS, "--port", str(self.port), "--bind", "127.0.0.1", *NO_DISK, *secret],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(self._pong, what="redis-server")

    def _pong(self) -> bool:
        cli = ["redis-cli", "-p", str(self.port), "ping"]
        if self.password is not None:
            cli[1:1] = ["--no-auth-warning", "-a", self.password]
        return subprocess.run(cli, capture_output=True, check=False).stdout.strip() == b"PONG"

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None


@dataclass
class App:
    """One ``python -m app`` process."""

    port: int
    log: Path
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def ready(self) -> None:
        wait_for(
            lambda: self.process.poll() is not None or _answers(f"{self.url}/healthz"),
            90,
            "python -m app",
        )
        assert self.process.poll() is None, self.output()

    def kill(self) -> None:
        """kill -9: no lease released, no socket closed cleanly."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def spawn_app(tmp: Path, env: dict[str, str]) -> App:
    """Start ``python -m app`` on a free port (``App.ready()`` waits for it to answer)."""
    port = _free_port()
    log = tmp / f"app-{port}.log"
    full = {
        **os.environ,
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "PUBLIC_URL": f"http://127.0.0.1:{port}",
        "PYTHONUNBUFFERED": "1",
        **env,
    }
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "app"], cwd=ROOT, env=full, stdout=out, stderr=out
        )
    return App(port, log, process)


def start_app(tmp: Path, env: dict[str, str]) -> App:
    app = spawn_app(tmp, env)
    app.ready()
    return app


@dataclass
class Nginx:
    port: int
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


def nginx_conf(upstreams: list[int], listen: int) -> str:
    """deploy/nginx.conf with its ``server appN:8000`` and ``listen`` lines made local."""
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    servers = re.findall(r"^(\s*)server app\d+:8000(.*);$", conf, flags=re.M)
    assert servers, "deploy/nginx.conf has no 'server appN:8000' lines"
    indent, options = servers[0]
    local = "\n".join(f"{indent}server 127.0.0.1:{p}{options};" for p in upstreams)
    conf = re.sub(r"^\s*server app\d+:8000.*;\n", "", conf, flags=re.M)
    conf = re.sub(r"^(\s*)upstream app \{\n", lambda m: m.group(0) + local + "\n", conf, flags=re.M)
    conf, listens = re.subn(r"listen 8080;", f"listen 127.0.0.1:{listen};", conf)
    assert listens == 1
    return conf


def start_nginx(tmp: Path, upstreams: list[int]) -> Nginx:
    port = _free_port()
    prefix = tmp / f"nginx-{port}"
    (prefix / "logs").mkdir(parents=True)
    conf = prefix / "nginx.conf"
    conf.write_text(nginx_conf(upstreams, port))
    process = subprocess.Popen(
        [
            NGINX,
            "-p",
            str(prefix),
            "-c",
            str(conf),
            "-e",
            str(prefix / "logs" / "error.log"),
            "-g",
            f"daemon off; pid {prefix / 'nginx.pid'};",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    proxy = Nginx(port, process)
    wait_for(lambda: process.poll() is not None or _answers(f"{proxy.url}/healthz"), 30, "nginx")
    assert process.poll() is None, (prefix / "logs" / "error.log").read_text()
    return proxy


@dataclass
class Cluster:
    database_url: str
    redis: RedisServer
    apps: list[App]
    nginx: Nginx
    prefix: str
    env: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return self.nginx.url

    def ws(self, path: str, app: App | None = None) -> str:
        base = (app.url if app else self.url).replace("http://", "ws://", 1)
        return base + path


# Bots pause 1 s before each move here, so a test can kill their process during the pause.
CLUSTER_ENV = {
    "BOT_DRAW_DELAY": "1.0",
    "BOT_DISCARD_DELAY": "1.0",
    "WS_HEARTBEAT": "1.0",
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Three app processes, their Redis and nginx; the first process migrates the database."""
    tmp = tmp_path_factory.mktemp("cluster")
    redis = RedisServer(_free_port())
    redis.start()
    prefix = f"test-{uuid.uuid4().hex}"
    apps: list[App] = []
    try:
        with pg_database("ginrummy_cluster", "synchronous_commit = off") as database_url:
            env = {
                **CLUSTER_ENV,
                "DATABASE_URL": database_url,
                "REDIS_URL": redis.url,
                "REDIS_PREFIX": prefix,
            }
            apps.append(start_app(tmp, env))
            apps.extend(spawn_app(tmp, {**env, "MIGRATE_ON_START": "false"}) for _ in range(2))
            for app in apps:
                app.ready()
            nginx = start_nginx(tmp, [a.port for a in apps])
            try:
                yield Cluster(database_url, redis, apps, nginx, prefix, env)
            finally:
                nginx.stop()
                for app in apps:
                    app.stop()
    finally:
        for app in apps:
            app.stop()
        redis.stop()


@dataclass
class Pair:
    """Two app processes on one database, their Redis and the bus's channel prefix."""

    apps: list[App]
    redis: RedisServer
    prefix: str


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """Two app processes on one database and their Redis (no proxy); the first migrates."""
    tmp = tmp_path_factory.mktemp("two")
    redis = RedisServer(_free_port())
    redis.start()
    prefix = f"test-{uuid.uuid4().hex}"
    apps: list[App] = []
    try:
        with pg_database("ginrummy_two", "synchronous_commit = off") as database_url:
            env = {
                **CLUSTER_ENV,
                "DATABASE_URL": database_url,
                "REDIS_URL": redis.url,
                "REDIS_PREFIX": prefix,
            }
            apps.append(spawn_app(tmp, env))
            apps[0].ready()  # it migrates the database
            apps.append(spawn_app(tmp, {**env, "MIGRATE_ON_START": "false"}))
            apps[1].ready()
            yield Pair(apps, redis, prefix)
    finally:
        for app in apps:
            app.stop()
        redis.stop()


@pytest.fixture(scope="module")
def two(pair: Pair) -> list[App]:
    return pair.apps


def table_loads(metrics: str) -> dict[str, float]:
    """``ginrummy_table_loads_total`` by reason, from a ``/metrics`` page."""
    found = re.findall(r'^ginrummy_table_loads_total\{reason="(\w+)"\} (\S+)$', metrics, re.M)
    return {reason: float(value) for reason, value in found}
