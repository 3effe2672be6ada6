"""docker-compose.yml run for real by podman-compose: PostgreSQL, Redis, ``migrate``, two app
replicas and nginx from the file as written (the images from the Dockerfile and from
``scripts/container_images.py``'s stand-ins), nginx published on a free loopback port.

Then a whole match through nginx, a spectator's socket beside it; the replica that serves the
table is killed midway and the match finishes on the other (the spectator reconnects with
``since`` and misses nothing); and ``down -v`` leaves nothing of the stack behind.

The start is phased: podman 4.3 has no ``condition: service_healthy`` for podman-compose to
wait on (it warns and ignores it) and refuses to start a container linked to one it did not
start in the same call. So each wave of services whose dependencies are met is started with
``up --no-deps``, and each service's ``depends_on`` condition is waited for here: healthy
(``podman healthcheck run``: with no systemd nothing runs the checks by itself) or exited 0.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from scripts.container_images import podman, podman_env, standins
from tests.api.conftest import _free_port
from tests.cluster.test_cluster import (
    Recipient,
    assert_exactly_the_log,
    new_match,
    recorded,
    view_of,
)
from tests.deploy.test_compose import COMPOSE, services

PODMAN_COMPOSE = str(Path(sys.executable).parent / "podman-compose")
LABEL = "io.podman.compose.project"


def waves(found: dict[str, Any]) -> list[list[str]]:
    """The services in the order ``depends_on`` allows: each wave needs only earlier ones."""
    needs = {name: set(service.get("depends_on", {})) for name, service in found.items()}
    done: list[str] = []
    order: list[list[str]] = []
    while len(done) < len(needs):
        wave = sorted(n for n, deps in needs.items() if n not in done and deps <= set(done))
        assert wave, f"depends_on has a cycle: {needs}"
        order.append(wave)
        done += wave
    return order


def awaited(found: dict[str, Any], name: str) -> set[str]:
    """The conditions on ``name`` that the services depending on it wait for."""
    return {
        needs[name]["condition"]
        for service in found.values()
        if name in (needs := service.get("depends_on", {}))
    }


@dataclass
class Stack:
    project: str
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def compose(self, *args: str) -> str:
        env = {**podman_env(), "HTTP_PORT": f"127.0.0.1:{self.port}"}
        run = subprocess.run(
            [PODMAN_COMPOSE, "-p", self.project, "-f", str(COMPOSE), *args],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        return run.stdout

    def container(self, service: str) -> str:
        names = podman(
            "ps",
            "--all",
            "--filter",
            f"label={LABEL}={self.project}",
            "--filter",
            f"label=com.docker.compose.service={service}",
            "--format",
            "{{.Names}}",
        ).stdout.split()
        assert len(names) == 1, (service, names)
        return names[0]

    def logs(self, service: str) -> str:
        run = podman("logs", self.container(service), check=False)
        return run.stdout + run.stderr

    def wait_healthy(self, service: str, timeout: float = 120) -> None:
        name = self.container(service)
        deadline = time.monotonic() + timeout
        while podman("healthcheck", "run", name, check=False).returncode != 0:
            state = podman("inspect", "--format", "{{.State.Status}}", name).stdout.strip()
            assert state == "running", f"{service} is {state}:\n{self.logs(service)[-3000:]}"
            assert time.monotonic() < deadline, f"{service} never healthy:\n{self.logs(service)}"
            time.sleep(0.5)

    def wait_exited_0(self, service: str) -> None:
        code = podman("wait", self.container(service)).stdout.strip()
        assert code == "0", f"{service} exited {code}:\n{self.logs(service)[-3000:]}"

    def up(self) -> float:
        """Every service started as docker-compose.yml orders them; the seconds it took."""
        started = time.monotonic()
        found = services()
        for wave in waves(found):
            self.compose("up", "--detach", "--no-deps", *wave)
            for name in wave:
                conditions = awaited(found, name)
                if "service_completed_successfully" in conditions:
                    self.wait_exited_0(name)
                if "service_healthy" in conditions:
                    self.wait_healthy(name)
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return time.monotonic() - started
            assert time.monotonic() < deadline, self.logs("nginx")
            time.sleep(0.2)

    def leftovers(self) -> list[str]:
        """Containers, volumes and networks of the project that still exist."""
        left = podman(
            "ps", "--all", "--filter", f"label={LABEL}={self.project}", "--format", "{{.Names}}"
        ).stdout.split()
        left += podman(
            "volume", "ls", "--filter", f"label={LABEL}={self.project}", "--format", "{{.Name}}"
        ).stdout.split()
        networks = podman("network", "ls", "--format", "{{.Name}}").stdout.split()
        return left + [n for n in networks if n.startswith(f"{self.project}_")]


def anonymous_volumes(stack: Stack) -> list[str]:
    """The volumes podman made for the image's ``VOLUME /data`` in the project's containers."""
    names = podman(
        "ps", "--all", "--filter", f"label={LABEL}={stack.project}", "--format", "{{.Names}}"
    ).stdout.split()
    found = []
    for name in names:
        mounts = podman("inspect", "--format", "{{range .Mounts}}{{.Name}} {{end}}", name).stdout
        for volume in mounts.split():
            anonymous = podman("volume", "inspect", "--format", "{{.Anonymous}}", volume)
            if anonymous.stdout.strip() == "true":
                found.append(volume)
    return found


@pytest.fixture(scope="module")
def stack(server_image: str) -> Iterator[Stack]:
    standins(
        [
            "docker.io/library/postgres:16",
            "docker.io/library/redis:7",
            "docker.io/library/nginx:1.27",
        ]
    )
    stack = Stack(f"ginrummy-test-{uuid.uuid4().hex[:8]}", _free_port())
    try:
        print(f"the stack answered /readyz through nginx {stack.up():.0f} s after up")
        yield stack
    finally:
        volumes = anonymous_volumes(stack)
        with contextlib.suppress(AssertionError, subprocess.TimeoutExpired):
            stack.compose("down", "--volumes", "--timeout", "5")
        # podman-compose's down -v removes the file's named volumes, not the anonymous ones
        # that Docker Compose's removes too.
        for volume in volumes:
            podman("volume", "rm", "--force", volume, check=False)


def test_the_stack_is_ready_through_nginx(stack: Stack) -> None:
    ready = httpx.get(f"{stack.url}/readyz").json()
    assert ready == {"status": "ok", "checks": {"database": "ok", "redis": "ok", "bus": "ok"}}


def served_by(stack: Stack, table_id: str) -> list[int]:
    return [stack.logs(app).count(f"/v1/tables/{table_id}") for app in ("app1", "app2")]


async def test_a_match_through_nginx_finishes_when_its_replica_is_killed(stack: Stack) -> None:
    ws = stack.url.replace("http://", "ws://", 1)
    async with httpx.AsyncClient(base_url=stack.url, timeout=30) as client:
        match = await new_match(client, target=30)
        # Requests of no table go round-robin: the two players' creations reach both replicas.
        assert all('"/v1/players"' in stack.logs(app) for app in ("app1", "app2"))
        await match.command(0, f"/v1/tables/{match.table_id}/start")
        spectator_url = f"{ws}/v1/tables/{match.table_id}/ws"
        async with contextlib.AsyncExitStack() as sockets:
            watching = [await sockets.enter_async_context(recorded(spectator_url))]
            first = (await watching[0].first("view"))["seq"]
            view = await match.play(8)
            await watching[0].reach(view["seq"])

            counts = served_by(stack, match.table_id)
            assert sorted(counts)[0] == 0 and max(counts) > 8, counts  # one replica: nginx
            victim = ("app1", "app2")[counts.index(max(counts))]
            survivor = ({"app1", "app2"} - {victim}).pop()
            podman("kill", stack.container(victim))
            before = served_by(stack, match.table_id)[("app1", "app2").index(survivor)]

            while not match.finished:
                await match.step()
                if watching[-1].done:
                    since = f"{spectator_url}?since={watching[-1].seq}"
                    watching.append(await sockets.enter_async_context(recorded(since)))
            spectator: Recipient = (watching, first, None)
            await assert_exactly_the_log(client, match, [spectator])
            final = await view_of(client, match.table_id, match.players[0])
            assert final["game"]["match"]["status"] == "finished"

    state = podman("inspect", "--format", "{{.State.Status}}", stack.container(victim)).stdout
    assert state.strip() == "exited"
    after = served_by(stack, match.table_id)[("app1", "app2").index(survivor)]
    assert after > before, (before, after)
    assert len(watching) >= 2, "the spectator's socket to the killed replica never closed"


def test_down_v_leaves_nothing(stack: Stack) -> None:
    volumes = anonymous_volumes(stack)
    assert stack.leftovers()
    stack.compose("down", "--volumes", "--timeout", "5")
    assert stack.leftovers() == []
    for volume in volumes:
        podman("volume", "rm", "--force", volume, check=False)
