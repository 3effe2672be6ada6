"""The image built from the Dockerfile, run by podman as an operator runs it: published on a
port, SQLite in a named volume at /data. It serves /livez, /readyz, the web client and the
README's first game; its own HEALTHCHECK passes; the server runs as uid 10001; and a table
outlives the container (a new container on the same volume finds it)."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest

from scripts.container_images import podman
from tests.api.conftest import _free_port
from tests.api.test_readme import run_first_game

UID = 10001


class Served:
    """One container of the image at a time, on one volume, published on 127.0.0.1."""

    def __init__(self, image: str) -> None:
        self.image = image
        self.volume = f"ginrummy-test-{uuid.uuid4().hex[:12]}"
        self.name = ""
        self.port = _free_port()
        podman("volume", "create", self.volume)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> float:
        """A new container on the volume; the seconds until it answered /livez."""
        self.name = f"ginrummy-test-{uuid.uuid4().hex[:12]}"
        started = time.monotonic()
        podman(
            "run",
            "--detach",
            "--name",
            self.name,
            "--publish",
            f"127.0.0.1:{self.port}:8000",
            "--volume",
            f"{self.volume}:/data",
            "--env",
            f"PUBLIC_URL={self.url}",
            self.image,
        )
        while True:
            try:
                if httpx.get(f"{self.url}/livez", timeout=1).status_code == 200:
                    return time.monotonic() - started
            except httpx.HTTPError:
                pass
            running = podman("inspect", "--format", "{{.State.Running}}", self.name).stdout
            assert running.strip() == "true", self.logs()
            assert time.monotonic() - started < 60, self.logs()
            time.sleep(0.1)

    def logs(self) -> str:
        result = podman("logs", self.name, check=False)
        return result.stdout + result.stderr

    def remove(self) -> None:
        podman("rm", "--force", "--time", "10", self.name, check=False)

    def close(self) -> None:
        self.remove()
        podman("volume", "rm", "--force", self.volume, check=False)


@pytest.fixture(scope="module")
def served(server_image: str) -> Iterator[Served]:
    served = Served(server_image)
    try:
        print(f"the container answered /livez {served.start():.1f} s after start")
        yield served
    finally:
        served.close()


def test_the_image_has_a_healthcheck_and_a_non_root_user(server_image: str) -> None:
    config = podman("image", "inspect", "--format", "{{json .}}", server_image).stdout
    assert '"Healthcheck"' in config, "the HEALTHCHECK was dropped (build with --format docker)"
    assert re.search(rf'"User":\s*"{UID}"', config), config[:2000]


def test_the_container_serves_livez_readyz_and_the_web_client(served: Served) -> None:
    assert httpx.get(f"{served.url}/livez").json() == {"status": "ok"}
    ready = httpx.get(f"{served.url}/readyz")
    assert ready.status_code == 200, ready.text
    assert ready.json()["checks"]["database"] == "ok"
    page = httpx.get(f"{served.url}/")
    assert page.status_code == 200
    assert "<title>Gin Rummy</title>" in page.text
    assets = re.findall(r'(?:src|href)="(/assets/[^"]+)"', page.text)
    assert assets, page.text[:2000]
    for asset in assets:
        assert httpx.get(f"{served.url}{asset}").status_code == 200, asset


def test_the_readme_first_game_runs_through_the_container(served: Served) -> None:
    run_first_game(served.url)


def test_the_containers_own_healthcheck_passes(served: Served) -> None:
    check = podman("healthcheck", "run", served.name, check=False)
    assert check.returncode == 0, check.stdout + check.stderr + served.logs()


def test_the_server_runs_as_the_non_root_user(served: Served) -> None:
    status = podman("exec", served.name, "cat", "/proc/1/status").stdout
    cmdline = podman("exec", served.name, "cat", "/proc/1/cmdline").stdout
    assert cmdline.split("\0")[:3] == ["python", "-m", "app"], cmdline
    uids = re.search(r"^Uid:\s+(.*)$", status, re.M)
    assert uids is not None and set(uids.group(1).split()) == {str(UID)}, status


def test_a_table_in_the_sqlite_volume_outlives_the_container(served: Served) -> None:
    """Two people at a started table (nothing moves by itself); the container removed, a new
    one on the volume serves the very same table."""
    ada, bo = (httpx.post(f"{served.url}/v1/players", json={"name": n}).json() for n in "AB")
    auth = {"Authorization": f"Bearer {ada['token']}"}
    table = httpx.post(f"{served.url}/v1/tables", json={}, headers=auth).json()
    invite = f"{served.url}/v1/invites/{table['invite_code']}"
    assert httpx.post(invite, headers={"Authorization": f"Bearer {bo['token']}"}).is_success
    path = f"{served.url}/v1/tables/{table['table_id']}"
    assert httpx.post(f"{path}/start", headers=auth).status_code == 200
    before = httpx.get(path, headers=auth).json()
    assert before["game"]["match"]["status"] == "playing"
    served.remove()
    print(f"a new container on the volume answered /livez after {served.start():.1f} s")
    after = httpx.get(path, headers=auth)
    assert after.status_code == 200, after.text
    assert after.json() == before
