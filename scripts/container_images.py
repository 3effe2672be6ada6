"""Build the server's image with podman on a machine that reaches no image registry.

    python3 -m scripts.container_images          # podman set up, the stand-ins built
    python3 -m scripts.container_images --image  # ... and ginrummy-server:latest (Dockerfile)

The Dockerfile and docker-compose.yml name official images (``python:3.11-slim``,
``node:20-slim``, ``postgres:16``, ``redis:7``, ``nginx:1.27``). Where they cannot be pulled,
this builds a stand-in for each under the same name from Debian's packages, on a Debian root
file system made with ``debootstrap`` (``docker.io/library/debian:bookworm-slim``), with the
machine's trusted CAs and apt sources in it so that apt, pip and npm inside a build reach what
the machine reaches. An image that exists is kept: each is built only when missing, so the
layers built on it stay cached (a re-import would change its id and throw them away).

It installs what it needs from Debian's packages when missing (podman, runc, debootstrap, the
CNI plugin that lets compose services find each other by name), and points podman at
``deploy/podman/containers.conf`` through ``CONTAINERS_CONF`` (the machine's own configuration
is left alone): ``eval "$(python3 -m scripts.container_images --env)"`` sets it in a shell.
Only the standard library is used, so the system's ``python3`` runs it before any venv exists.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PODMAN_DIR = ROOT / "deploy" / "podman"
CONTAINERS_CONF = PODMAN_DIR / "containers.conf"
STANDINS = PODMAN_DIR / "standins"
SERVER_IMAGE = "localhost/ginrummy-server:latest"
DEBIAN = "docker.io/library/debian:bookworm-slim"
# Each stand-in: the name it is built under, and its Containerfile in deploy/podman/standins.
IMAGES = {
    "docker.io/library/python:3.11-slim": "python.Containerfile",
    "docker.io/library/node:20-slim": "node.Containerfile",
    "docker.io/library/postgres:16": "postgres.Containerfile",
    "docker.io/library/redis:7": "redis.Containerfile",
    "docker.io/library/nginx:1.27": "nginx.Containerfile",
}
# Debian packages -> a file each provides (present: nothing to install).
TOOLS = {
    "podman": "/usr/bin/podman",
    "runc": "/usr/sbin/runc",
    "debootstrap": "/usr/sbin/debootstrap",
    "golang-github-containernetworking-plugin-dnsname": "/usr/lib/cni/dnsname",
}
# How every image here is built: RUN steps chrooted (no runtime needed inside a build),
# nothing pulled, the Docker format (the OCI one has no HEALTHCHECK: podman would drop it),
# and every step's layer kept for the next build.
BUILD = ("build", "--isolation", "chroot", "--pull=never", "--format", "docker", "--layers")
# Trimmed from the base as the official slim images are: no documentation, no translations.
# A Debian mirror in a deb822 source (URIs:) or a one-line one (deb [options] URL suite).
MIRROR_PATTERNS = (r"^URIs:\s*(\S+/debian)/?\s*$", r"^deb\s+(?:\[[^]]*\]\s+)?(\S+/debian)/?\s")
SLIM = ("usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale")


class UnavailableError(RuntimeError):
    """podman or what the stand-ins are made of cannot be had on this machine."""


def podman_env() -> dict[str, str]:
    """The environment podman runs in here: this project's containers.conf."""
    return {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF)}


def podman(*args: str, check: bool = True, quiet: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``podman ARGS`` with the project's configuration; its output is returned."""
    result = subprocess.run(
        ["podman", *args], env=podman_env(), capture_output=True, text=True, check=False
    )
    if check and result.returncode != 0:
        detail = "" if quiet else f"\n{result.stdout[-4000:]}{result.stderr[-4000:]}"
        raise subprocess.CalledProcessError(result.returncode, ["podman", *args], detail)
    return result


def image_exists(name: str) -> bool:
    return podman("image", "exists", name, check=False).returncode == 0


def _say(message: str) -> None:
    print(f"container_images: {message}", file=sys.stderr, flush=True)


def install_tools() -> None:
    """apt-get install what is missing (one ``apt-get update`` first), or say why not."""
    missing = [package for package, path in TOOLS.items() if not Path(path).exists()]
    if not missing:
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        needed = ", ".join(missing)
        raise UnavailableError(f"{needed} not installed, and apt-get cannot run (root on Debian)")
    _say(f"installing {' '.join(missing)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    update = subprocess.run(
        ["apt-get", "update", "-qq"], env=env, capture_output=True, text=True, check=False
    )
    install = subprocess.run(
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if install.returncode != 0:
        raise UnavailableError(
            f"apt-get install {' '.join(missing)} failed: {update.stderr[-500:]}"
            f"{install.stderr[-1000:]}"
        )


def _apt_mirror() -> str:
    """The Debian mirror the machine's apt uses (deb822 or one-line sources)."""
    sources = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for source in sources:
        if not source.is_file():
            continue
        text = source.read_text()
        for pattern in (
            r"^URIs:\s*(\S+/debian)/?\s*$",
            r"^deb\s+(?:\[[^]]*\]\s+)?(\S+/debian)/?\s",
        ):
            found = re.search(pattern, text, re.M)
            if found:
                return found.group(1)
    return "http://deb.debian.org/debian"


def _copy_machine_trust(rootfs: Path) -> None:
    """The machine's apt sources and settings and its trusted CAs, into ``rootfs``."""
    apt = rootfs / "etc" / "apt"
    for name in ("sources.list", "sources.list.d", "apt.conf.d"):
        source = Path("/etc/apt") / name
        if source.is_dir():
            shutil.copytree(source, apt / name, dirs_exist_ok=True)
        elif source.is_file():
            shutil.copy2(source, apt / name)
    bundle = Path("/etc/ssl/certs/ca-certificates.crt")
    if bundle.is_file():
        (rootfs / "etc" / "ssl" / "certs").mkdir(parents=True, exist_ok=True)
        shutil.copy2(bundle, rootfs / "etc" / "ssl" / "certs" / "ca-certificates.crt")
    local = Path("/usr/local/share/ca-certificates")
    if local.is_dir():
        shutil.copytree(
            local, rootfs / "usr" / "local" / "share" / "ca-certificates", dirs_exist_ok=True
        )


def _slim(rootfs: Path) -> None:
    for path in SLIM:
        for child in (rootfs / path).glob("*"):
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
    excludes = "".join(f"path-exclude=/{path}/*\n" for path in SLIM)
    (rootfs / "etc" / "dpkg" / "dpkg.cfg.d" / "slim").write_text(excludes)
    for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for child in (rootfs / cache).glob("*"):
            if child.is_file():
                child.unlink()


def _unmount_under(path: Path) -> None:
    """Unmount what debootstrap left mounted in ``path`` (a run that was killed leaves /proc,
    and /dev where it binds the machine's), so that removing the tree removes only its own."""
    mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    for mount in sorted((m for m in mounts if m.startswith(f"{path}/")), reverse=True):
        subprocess.run(["umount", "--lazy", mount], capture_output=True, check=False)


def _import(rootfs: Path, name: str) -> None:
    """``rootfs`` as the image ``name``, with the PATH and command of Debian's own images."""
    tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
    imported = subprocess.run(
        [
            "podman",
            "import",
            "--change",
            "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "--change",
            'CMD ["bash"]',
            "-",
            name,
        ],
        stdin=tar.stdout,
        env=podman_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    tar.wait()
    if imported.returncode != 0 or tar.returncode != 0:
        raise UnavailableError(f"podman import failed: {imported.stderr[-1000:]}")


def debian_base() -> None:
    """``debian:bookworm-slim`` made by debootstrap (minbase), when no such image exists."""
    if image_exists(DEBIAN):
        return
    mirror = _apt_mirror()
    _say(f"debootstrap bookworm from {mirror} -> {DEBIAN}")
    with tempfile.TemporaryDirectory(prefix="debootstrap-", dir="/var/tmp") as tmp:
        rootfs = Path(tmp) / "rootfs"
        try:
            run = subprocess.run(
                [
                    "debootstrap",
                    "--variant=minbase",
                    "--include=ca-certificates",
                    "bookworm",
                    str(rootfs),
                    mirror,
                ],
                capture_output=True,
                text=True,
                check=False,
            )
        finally:
            _unmount_under(Path(tmp))
        if run.returncode != 0:
            raise UnavailableError(f"debootstrap failed: {run.stdout[-1000:]}{run.stderr[-1000:]}")
        _copy_machine_trust(rootfs)
        _slim(rootfs)
        _import(rootfs, DEBIAN)


def _node_context(context: Path) -> None:
    """The machine's Node 20 binary and npm, beside the node stand-in's Containerfile."""
    node = shutil.which("node")
    version = (
        ""
        if node is None
        else subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout
    )
    if node is None or not version.startswith("v20."):
        raise UnavailableError(
            f"the node:20-slim stand-in takes this machine's Node 20 (found {version or 'none'})"
        )
    npm = Path(node).resolve().parent.parent / "lib" / "node_modules" / "npm"
    if not (npm / "bin" / "npm-cli.js").is_file():
        raise UnavailableError(f"no npm beside {node} (looked in {npm})")
    shutil.copy2(Path(node).resolve(), context / "node")
    shutil.copytree(npm, context / "npm", symlinks=True)


def standin(name: str) -> None:
    """Build the stand-in for ``name`` (one of IMAGES) unless an image of that name exists."""
    if image_exists(name):
        return
    debian_base()
    containerfile = IMAGES[name]
    _say(f"building {name} ({STANDINS / containerfile})")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="standin-", dir="/var/tmp") as tmp:
        context = Path(tmp)
        shutil.copytree(STANDINS, context, dirs_exist_ok=True)
        if name.endswith("/node:20-slim"):
            _node_context(context)
        podman(
            *BUILD,
            "--network",
            "host",
            "-t",
            name,
            "-f",
            str(context / containerfile),
            str(context),
        )
    _say(f"built {name} in {time.monotonic() - started:.0f} s")


def standins(names: Sequence[str] = tuple(IMAGES)) -> None:
    """podman installed and every stand-in in ``names`` present."""
    install_tools()
    for name in names:
        standin(name)


def build_server_image(tag: str = SERVER_IMAGE) -> float:
    """``podman build`` of the project's own Dockerfile as it is; the seconds it took."""
    standins(["docker.io/library/python:3.11-slim", "docker.io/library/node:20-slim"])
    started = time.monotonic()
    podman(*BUILD, "--network", "host", "-t", tag, str(ROOT))
    return time.monotonic() - started


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--image", action="store_true", help=f"also build {SERVER_IMAGE}")
    parser.add_argument("--env", action="store_true", help="print the CONTAINERS_CONF to export")
    args = parser.parse_args(argv)
    if args.env:
        print(f"export CONTAINERS_CONF={CONTAINERS_CONF}")
        return 0
    try:
        standins()
        if args.image:
            seconds = build_server_image()
            _say(f"built {SERVER_IMAGE} in {seconds:.0f} s")
    except UnavailableError as exc:
        _say(str(exc))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
