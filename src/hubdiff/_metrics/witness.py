"""A second witness at run time: transformers' own model class, built from the config on torch's meta
device, counted beside hubdiff's figures.

hubdiff's config-only figures rest on its own model of each architecture, which the sweep
(``scripts/sweep.py``) proves against transformers' classes for every model_type they ship. Where
torch and transformers are importable (hubdiff never installs torch), ``--witness`` also builds the
model itself and says whether the two counts agree, component by component, through hubdiff's own
classifier. The meta device holds shapes only, so even a 671B model costs no weight memory; the build
runs in a child process, killed after a time bound, offline, and never with ``trust_remote_code``
(a model_type transformers does not ship has no witness).

The child is this file run on its own (``python witness.py``), reading the config as JSON on stdin
and writing the tensors (name, shape) as JSON on stdout; it imports nothing of hubdiff.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Any

WITNESS_SECONDS = 120.0  # the child's time bound; the largest corpus models take under 10 s
WITNESS_MEMORY = 8 << 30  # the child's address space at most, in bytes (torch itself needs ~1 GiB)
_OUTPUT_LIMIT = 64 << 20  # bytes of the child's answer read at most
# Keys that configure loading, not the architecture: a quantizer cannot run on the meta device, and
# auto_map only points at remote code, which is never run.
_DROP_KEYS = ("quantization_config", "auto_map", "transformers_version", "_name_or_path")


@dataclass(frozen=True)
class Witness:
    """What transformers' class says of a config: its tensors, or why there is no witness."""

    model_class: str | None
    version: str | None  # "transformers 5.24.0"
    tensors: tuple[tuple[str, tuple[int, ...]], ...] | None
    reason: str  # why tensors is None; empty when it is not
    seconds: float  # in all, the child's start and imports included
    build_seconds: float = 0.0  # building the model on the meta device and listing its tensors


# torch is not a dependency of hubdiff (it reads headers, never weights): the witness's extra installs it
NO_TORCH = "torch is not installed: pip install 'hubdiff[witness]' adds it"


def available() -> bool:
    """torch and transformers are importable (looked up, not imported: that is the child's work)."""
    return find_spec("torch") is not None and find_spec("transformers") is not None


def witness(config: dict[str, Any], timeout: float = WITNESS_SECONDS) -> Witness:
    """Build ``config``'s model in a child process and list its tensors, within ``timeout`` seconds."""
    start = time.perf_counter()

    def failed(reason: str) -> Witness:
        return Witness(None, None, None, reason, time.perf_counter() - start)

    if not available():
        return failed(NO_TORCH if find_spec("torch") is None else "transformers is not importable")
    from .config import _transformers

    transformers = _transformers()  # imported already to read the config: no child for remote code
    model_type = config.get("model_type")
    if transformers is not None and model_type not in transformers.CONFIG_MAPPING:
        version = f"transformers {transformers.__version__}"
        return failed(f"{version} has no class for this model_type (remote code is never run)")
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TRANSFORMERS_VERBOSITY": "error",
        "PYTHONSAFEPATH": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    # the child must not import modules from the working directory or this package's folder
    code = (
        "import sys, runpy; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
        f"runpy.run_path({__file__!r}, run_name='__main__')"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            input=json.dumps(config),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return failed(f"transformers' class was not built within {timeout:g} s")
    except OSError as exc:
        return failed(f"the witness could not start: {exc}")
    try:
        answer = json.loads(done.stdout[:_OUTPUT_LIMIT])
    except ValueError:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return failed(f"the witness failed: {last[:160]}")
    if not isinstance(answer, dict):
        return failed("the witness answered nothing usable")
    seconds = time.perf_counter() - start
    if answer.get("error"):
        return Witness(answer.get("class"), answer.get("version"), None, str(answer["error"])[:200], seconds)
    tensors = tuple((str(n), tuple(int(d) for d in s)) for n, s in answer.get("tensors") or [])
    build = answer.get("build_seconds")
    build = float(build) if isinstance(build, (int, float)) else 0.0
    return Witness(answer.get("class"), answer.get("version"), tensors, "", seconds, build)


@dataclass(frozen=True)
class Verdict:
    """The witness beside hubdiff's count: ``agrees`` None when there was no witness."""

    agrees: bool | None
    line: str
    theirs: int = 0  # parameters of transformers' class (MTP layers aside)
    ours: int = 0


def compare(found: Witness, cfg: Any, layers: list[Any], counted: Any) -> Verdict:
    """The witness against hubdiff's count (``counted``, a ParamReport: the estimate, or the headers'
    count), every component through hubdiff's classifier; MTP layers aside, which the classes lack."""
    from .components import count_parameters

    if found.tensors is None:
        return Verdict(None, f"witness: none ({found.reason}); the figures rest on hubdiff's own model")
    theirs = count_parameters(((n, "BF16", s) for n, s in found.tensors), cfg, layers)
    mine = {c: n for c, n in counted.by_component.items() if c != "mtp"}
    total = counted.total - counted.by_component.get("mtp", 0)
    differ = sorted(
        c for c in set(mine) | set(theirs.by_component) if mine.get(c, 0) != theirs.by_component.get(c, 0)
    )
    what = f"witness: {found.version}'s {found.model_class} built from the config on the meta device"
    if theirs.total == total and not differ:
        line = f"{what} holds {theirs.total:,} parameters: agrees in every component"
        return Verdict(True, line, theirs.total, total)
    parts = ", ".join(f"{c} {theirs.by_component.get(c, 0):,} vs {mine.get(c, 0):,}" for c in differ[:4])
    line = f"{what} holds {theirs.total:,} parameters, hubdiff counts {total:,}: disagrees ({parts})"
    return Verdict(False, line, theirs.total, total)


# -- the child: everything below runs in the child process only ---------------------------------------
def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if k not in _DROP_KEYS}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _model_class(transformers: Any, config: Any, architectures: list[Any]) -> type | None:
    """The class the config names, else the first auto mapping that maps its config type: a causal
    language model, an image-text model, a sequence-to-sequence one, the bare model."""
    from transformers.models.auto import modeling_auto as auto

    for name in architectures:
        cls = None
        if isinstance(name, str) and name.isidentifier():
            try:
                cls = getattr(transformers, name, None)
            except Exception:  # a lazy attribute whose module fails to import
                cls = None
        if isinstance(cls, type):
            return cls
    order = [
        "MODEL_FOR_CAUSAL_LM_MAPPING",
        "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING",
        "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING",
        "MODEL_MAPPING",
    ]
    if getattr(config, "sub_configs", None):  # a vision tower: the image-text class holds it
        order.insert(0, order.pop(1))
    for mapping in order:
        try:
            cls = getattr(auto, mapping)[type(config)]
        except Exception:
            continue
        return cls[0] if isinstance(cls, (tuple, list)) else cls
    return None


def _renaming(model: Any) -> Any:
    """transformers' load-time renamings reverted, so the names are the checkpoint's (hubdiff's
    classifier reads checkpoint names); layout converters (fused experts) are kept."""
    try:
        from transformers.conversion_mapping import get_model_conversion_mapping
        from transformers.core_model_loading import PrefixChange, WeightRenaming, apply_renamings

        conversions = get_model_conversion_mapping(model, add_legacy=False)
        reverse = [c.reverse_transform() for c in reversed(conversions) if not isinstance(c, PrefixChange)]
        renamings = [r for r in reverse if isinstance(r, WeightRenaming) and not isinstance(r, PrefixChange)]
    except Exception:  # no mapping machinery for this model: its names are the checkpoint's
        return lambda name: name
    return lambda name: apply_renamings(name, renamings) if renamings else name


def _child() -> dict[str, Any]:
    import warnings

    try:  # a hostile config must not take the machine's memory (meta tensors take none)
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (WITNESS_MEMORY, WITNESS_MEMORY))
    except (ImportError, ValueError, OSError):  # not POSIX, or a lower limit already set
        pass
    warnings.simplefilter("ignore")
    try:
        import torch
        import torch.nn.init as init
    except Exception as exc:
        missing = isinstance(exc, ModuleNotFoundError) and exc.name == "torch"
        return {"error": NO_TORCH if missing else f"torch does not import: {type(exc).__name__}"}
    try:
        import transformers
        from transformers import AutoConfig
        from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES
    except Exception as exc:
        return {"error": f"transformers does not import: {type(exc).__name__}"}
    version = f"transformers {transformers.__version__}"
    raw = _clean(json.loads(sys.stdin.read()))
    model_type = raw.pop("model_type", None) if isinstance(raw, dict) else None
    if not isinstance(model_type, str) or model_type not in CONFIG_MAPPING_NAMES:
        return {
            "version": version,
            "error": f"{version} has no class for this model_type (remote code is never run)",
        }
    try:
        config = AutoConfig.for_model(model_type, **raw)
    except Exception as exc:
        return {"version": version, "error": f"{version} rejects the config: {type(exc).__name__}"}
    architectures = raw.get("architectures")
    cls = _model_class(transformers, config, architectures if isinstance(architectures, list) else [])
    if cls is None:
        return {"version": version, "error": f"{version} maps no model class to this config"}
    # random init of meta tensors computes nothing but costs half the build time: no-ops meanwhile
    # (transformers' no_init_weights would also skip tying a head to its embedding)
    start = time.perf_counter()
    names = [n for n in dir(init) if n.endswith("_") and not n.startswith("_")]
    originals = {n: getattr(init, n) for n in names}
    try:
        for n in names:
            setattr(init, n, lambda tensor, *args, **kwargs: tensor)
        with torch.device("meta"):
            model = cls(config)
    except Exception as exc:
        return {
            "class": cls.__name__,
            "version": version,
            "error": f"{cls.__name__} fails: {type(exc).__name__}",
        }
    finally:
        for n, function in originals.items():
            setattr(init, n, function)
    rename = _renaming(model)
    seen: set[int] = set()
    tensors = []
    # parameters and persistent buffers (what a checkpoint stores); a tied head and embedding once
    for name, tensor in model.state_dict(keep_vars=True).items():
        if id(tensor) not in seen:
            seen.add(id(tensor))
            tensors.append([rename(name), [int(d) for d in tensor.shape]])
    seconds = time.perf_counter() - start
    return {"class": cls.__name__, "version": version, "tensors": tensors, "build_seconds": seconds}


if __name__ == "__main__":
    try:
        answer = _child()
    except Exception as exc:  # whatever the class does on this config: reported, never a traceback
        answer = {"error": f"the witness failed: {type(exc).__name__}"}
    sys.stdout.write(json.dumps(answer))
