"""Azure SDK errors as coverage gaps: one located line, no token or URL query in it."""

from __future__ import annotations

from gpu_audit.core.redact import redact_urls
from gpu_audit.core.results import CoverageGap


def credential_failure(exc: Exception) -> bool:
    """The credential gave no token (azure-identity raised): nothing can be read. A 401 answer
    is not that: it concerns one subscription (another tenant's, say) and becomes its gap."""
    from azure.core.exceptions import ClientAuthenticationError  # keeps azure off start-up

    return isinstance(exc, ClientAuthenticationError) and getattr(exc, "response", None) is None


def error_name(exc: Exception) -> str:
    """`AuthorizationFailed (403)`, `TooManyRequests (429)`, or the exception's class name."""
    status = getattr(exc, "status_code", None)
    error = getattr(exc, "error", None)
    code = getattr(error, "code", None) or getattr(exc, "reason", None) or type(exc).__name__
    return f"{code} ({status})" if isinstance(status, int) else str(code)


def one_line(exc: Exception) -> str:
    """The SDK error's message as one line: its first non-blank line, at most 300 characters, URL
    queries redacted (the exception's class name when it says nothing)."""
    error = getattr(exc, "error", None)
    text = str(getattr(error, "message", None) or getattr(exc, "message", None) or exc)
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return redact_urls(lines[0][:300]) if lines else type(exc).__name__


def gap(subscription: str, exc: Exception, what: str = "") -> CoverageGap:
    """A coverage gap for `subscription` (and `what` in it) from an SDK error: its name and its
    one-line message."""
    scope = f"subscription {subscription}" + (f" {what}" if what else "")
    return CoverageGap(
        provider="azure",
        scope=scope,
        error=error_name(exc),
        message=one_line(exc),
        account=subscription,
    )
