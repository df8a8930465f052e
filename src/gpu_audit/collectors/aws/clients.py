"""botocore client creation made cheap for many (account × region × service) clients.

An organisation scan makes two or three clients per work item. botocore builds each client's class
anew (one Python method per API operation: ~830 for EC2) and parses a new `ServiceModel`, whose
endpoint-discovery check then walks every operation: 16 ms of CPU per EC2 client and 10 ms per
SageMaker client, more than the work item's API calls cost (benchmarks/README.md, "Organisation
scan"). A client's class and service model depend only on the service and the session's event
handlers, so for the sessions a `ClientMemo` is attached to, they are made once per service and
reused (2 ms a client), and the clients share one cache of event-name aliases. This touches two
private `ClientCreator` methods and the emitter's alias cache: it is checked against
the installed botocore (`attach` refuses quietly, leaving the plain path, when they are absent),
and a test scans the same fleet with and without it.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

_INSTALLED = False
_INSTALL_LOCK = threading.Lock()
# event emitter of an attached session → its memo; other sessions in the process are untouched.
_MEMOS: weakref.WeakKeyDictionary[Any, ClientMemo] = weakref.WeakKeyDictionary()


class ClientMemo:
    """Service models and client classes, by service, shared by the sessions it is attached to
    (they must register the same event handlers: `Sessions` gives every session the same)."""

    def __init__(self) -> None:
        self.models: dict[tuple[str, str | None], Any] = {}
        self.classes: dict[tuple[str, int], Any] = {}
        self.aliases: dict[str, str] = {}

    def adopt(self, client: Any) -> Any:
        """`client` with its event emitter's alias cache shared with every other client's.

        Each client copies the session's emitter, but not the cache of event-name aliases it
        fills on every emit: a client that makes three calls computes ~50 aliases three times
        over (0.5 ms a call). The aliases are botocore's fixed table, the same for every client."""
        events = client.meta.events
        if isinstance(getattr(events, "_alias_name_cache", None), dict):
            events._alias_name_cache = self.aliases
        return client

    def attach(self, session: Any) -> bool:
        """Memoize client creation on `session`; False when this botocore lacks the hooks."""
        if not _install():
            return False
        _MEMOS[session.get_component("event_emitter")] = self
        return True


def _install() -> bool:
    """Wrap `ClientCreator._load_service_model` and `_create_client_class` once per process."""
    global _INSTALLED
    from botocore.client import ClientCreator

    with _INSTALL_LOCK:
        if _INSTALLED:
            return True
        load = getattr(ClientCreator, "_load_service_model", None)
        make = getattr(ClientCreator, "_create_client_class", None)
        if load is None or make is None:
            return False

        def load_service_model(self: Any, service_name: str, api_version: Any = None) -> Any:
            memo = _MEMOS.get(self._event_emitter)
            if memo is None:
                return load(self, service_name, api_version)
            key = (service_name, api_version)
            if key not in memo.models:
                memo.models[key] = load(self, service_name, api_version)
            return memo.models[key]

        def create_client_class(self: Any, service_name: str, service_model: Any) -> Any:
            memo = _MEMOS.get(self._event_emitter)
            if memo is None:
                return make(self, service_name, service_model)
            key = (service_name, id(service_model))  # the memoized model: one class per model
            if key not in memo.classes:
                memo.classes[key] = make(self, service_name, service_model)
            return memo.classes[key]

        ClientCreator._load_service_model = load_service_model  # type: ignore[attr-defined]
        ClientCreator._create_client_class = create_client_class  # type: ignore[attr-defined]
        _INSTALLED = True
        return True
