"""The model a serving config serves and the precision it states: what `inference-small-gpu`
needs to judge whether the weights fit the smaller GPU it would recommend."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from typing import Any

import yaml

from gpu_audit.core.lazyre import lazy
from gpu_audit.core.yamlsrc import is_templated
from gpu_audit.jobs.interface import JobDraft

# `--model X`, `--model-id=X`, `--model_name_or_path X`, `--model-path X`, `vllm serve X`, and
# the download a setup script makes (`repo_id='X'`, `huggingface-cli download X`)
_FLAG = lazy(
    r"(?:--(?:model|model[-_]id|model[-_]name[-_]or[-_]path|model[-_]path|served[-_]model)"
    r"(?:=|\s+)|\bvllm\s+serve\s+|\brepo_id\s*=\s*|\b(?:huggingface-cli|hf)\s+download\s+)"
    r"[\"']?([$\w{}][\w.{}$/:-]*)",
    re.IGNORECASE,
    needs=("model", "vllm", "repo_id", "download"),
)
_SETUP_KEYS = ("setup",)  # SkyPilot's setup downloads the weights the run serves
_ID = lazy(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")  # org/name, not a path or a bucket
_VAR = lazy(r"^\$\{?(\w+)\}?$")
# Environment variables serving images read the model from (TGI MODEL_ID, SageMaker HF_MODEL_ID).
_MODEL_ENV = lazy(r"^(?:HF_)?MODEL(?:_ID|_NAME|_PATH|_REPO)?$", re.IGNORECASE)
_MODEL_KEYS = frozenset({"model_id", "model_source", "model", "model_name_or_path"})
_ENV_KEYS = frozenset({"env", "envs", "environment", "Environment", "variables"})
# (precision, pattern) in order: a stated precision in the command or environment, or the id's.
_PRECISIONS = (
    (
        "4-bit",
        r"--quantiz\w*[= ]\s*[\"']?(?:awq|gptq|marlin|bitsandbytes|bnb|nf4|squeezellm|"
        r"gguf|aqlm|exl2)|--load[-_]in[-_]4bit|\bQUANTIZE=(?:awq|gptq|bitsandbytes-nf4|"
        r"bitsandbytes-fp4)|[-_](?:awq|gptq|int4|4bit|bnb-4bit|q4\w*|gguf)\b",
    ),
    (
        "8-bit",
        r"--quantiz\w*[= ]\s*[\"']?(?:fp8|int8|eetq|bitsandbytes-8bit|bitsandbytes\b)|"
        r"--load[-_]in[-_]8bit|--dtype[= ]\s*(?:fp8|int8)|\bQUANTIZE=(?:fp8|eetq|bitsandbytes)\b|"
        r"[-_](?:fp8|int8|8bit|w8a8)\b",
    ),
    ("32-bit", r"--dtype[= ]\s*[\"']?(?:float32|fp32|float)\b"),
)
_PRECISION_PATTERNS = tuple((name, lazy(p, re.IGNORECASE)) for name, p in _PRECISIONS)


def read_served_model(draft: JobDraft, texts: Iterable[tuple[str, int | None]]) -> None:
    """Set `served_model.*` from the run commands and the document's environment and model keys:
    the first Hugging Face id named, its size from the catalog, and the precision stated."""
    from gpu_audit.catalog.models import model_size  # keeps catalog.models off check's start-up

    texts = list(texts)
    data = draft.document.data
    env = _environment(data)
    commands = [(text, line) for text, line in texts if text]
    if isinstance(data, dict):
        for key in _SETUP_KEYS:
            if isinstance(data.get(key), str):
                commands.append((data[key], getattr(data, "line_of", lambda _k: None)(key)))
    found: tuple[str, int | None] | None = None
    for text, line in commands:
        for match in _FLAG.finditer(text):
            model = _resolve(match.group(1), env)
            if model is not None:
                found = (model, line)
                break
        if found:
            break
    if found is None:
        found = next(
            ((value, line) for key, value, line in env.values() if _MODEL_ENV.match(key)), None
        )
        found = found if found and _ID.match(found[0]) else None
    if found is None:
        found = _model_key(data)
    if found is None:
        return
    model, line = found
    draft.set("served_model.name", model, line)
    size = model_size(model)
    if size is None:
        draft.add_note(f"model {model}: its size is not known")
        return
    # the precision the run states (a setup script's words about other formats do not count)
    ran = [text for text, _ in texts if text]
    said = " ".join([model, *ran, *(f"{k}={v}" for k, v, _ in env.values())])
    precision = next((name for name, p in _PRECISION_PATTERNS if p.search(said)), "16-bit")
    draft.set("served_model.params_b", size.params_b, line)
    draft.set("served_model.precision", precision, line)
    draft.model_gpus = _engine_gpus(data) or _gpus_per_copy(said)
    draft.add_note(f"model {model}: {size.params_b:g}B parameters ({size.source}), {precision}")


_SHARDS = lazy(
    r"(?:--tensor[-_]parallel[-_]size|--tp(?:[-_]size)?|-tp|--num[-_]shard|\bNUM_SHARD)"
    r"(?:=|\s+)[\"']?(\d+)",
    re.IGNORECASE,
)


def _gpus_per_copy(said: str) -> int | None:
    """The GPUs one copy of the model is split over: the tensor-parallel size stated; vLLM's
    default of one GPU; None (every GPU the job asks for) where neither says."""
    found = _SHARDS.search(said)
    if found:
        return max(1, int(found.group(1)))
    if "vllm" in said.lower():
        return 1
    return None


def _resolve(value: str, env: dict[str, tuple[str, str, int | None]]) -> str | None:
    variable = _VAR.match(value)
    if variable:
        entry = env.get(variable.group(1).upper())
        value = entry[1] if entry else value
    if is_templated(value) or not _ID.match(value):
        return None
    return value


def _environment(data: Any, budget: int = 400) -> dict[str, tuple[str, str, int | None]]:
    """Environment variables the document sets anywhere: {NAME: (name, value, line)}; a map,
    `NAME=value` strings, or Kubernetes `{name, value}` entries."""
    found: dict[str, tuple[str, str, int | None]] = {}
    stack: list[Any] = [data]
    while stack and budget > 0:
        budget -= 1
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key in _ENV_KEYS:
                    _put_env(found, value, getattr(node, "line_of", lambda _k: None)(key))
                if isinstance(value, dict | list):
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _put_env(found: dict[str, tuple[str, str, int | None]], value: Any, line: int | None) -> None:
    items: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str) and "=" in item:
                items.append(tuple(item.split("=", 1)))  # type: ignore[arg-type]
            elif isinstance(item, dict) and "name" in item:
                items.append((item.get("name"), item.get("value")))
    for key, item in items:
        if isinstance(key, str) and isinstance(item, str | int | float):
            found.setdefault(key.upper(), (key, str(item), line))


def _model_key(data: Any) -> tuple[str, int | None] | None:
    """A model id under a key that names one (Ray Serve LLM `model_id`, `model_source`), in the
    document or the Serve config a KubeRay RayService holds as text (`serveConfigV2: |`)."""
    named = [
        (key, value, line)
        for key, value, line in _keys(data)
        if key in _MODEL_KEYS and isinstance(value, str) and _ID.match(value)
    ]
    # Ray Serve LLM's `model_id` is the name it serves under; `model_source` is the weights
    found = next((n for n in named if n[0] == "model_source"), named[0] if named else None)
    return (found[1], found[2]) if found else None


# Ray Serve LLM's `engine_kwargs` (vLLM's engine arguments): one copy of the model is split over
# tensor × pipeline parallel GPUs
_PARALLEL_KEYS = ("tensor_parallel_size", "pipeline_parallel_size")
_EMBEDDED = frozenset({"serveConfigV2", "serve_config", "serveConfig"})


def _engine_gpus(data: Any) -> int | None:
    """GPUs per copy from the first mapping stating a tensor or pipeline parallel size."""
    sizes: dict[str, int] = {}
    for key, value, _line in _keys(data):
        if key in _PARALLEL_KEYS and key not in sizes and isinstance(value, int) and value >= 1:
            sizes[key] = min(value, 4096)
    return math.prod(sizes.values()) if sizes else None


def _keys(data: Any, budget: int = 400) -> Iterator[tuple[Any, Any, int | None]]:
    """(key, value, line) of every mapping in the document, depth first, with the YAML text of a
    Serve config key read as a document of its own (its keys at the key's line)."""
    stack: list[tuple[Any, int | None]] = [(data, None)]
    while stack and budget > 0:
        budget -= 1
        node, at = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                line = getattr(node, "line_of", lambda _k: None)(key) or at
                yield key, value, line
                if isinstance(value, dict | list):
                    stack.append((value, at))
                elif key in _EMBEDDED and isinstance(value, str) and len(value) < 200_000:
                    stack.append((_embedded(value), line))
        elif isinstance(node, list):
            stack.extend((item, at) for item in reversed(node))


def _embedded(text: str) -> object:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:  # not YAML: nothing to read (the KubeRay operator refuses it)
        return None
