"""An API endpoint overridden by an environment variable, for tests and private endpoints:
authentication is dropped only when the override points at loopback."""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import urlsplit

from gpu_audit.core.frozen import record


@record
class Endpoint:
    """Where one API is reached: `url` None is the library default; `anonymous` only on loopback."""

    url: str | None
    anonymous: bool = False

    def base(self, default: str) -> str:
        """The URL prefix for a plain REST call; a bare host means https, as for the GCE client."""
        if self.url is None:
            return default
        return self.url if "://" in self.url else f"https://{self.url}"


def endpoint(env: str) -> Endpoint:
    """The endpoint the environment variable `env` names (trailing `/` dropped; None when unset),
    anonymous when it is loopback."""
    url = os.environ.get(env, "").strip().rstrip("/") or None
    return Endpoint(url, anonymous=url is not None and is_loopback(url))


def is_loopback(url: str) -> bool:
    """True when the URL's host is `localhost` or a loopback address (127.0.0.0/8, ::1)."""
    host = urlsplit(url if "://" in url else f"//{url}").hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
