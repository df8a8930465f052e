"""Set a training job's `training.*` fields from what it runs: its command, its hyperparameters,
and the scripts and configs those name (jobs/knobs/follow.py), each knob with its file and line.

The first file to state a knob wins, in this order: the job file's command, its hyperparameters,
then each file the command names, in the order it names them. A knob stated only as `"auto"` or a
template is noted and left missing. HF Trainer's `dataloader_num_workers` default of 0 is taken
where a Trainer command states no workers (the one default a rule relies on, docs/knobs.md).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import partial
from typing import Any

from gpu_audit.catalog.models import model_size
from gpu_audit.core.knobs.duration import KNOB
from gpu_audit.core.knobs.found import Knob
from gpu_audit.core.knobs.text import line_at, read_flags
from gpu_audit.core.lazyre import lazy
from gpu_audit.core.yamlsrc import load_documents
from gpu_audit.errors import InputError
from gpu_audit.jobs.interface import JobDraft
from gpu_audit.jobs.knobs import follow

_HYPER = frozenset({"hyperparameters", "HyperParameters", "hyperParameters"})
_HF_TRAINER = lazy(
    r"per_device_train_batch_size|--do_train\b|TrainingArguments|SFTConfig|\bTrainer\(",
    needs=(
        "per_device_train_batch_size",
        "--do_train",
        "TrainingArguments",
        "SFTConfig",
        "Trainer(",
    ),
)
# an adapter, or weights no full fine-tune trains (4-bit, unsloth's QLoRA builds)
_ADAPTER = lazy(
    r"lora|peft|adapter|4bit|4-bit|unsloth|gptq|awq",
    needs=("lora", "peft", "adapter", "4bit", "4-bit", "unsloth", "gptq", "awq"),
)
_FULL = lazy(r"full_finetune", needs=("full_finetune",))


def read_knobs(draft: JobDraft, ran: Iterable[tuple[str, int | None]]) -> None:
    """The knobs the job states, set on the draft with their lines; notes for those not read."""
    texts = [(text, line) for text, line in ran if text]
    knobs: list[Knob] = []
    notes: list[str] = []
    said: list[str] = []  # every text read, for the method and the Trainer default
    via: dict[str, int | None] = {}  # a followed file → the job-file line naming it
    for text, line in texts:
        first = line + 1 if line is not None and "\n" in text.strip("\n") else line
        knobs += read_flags(text, draft.path, first)
        said.append(text)
    data = draft.document.data
    for hyper in _hyperparameters(data):
        from gpu_audit.jobs.knobs.mapping import read_mapping  # configs only: not every job

        found, _ = read_mapping(hyper, draft.path)
        knobs += found
        said.extend(f"{k}" for k in hyper)
    workdir = data.get("workdir") if isinstance(data, dict) else None
    workdir = workdir if isinstance(workdir, str) else None
    queue: list[tuple[follow.Named, str, int]] = []
    for text, line in texts:
        first = line + 1 if line is not None and "\n" in text.strip("\n") else line
        for named in follow.named_paths(text, partial(line_at, text, first=first)):
            queue.append((named, draft.path, 0))
    done: set[tuple[str, int]] = set()
    while queue and len(done) < follow.MAX_FOLLOWED:
        named, base, depth = queue.pop(0)
        read = _follow(named, base, workdir if depth == 0 else None, notes)
        if read is None:
            continue
        path, text, first, kind = read
        if (path, first) in done:
            continue
        done.add((path, first))
        via.setdefault(path, named.line if depth == 0 else via.get(base))
        said.append(text)
        found, more = _read_file(path, kind, text, first)
        knobs += found
        if depth < 1:
            queue += [(follow.Named(w, named.line), path, depth + 1) for w, _ in more]
            if kind.endswith(".sh") and first == 1:
                queue += [
                    (n, path, depth + 1)
                    for n in follow.named_paths(text, partial(line_at, text, first=1))
                ]
    _apply(draft, knobs, via, " ".join(said), notes)


def _hyperparameters(data: Any, budget: int = 400) -> list[Any]:
    found = []
    stack = [data]
    while stack and budget > 0:
        budget -= 1
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key in _HYPER and isinstance(value, dict):
                    found.append(value)
                elif isinstance(value, dict | list):
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _follow(
    named: follow.Named, base: str, workdir: str | None, notes: list[str]
) -> tuple[str, str, int, str] | None:
    """(path, text, first line, its name) of a named file, or None with a note saying why."""
    path, why = follow.resolve(named.written, base, workdir)
    if path is not None:
        text = follow.read_named(path)
        if text is not None:
            return path, text, 1, path
        why = f"`{named.written}` cannot be read as text"
    embedded = follow.CONFIG_MAPS.get().get(os.path.basename(named.written))
    if embedded is not None:
        return base, embedded.text, embedded.first, os.path.basename(named.written)
    if named.written.endswith((".json", ".yaml", ".yml")) or "/" in named.written:
        notes.append(f"not followed: {why}")
    return None


def _read_file(
    path: str, kind: str, text: str, first: int
) -> tuple[list[Knob], list[tuple[str, int | None]]]:
    """The knobs of a followed file (`kind`: its name, which says how to read it)."""
    if kind.endswith(".py"):
        return read_flags(text, path, first, python=True), []
    if kind.endswith(".sh"):
        return read_flags(text, path, first), []
    from gpu_audit.jobs.knobs.mapping import read_mapping  # configs only: not every job

    try:
        documents = load_documents(kind, text)
    except InputError:
        return [], []
    knobs: list[Knob] = []
    names: list[tuple[str, int | None]] = []
    for document in documents:
        found, more = read_mapping(document.data, path)
        if first != 1:  # a ConfigMap entry: its lines counted from the key's next line
            found = [
                Knob(k.name, k.value, k.path, (k.line or 1) + first - 1, k.note) for k in found
            ]
        knobs += found
        names += more
    return knobs, names


def _apply(
    draft: JobDraft, knobs: list[Knob], via: dict[str, int | None], said: str, notes: list[str]
) -> None:
    chosen: dict[str, Knob] = {}
    unset: dict[str, Knob] = {}
    for knob in knobs:
        if knob.value is None:
            if knob.note and knob.name not in chosen:
                unset.setdefault(knob.name, knob)
            continue
        chosen.setdefault(knob.name, knob)
    full = _FULL.search(said) or not _ADAPTER.search(said.lower())
    if "method" not in chosen and "model" in chosen and full:
        model = chosen["model"]
        chosen["method"] = Knob("method", "full", model.path, model.line)
    trainer = _HF_TRAINER.search(said)
    if "workers" not in chosen and "workers" not in unset and trainer is not None:
        anchor = next((k for k in knobs if k.path == draft.path), None)
        chosen["workers"] = Knob(
            "workers",
            0,
            draft.path,
            anchor.line if anchor else None,
            "HF Trainer's default `dataloader_num_workers` 0",
        )
    located: dict[str, str] = {}
    for name, knob in chosen.items():
        line = knob.line if knob.path == draft.path else via.get(knob.path, knob.line)
        draft.set(f"training.{name}", knob.value, line)
        where = f"{knob.path}:{knob.line}" if knob.line is not None else knob.path
        located[name] = f"{where} (default)" if knob.note else where
    for name, knob in unset.items():
        if name not in chosen:
            draft.mark(
                f"training.{name}", knob.line if knob.path == draft.path else via.get(knob.path)
            )
            draft.add_note(f"{name} not evaluated: {knob.note}")
            if name == KNOB:  # set at run time: the lost work is unknown, not a restart
                draft.templated.add(f"training.{name}")
    trained = chosen.get("model")
    if trained is not None:
        size = model_size(str(trained.value))
        line = draft.lines.get("training.model")
        if size is not None:
            draft.set("training.params_b", size.params_b, line)
        draft.mark("training.fits", line)  # a smaller shape's finding points at the model
    if located:
        draft.set("training.located", located)
    for note in dict.fromkeys(notes):
        draft.add_note(note)
