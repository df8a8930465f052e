"""A job's workload from what its file runs: one table of patterns, the evidence kept in the note.

Parsers hand over what the job runs (run scripts, container commands and args, images,
entrypoints), each with where it came from, and what their format's kind says (a SkyServe
`service:`, a dstack `type: service`, a KServe InferenceService, a SageMaker training job).
`classify` reads the table below in order; the first pattern that matches names the workload, and
the finding's note names the evidence (workload inference: a vLLM server, `vllm serve` in `run`).

Precedence: a format kind that is a service or a dev environment wins (the platform decides what
runs); then the run commands (a PyTorchJob that runs `all_reduce_perf` is a benchmark); then a
training kind (a SageMaker training job); then a dev box (a task that only starts an IDE, or has no
run command where the run command is all that runs). Without evidence the workload stays
`unknown`, and rules scoped on a workload are not evaluated: nothing is guessed as training.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gpu_audit.core.frozen import record
from gpu_audit.core.lazyre import lazy
from gpu_audit.core.resource import Workload
from gpu_audit.jobs.checkpoints import read_checkpoints
from gpu_audit.jobs.interface import JobDraft
from gpu_audit.jobs.models import read_served_model

_I = Workload.INFERENCE
_B = Workload.BATCH_INFERENCE
_T = Workload.TRAINING
_M = Workload.BENCHMARK

# (workload, what the evidence is called, pattern, needles) in order: the first match names the
# workload. Benchmarks first (they launch with the training launchers); then a training script by
# name (an RL run starts a vLLM server for its rollouts); then servers (a served model may be
# "fine-tuned"); then training by its tools' words, batch inference, and last the generic
# distributed launchers. The needles are words every match holds (lower-case): a text without any
# is passed over without compiling the pattern (`core/lazyre.py`; a test holds them to it).
_TABLE: tuple[tuple[Workload, str, str, tuple[str, ...]], ...] = (
    (
        _M,
        "NCCL tests",
        r"\b(?:all_reduce|all_gather|alltoall|reduce_scatter|sendrecv|broadcast"
        r"|reduce|gather|scatter|hypercube)_perf\b|nccl[-_]tests",
        ("_perf", "nccl"),
    ),
    (
        _M,
        "a benchmark",
        r"\bvllm\s+bench\b|benchmark[\w-]*\.(?:py|sh)\b|\bbench_\w+\.py\b"
        r"|\bgpu[-_]burn\b|\bmlperf\b|\bnvbandwidth\b|\bdcgmi\s+diag\b|\bib_write_bw\b"
        r"|\bsglang\.bench_\w+|--benchmark\b",
        ("bench", "burn", "mlperf", "nvbandwidth", "dcgmi", "ib_write_bw"),
    ),
    # the evaluation stage of a pipeline: `--do_eval` with no `--do_train` in the same command
    (_B, "an evaluation run", r"(?s)\A(?!.*--do_train\b).*?(--do_eval)\b", ("do_eval",)),
    (
        _T,
        "a training script",
        r"[\w./-]*train[\w-]*\.(?:py|sh)\b|--do_train\b"
        r"|--num_train_epochs\b|\bllamafactory-cli\s+train\b|\baxolotl(?:\.cli)?\.?\s*train\b"
        r"|\btune\s+run\b|\btrl\s+(?:sft|dpo|grpo|kto|ppo|reward)\b|\bfairseq-train\b"
        r"|\bverl\.trainer\b|\bmain_ppo\b|\./train\w*"
        r"|--mode[= ]train\b|\btrain_steps\b|\btrainer\.(?:max_)?epochs\b|\btrainer\.task\b"
        r"|\b[\w.]+\.trainer\b|\b\w+_train\.\w+",
        ("train", "tune", "trl", "ppo"),
    ),
    (
        _I,
        "a vLLM server",
        r"\bvllm\s+serve\b|vllm\.entrypoints\.(?:openai\.)?api_server"
        r"|vllm/vllm-openai",
        ("vllm",),
    ),
    (
        _I,
        "a TGI server",
        r"\btext-generation-launcher\b|text-generation-inference",
        ("text-generation",),
    ),
    (_I, "a Triton server", r"\btritonserver\b|trtllm-serve", ("triton", "trtllm")),
    (_I, "an SGLang server", r"\bsglang\.launch_server\b|lmsysorg/sglang", ("sglang",)),
    (_I, "an Ollama server", r"\bollama\s+serve\b|\bollama/ollama\b", ("ollama",)),
    (
        _I,
        "a Ray Serve application",
        r"\bserve\s+(?:run|deploy|start)\b|\bserve_config"
        r"|\brayllm\b|\bray[-_]llm\b|\baviary\b",
        ("serve", "rayllm", "ray-llm", "ray_llm", "aviary"),
    ),
    (
        _I,
        "a model server",
        r"\btorchserve\b|\blmdeploy\s+serve\b|\bllama-server\b"
        r"|\bmlc_llm\s+serve\b|\btext-embeddings-router\b|\bkserve\b|\bbentoml\s+serve\b",
        ("serve", "text-embeddings-router"),
    ),
    # an evaluation harness, before the training tools: it names the (pretrained, fine-tuned)
    # model it evaluates (`lm_eval --model_args pretrained=org/llama-finetuned`)
    (_B, "an evaluation harness", r"\blm[-_]eval\b|\blighteval\b", ("eval",)),
    (
        _T,
        "a training tool",
        r"\bfine[-_]?tun\w*|\bpretrain(?!ed)\w*|\baxolotl\b|\bnanotron\b"
        r"|\bmegatron\b|\bmaxtext\b|\bt5x\b|\blevanter\b|\btorchtitan\b|\bopen_clip\b"
        r"|\b(?:sft|dpo|grpo|ppo|rlhf|lora)[\w-]*\.(?:py|sh|ya?ml)\b",
        (
            "tun",
            "pretrain",
            "axolotl",
            "nanotron",
            "megatron",
            "maxtext",
            "t5x",
            "levanter",
            "torchtitan",
            "open_clip",
            "sft",
            "dpo",
            "grpo",
            "ppo",
            "rlhf",
            "lora",
        ),
    ),
    (
        _B,
        "batch inference",
        r"whisper\w*|\btranscri\w+|alphafold\w*|colabfold\w*"
        r"|\besmfold\b|\bembed\w*\.py\b|\b(?:generate|compute|extract)[-_]"
        r"(?:embeddings?|vectors|features)\b|\bbatch[-_]?infer\w*|\boffline[-_]infer\w*"
        r"|[\w-]*(?:predict|infer|generat|eval|score)\w*\.py\b",
        (
            "whisper",
            "transcri",
            "fold",
            "embed",
            "vectors",
            "features",
            "infer",
            "predict",
            "generat",
            "eval",
            "score",
        ),
    ),
    (
        _T,
        "a distributed launcher",
        r"\btorchrun\b|torch\.distributed\.(?:launch|run)\b"
        r"|\baccelerate\s+launch\b|\bdeepspeed\b|\bhorovodrun\b|\bcomposer\b",
        ("torchrun", "torch.distributed", "accelerate", "deepspeed", "horovodrun", "composer"),
    ),
)
_PATTERNS = tuple(
    (workload, label, lazy(source, re.IGNORECASE, needs=needles))
    for workload, label, source, needles in _TABLE
)

# A dev box: every command sets up or starts an IDE, a notebook or an idle shell to attach to.
_IDE = lazy(
    r"\b(?:jupyter(?:-lab|-notebook)?\s+(?:lab|notebook|server)|jupyter-lab|jupyter-notebook"
    r"|code-server|openvscode-server|code\s+tunnel|marimo\s+edit|rstudio-server"
    r"|sleep\s+(?:infinity|inf)|tail\s+-f\s+/dev/null)\b"
)
_SPLIT = lazy(r"\n|&&|\|\||;")
_SETUP = lazy(
    r"^(?:cd|source|\.|export|echo|conda\s+(?:activate|install|create)|pip3?\s+install|uv\s+pip"
    r"|uv\s+sync|apt(?:-get)?|sudo|mkdir|set|git\s+clone|nvidia-smi|wget|curl|ls|cat|chmod"
    r"|ray\s+start|python3?\s+-m\s+pip\s+install)\b"
)


@record
class Ran:
    """Something the job runs: its text, where in the file it is (`run`, `command`, `image`)."""

    text: str
    where: str
    line: int | None = None


@record
class Kind:
    """What the format's kind says: `Kind(INFERENCE, "a SkyServe service", line)`."""

    workload: Workload
    evidence: str
    line: int | None = None


# Keys whose values say what a job runs, in every format: container commands, args and images,
# entrypoints, scripts (`sagemaker_program` is the SageMaker framework containers' entry script).
RUN_KEYS = frozenset(
    {
        "command",
        "commands",
        "args",
        "arguments",
        "image",
        "imageUri",
        "image_uri",
        "pythonModule",
        "python_module",
        "TrainingImage",
        "ContainerEntrypoint",
        "ContainerArguments",
        "entrypoint",
        "entry_point",
        "entryPoint",
        "sagemaker_program",
        "script",
        "run",
    }
)


def runs_in(node: object, budget: int = 2000) -> list[Ran]:
    """Every value under a `RUN_KEYS` key in this mapping and below, with its key and line."""
    found: list[Ran] = []
    stack: list[object] = [node]
    while stack and budget > 0:
        budget -= 1
        current = stack.pop()
        if isinstance(current, dict):
            for key, value in current.items():
                if key in RUN_KEYS and isinstance(value, str | list):
                    line_of = getattr(current, "line_of", None)
                    line = line_of(key) if line_of is not None else None
                    found.append(Ran(_text(value), f"`{key}`", line))
                elif isinstance(value, dict | list):
                    stack.append(value)
        elif isinstance(current, list):
            stack.extend(reversed(current))
    return found


def _text(value: object) -> str:
    if isinstance(value, list):
        return " ".join(str(item) for item in value if isinstance(item, str | int | float))
    return str(value)


def dev_only(script: str) -> str | None:
    """The IDE command if the script only sets up and starts an IDE, a notebook or an idle shell."""
    parts = [part.strip() for part in _SPLIT.split(script)]
    parts = [part for part in parts if part and not part.startswith("#")]
    found = next((m.group(0) for part in parts if (m := _IDE.search(part))), None)
    if found is None or not all(_IDE.search(part) or _SETUP.match(part) for part in parts):
        return None
    return found


def classify(ran: Iterable[Ran]) -> tuple[Workload, str, int | None] | None:
    """The workload the first matching pattern names, the evidence in words, and its line."""
    items = [r for r in ran if r.text.strip()]
    for workload, label, pattern in _PATTERNS if items else ():
        # Compiled when first reached with a needle in the text: the search stops at the first
        # match, and a hook run with one job need not compile the 14 patterns (~2 ms).
        for item in items:
            match = pattern.search(item.text)
            if match:  # a pattern with a group names its evidence by it (`--do_eval`)
                said = match.group(1) if match.re.groups else match.group(0)
                return workload, f"{label} (`{_short(said)}` in {item.where})", item.line
    for item in items:
        ide = dev_only(item.text)
        if ide is not None:
            return (
                Workload.NOTEBOOK,
                f"a dev box (`{_short(ide)}` only, in {item.where})",
                item.line,
            )
    return None


def infer(
    draft: JobDraft,
    ran: Iterable[Ran],
    kind: Kind | None = None,
    no_command: str | None = None,
) -> None:
    """Set the draft's workload from the evidence and note it; leave it unknown without any.
    What the job runs also says where its checkpoints go (jobs/checkpoints.py).

    `no_command`: the format's words for "this job states no run command" when that makes it a
    dev box (a SkyPilot task without `run` is an interactive cluster).
    """
    ran = [r for r in ran if r.text.strip()]
    read_checkpoints(draft, [(r.text, r.line) for r in ran])
    chosen: tuple[Workload, str, int | None] | None = None
    if kind is not None and kind.workload in (Workload.INFERENCE, Workload.NOTEBOOK):
        chosen = (kind.workload, kind.evidence, kind.line)
    chosen = chosen or classify(ran)
    if chosen is None and kind is not None and kind.workload is not Workload.UNKNOWN:
        chosen = (kind.workload, kind.evidence, kind.line)
    if chosen is None and not ran and no_command is not None:
        chosen = (Workload.NOTEBOOK, f"a dev box ({no_command})", None)
    if chosen is None:
        draft.set("workload", Workload.UNKNOWN)
        draft.add_note("workload unknown: nothing the file runs says training or serving")
        return
    workload, evidence, line = chosen
    draft.set("workload", workload, line)
    draft.add_note(f"workload {workload.value}: {evidence}")
    if workload is Workload.INFERENCE:  # what it serves decides whether a smaller GPU would do
        read_served_model(draft, [(r.text, r.line) for r in ran])
    if workload is Workload.TRAINING:  # the knobs that decide how much of its GPUs it uses
        # keeps jobs.knobs.read off check's start-up
        from gpu_audit.jobs.knobs.read import read_knobs

        read_knobs(draft, [(r.text, r.line) for r in ran])


def _short(text: str, limit: int = 48) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
