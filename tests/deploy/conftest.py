"""The server's image, built by podman from the Dockerfile as it is, for the image and compose
tests (``scripts/container_images.py`` makes the base images where none can be pulled)."""

from __future__ import annotations

import time

import pytest

from scripts import container_images


@pytest.fixture(scope="session")
def server_image() -> str:
    """``localhost/ginrummy-server:latest``, built now (cached layers make a rebuild seconds)."""
    started = time.monotonic()
    try:
        container_images.standins()
    except container_images.UnavailableError as exc:
        pytest.skip(f"podman cannot be had here, so no image is built or run: {exc}")
    ready = time.monotonic()
    build = container_images.build_server_image()
    print(f"stand-ins ready in {ready - started:.0f} s, the image built in {build:.0f} s")
    return container_images.SERVER_IMAGE
