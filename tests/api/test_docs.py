"""/docs and /redoc load everything they need from this server: they work without internet."""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

import httpx

from tests.api.conftest import Server, sqlite_only


@sqlite_only
async def test_the_api_docs_need_no_other_host(server: Server, client: httpx.AsyncClient) -> None:
    here = urlsplit(server.url).netloc
    for page in ("/docs", "/redoc"):
        r = await client.get(page)
        assert r.status_code == 200 and "text/html" in r.headers["content-type"]
        urls = re.findall(r"""(?:src|href|url)\s*[=:]\s*['"]([^'"]+)['"]""", r.text)
        assert any(u.endswith(".js") for u in urls), (page, urls)
        for url in urls:
            absolute = urljoin(f"{server.url}{page}", url)
            assert urlsplit(absolute).netloc == here, (page, url)
            asset = await client.get(absolute)
            assert asset.status_code == 200 and asset.content, (page, url)
        # No other host is named anywhere in the page (fonts, scripts, styles).
        hosts = {urlsplit(u).netloc for u in re.findall(r"https?://[^\s'\"<>)]+", r.text)}
        assert hosts <= {here}, (page, hosts)
