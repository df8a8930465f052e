"""botocore client creation made cheap for many (account × region × service) clients.

An organisation scan makes two or three clients per work item. botocore builds each client's class
anew (one Python method per API operation: ~830 for EC2) and parses a new `ServiceModel`, whose
endpoint-discovery check then walks every operation: 16 ms of CPU per EC2 client and 10 ms per
SageMaker client, more than the work item's API calls cost (benchmarks/README.md, "Organisation
scan"). A client's class and service model depend only on the service and the session's event
handlers, so for the sessions a `ClientMemo` is attached to, they are made once per service and
reused; the clients share one cache of event-name aliases and, by endpoint, one HTTP session (its
connection pool outlives an account's clients: a new client's first call opens no connection,
and against AWS pays no new TLS handshake); each client's copy of the session's event handlers
is made without `copy.copy`'s dispatch per node (`copy_emitter`); `freeze_config` resolves the
configuration once. A client then costs ~0.7 ms. This touches two private `ClientCreator` methods,
`EndpointCreator.create_endpoint`'s `http_session_cls`, `EventAliaser.__copy__`, the config
store's mapping and the emitter's alias cache and handler trie: it is checked against the
installed botocore (`attach` refuses quietly, leaving the plain path, when they are absent; a
handler copy that differs from botocore's own is not used), and a test scans the same fleet with
and without it.
"""

from __future__ import annotations

import copy
import inspect
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
_NodeList: Any = None  # botocore.hooks.NodeList, once installed


class ClientMemo:
    """Service models and client classes, by service, shared by the sessions it is attached to
    (they must register the same event handlers: `Sessions` gives every session the same)."""

    def __init__(self) -> None:
        self.models: dict[tuple[str, str | None], Any] = {}
        self.classes: dict[tuple[str, int], Any] = {}
        self.aliases: dict[str, str] = {}
        self.http: dict[tuple[str, str], Any] = {}  # (endpoint URL, options) → HTTP session
        self.copies = True  # `copy_emitter` copies the attached sessions' handlers as botocore

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

        def shared(**options: Any) -> Any:  # Any: botocore's objects are untyped
            key = (url, repr(sorted(options.items())))
            if key not in self.http:
                self.http[key] = make(**options)
            return self.http[key]

        return shared

    def attach(self, session: Any) -> bool:
        """Memoize client creation on `session`; False when this botocore lacks the hooks."""
        if not _install():
            return False
        emitter = session.get_component("event_emitter")
        self.copies = self.copies and _copies_as_botocore(emitter)
        _MEMOS[emitter] = self
        return True


def copy_emitter(emitter: Any) -> Any:  # Any: botocore's objects are untyped
    """`HierarchicalEmitter.__copy__` with the handler trie copied node by node directly.

    Every client copies the session's emitter (a trie of ~190 nodes of handler lists); botocore
    copies each node and list through `copy.copy`, 0.2–0.5 ms a client, a fifth of its cost."""
    new = emitter.__class__()
    state = emitter.__dict__.copy()
    trie = emitter._handlers
    state["_handlers"] = trie.__class__()
    state["_handlers"].__dict__ = _copy_node(trie.__dict__)
    state["_unique_id_handlers"] = copy.copy(emitter._unique_id_handlers)
    new.__dict__ = state
    return new


def _copy_node(node: dict[str, Any]) -> dict[str, Any]:
    """`_PrefixTrie._recursive_copy`: nodes copied deep, handler lists copied, handlers kept."""
    copied = node.copy()
    for key, value in node.items():
        if value.__class__ is dict:
            copied[key] = _copy_node(value)
        elif value.__class__ is _NodeList:  # botocore makes its three lists, never other kinds
            copied[key] = _NodeList(value[0].copy(), value[1].copy(), value[2].copy())
    return copied


def _copies_as_botocore(aliaser: Any) -> bool:
    """Whether `copy_emitter` copies this session's handlers as botocore's own copy does."""
    emitter: Any = getattr(aliaser, "_emitter", None)
    try:
        ours, theirs = copy_emitter(emitter), copy.copy(emitter)
    except (AttributeError, TypeError, IndexError):  # a botocore whose emitter is otherwise
        return False
    if ours.__dict__.keys() != theirs.__dict__.keys():
        return False
    return bool(
        ours._handlers.__dict__ == theirs._handlers.__dict__
        and ours._unique_id_handlers == theirs._unique_id_handlers
    )


def freeze_config(session: Any) -> bool:
    """Resolve `session`'s configuration variables once (environment, config file, defaults).

    botocore resolves each of ~40 variables through its chain (instance, environment, config
    file, default) for every client it makes: ~300 environment reads, a third of a client's
    cost. They cannot change during a scan. Only in the default `legacy` defaults mode: the
    others replace a chain's default per client, which a resolved value would hide."""
    from botocore.configprovider import ConstantProvider  # keeps botocore off start-up

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
    global _INSTALLED, _NodeList
    from botocore.client import ClientCreator  # keeps botocore off start-up
    from botocore.endpoint import EndpointCreator  # keeps botocore off start-up
    from botocore.hooks import EventAliaser, NodeList  # keeps botocore off start-up
    from botocore.httpsession import URLLib3Session  # keeps botocore off start-up

    with _INSTALL_LOCK:
        if _INSTALLED:
            return True
        load = getattr(ClientCreator, "_load_service_model", None)
        make = getattr(ClientCreator, "_create_client_class", None)
        endpoint: Callable[..., Any] = EndpointCreator.create_endpoint
        if load is None or make is None or "http_session_cls" not in _parameters(endpoint):
            return False

        # Any: botocore's objects are untyped
        def load_service_model(self: Any, service_name: str, api_version: Any = None) -> Any:
            memo = _MEMOS.get(self._event_emitter)
            if memo is None:
                return load(self, service_name, api_version)
            key = (service_name, api_version)
            if key not in memo.models:
                memo.models[key] = load(self, service_name, api_version)
            return memo.models[key]

        # Any: botocore's objects are untyped
        def create_client_class(self: Any, service_name: str, service_model: Any) -> Any:
            memo = _MEMOS.get(self._event_emitter)
            if memo is None:
                return make(self, service_name, service_model)
            key = (service_name, id(service_model))  # the memoized model: one class per model
            if key not in memo.classes:
                memo.classes[key] = make(self, service_name, service_model)
            return memo.classes[key]

        # Any: botocore's objects are untyped
        def create_endpoint(self: Any, *args: Any, **kwargs: Any) -> Any:
            memo: ClientMemo | None = getattr(_CREATING, "memo", None)
            url = kwargs.get("endpoint_url")
            if memo is None or not isinstance(url, str) or "http_session_cls" in kwargs:
                return endpoint(self, *args, **kwargs)
            kwargs["http_session_cls"] = memo.http_session(url, URLLib3Session)
            return endpoint(self, *args, **kwargs)

        copy_aliaser: Callable[..., Any] = EventAliaser.__copy__

        def copy_aliases(self: Any) -> Any:  # Any: botocore's objects are untyped
            memo = _MEMOS.get(self)  # the session's emitter, copied for each client it makes
            if memo is None:
                return copy_aliaser(self)
            handlers = copy_emitter(self._emitter) if memo.copies else copy.copy(self._emitter)
            copied = self.__class__(handlers, copy.copy(self._event_aliases))
            # The aliases of the ~50 event names a client emits are botocore's fixed table: one
            # cache for every client, not one each, filled anew on every client's first calls.
            copied._alias_name_cache = memo.aliases
            return copied

        _NodeList = NodeList
        EventAliaser.__copy__ = copy_aliases  # type: ignore[method-assign]
        ClientCreator._load_service_model = load_service_model  # type: ignore[attr-defined]
        EndpointCreator.create_endpoint = create_endpoint  # type: ignore[method-assign]
        ClientCreator._create_client_class = create_client_class  # type: ignore[attr-defined]
        _INSTALLED = True
        return True


def _parameters(function: Callable[..., Any]) -> set[str]:
    return set(inspect.signature(function).parameters)
