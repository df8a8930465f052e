"""GET JSON over HTTPS with urllib: throttled answers (429, 503) retried, every request counted."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from gpu_audit.core.redact import redact_urls
from gpu_audit.errors import CollectorError

ATTEMPTS = 5
TIMEOUT = 60.0
RETRY_CAP = 30.0  # seconds; a longer Retry-After is cut to this


class JsonGetter:
    """Requests sent so far, and one GET of a JSON document at a time."""

    def __init__(self, name: str, headers: dict[str, str] | None = None) -> None:
        self.name = name
        self.sent = 0
        self.headers = {"Accept": "application/json", **(headers or {})}

    def get(self, url: str) -> Any:  # Any: JSON of any shape
        """The JSON answer at an http(s) URL; 429 and 503 retried after Retry-After; CollectorError
        naming the URL (its query left out) on any other failure."""
        if urlsplit(url).scheme not in ("http", "https"):
            raise CollectorError(f"{self.name}: not an http(s) URL: {_where(url)}")
        for attempt in range(ATTEMPTS):
            self.sent += 1
            request = urllib.request.Request(url, headers=self.headers)  # noqa: S310
            try:
                with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:  # noqa: S310
                    body = answer.read()
            except urllib.error.HTTPError as exc:
                if exc.code in (429, 503) and attempt + 1 < ATTEMPTS:
                    time.sleep(_wait(exc.headers.get("Retry-After"), attempt))
                    continue
                raise CollectorError(f"{self.name}: HTTP {exc.code} from {_where(url)}") from exc
            except (urllib.error.URLError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                raise CollectorError(f"{self.name}: cannot reach {_where(url)}: {reason}") from exc
            try:
                return json.loads(body)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise CollectorError(f"{self.name}: not JSON from {_where(url)}: {exc}") from exc
        raise CollectorError(f"{self.name}: still throttled after {ATTEMPTS} attempts")


def _wait(header: str | None, attempt: int) -> float:
    try:
        return min(RETRY_CAP, max(0.0, float(header))) if header else min(RETRY_CAP, 2.0**attempt)
    except ValueError:
        return min(RETRY_CAP, 2.0**attempt)


def _where(url: str) -> str:
    """The scheme, host and path only: query strings may hold an API key."""
    parts = urlsplit(url)
    return redact_urls(f"{parts.scheme}://{parts.netloc}{parts.path}")


def same_origin(base: str, link: str) -> bool:
    """True when `link` has the scheme and host of `base` (a next-page link is followed only
    then)."""
    a, b = urlsplit(base), urlsplit(link)
    return (a.scheme, a.netloc) == (b.scheme, b.netloc)
