"""URLs as they may be printed: no userinfo (user:password@) and no query string (tokens)."""

from __future__ import annotations

import re

from gpu_audit.core.lazyre import lazy

# scheme://[userinfo@]host[path][?query][#fragment], up to a space or a quote.
_URL = lazy(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^\s/?#\"'<>@]*@)?"
    r"(?P<rest>[^\s?#\"'<>]*)(?P<query>\?[^\s#\"'<>]*)?",
    needs=("://",),
)


def redact_urls(text: str) -> str:
    """`text` with each URL's userinfo and query replaced by `[redacted]`."""

    def clean(match: re.Match[str]) -> str:
        userinfo = "[redacted]@" if match["userinfo"] else ""
        query = "?[redacted]" if match["query"] and len(match["query"]) > 1 else ""
        return f"{match['scheme']}{userinfo}{match['rest']}{query}"

    return _URL.sub(clean, text)
