"""botocore client creation made cheap for many (account × region × service) clients.

An organisation scan makes two or three clients per work item. botocore builds each client's class
anew (one Python method per API operation: ~830 for EC2) and parses a new `ServiceModel`, whose
endpoint-discovery check then walks every operation: 16 ms of CPU per EC2 client and 10 ms per
SageMaker client, more than the work item's API calls cost (benchmarks/README.md, "Organisation
scan"). A client's class and service model depend only on the service and the session's event
handlers, so for the sessions a `ClientMemo` is attached to, they are made once per service and
reused; the clients share one cache of event-name aliases and, by endpoint, one HTTP session (its
connection pool outlives an account's clients: a new client's first call opens no connection,
and against AWS pays no new TLS handshake); `freeze_config` resolves the configuration once. A
client then costs ~1 ms. This touches two private `ClientCreator` methods,
`EndpointCreator.create_endpoint`'s `http_session_cls`, the config store's mapping and the
emitter's alias cache: it is checked against the installed botocore (`attach` refuses quietly,
leaving the plain path, when they are absent), and a test scans the same fleet with and without it.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_INSTALLED = False
_INSTALL_LOCK = threading.Lock()
# event emitter of an attached session → its memo; other sessions in the process are untouched.
_MEMOS: weakref.WeakKeyDictionary[Any, ClientMemo] = weakref.WeakKeyDictionary()
# the memo whose session is making a client in this thread (the endpoint is made inside).
_CREATING = threading.local()


class ClientMemo:
    """Service models and client classes, by service, shared by the sessions it is attached to
    (they must register the same event handlers: `Sessions` gives every session the same)."""

    def __init__(self) -> None:
        self.models: dict[tuple[str, str | None], Any] = {}
        self.classes: dict[tuple[str, int], Any] = {}
        self.aliases: dict[str, str] = {}
        self.http: dict[tuple[str, str], Any] = {}  # (endpoint URL, options) → HTTP session

    @contextmanager
    def creating(self) -> Iterator[None]:
        """Make a client in this block (its caller holds the sessions' lock)."""
        _CREATING.memo = self
        try:
            yield
        finally:
            _CREATING.memo = None

    def http_session(self, url: str, make: Callable[..., Any]) -> Callable[..., Any]:
        """A factory like `make` (botocore's `URLLib3Session`) that gives every client of the
        endpoint `url` made with the same options the same session: urllib3's pools are
        thread-safe, and one client is already shared by the threads this way."""

        def shared(**options: Any) -> Any:
            key = (url, repr(sorted(options.items())))
            if key not in self.http:
                self.http[key] = make(**options)
            return self.http[key]

        return shared

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


def freeze_config(session: Any) -> bool:
    """Resolve `session`'s configuration variables once (environment, config file, defaults).

    botocore resolves each of ~40 variables through its chain (instance, environment, config
    file, default) for every client it makes: ~300 environment reads, a third of a client's
    cost. They cannot change during a scan. Only in the default `legacy` defaults mode: the
    others replace a chain's default per client, which a resolved value would hide."""
    from botocore.configprovider import ConstantProvider

    store = session.get_component("config_store")
    mapping = getattr(store, "_mapping", None)
    if not isinstance(mapping, dict) or store.get_config_variable("defaults_mode") != "legacy":
        return False
    for name in list(mapping):
        store.set_config_provider(name, ConstantProvider(store.get_config_variable(name)))
    return True


def _install() -> bool:
    """Wrap `ClientCreator._load_service_model`, `_create_client_class` and
    `EndpointCreator.create_endpoint` once per process."""
    global _INSTALLED
    from botocore.client import ClientCreator
    from botocore.endpoint import EndpointCreator
    from botocore.httpsession import URLLib3Session

    with _INSTALL_LOCK:
        if _INSTALLED:
            return True
        load = getattr(ClientCreator, "_load_service_model", None)
        make = getattr(ClientCreator, "_create_client_class", None)
        endpoint: Callable[..., Any] = EndpointCreator.create_endpoint
        if load is None or make is None or "http_session_cls" not in _parameters(endpoint):
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

        def create_endpoint(self: Any, *args: Any, **kwargs: Any) -> Any:
            memo: ClientMemo | None = getattr(_CREATING, "memo", None)
            url = kwargs.get("endpoint_url")
            if memo is None or not isinstance(url, str) or "http_session_cls" in kwargs:
                return endpoint(self, *args, **kwargs)
            kwargs["http_session_cls"] = memo.http_session(url, URLLib3Session)
            return endpoint(self, *args, **kwargs)

        ClientCreator._load_service_model = load_service_model  # type: ignore[attr-defined]
        EndpointCreator.create_endpoint = create_endpoint  # type: ignore[method-assign]
        ClientCreator._create_client_class = create_client_class  # type: ignore[attr-defined]
        _INSTALLED = True
        return True


def _parameters(function: Callable[..., Any]) -> set[str]:
    import inspect

    return set(inspect.signature(function).parameters)
