"""A normalised view of a model config: one place that knows every spelling of a field.

Configs nest the language model under ``text_config`` (multimodal releases), spell the same field
several ways (``n_routed_experts``, ``num_experts``, ``num_local_experts``...) and often leave out
what the architecture's defaults fill in (Gemma 3 ships no ``vocab_size`` and no layer pattern).
transformers' configuration classes hold those defaults and compute each architecture's per-layer
pattern, so a config whose ``model_type`` they know is read through them first; hubdiff's own readers
(the key spellings below) take over where they do not (remote code, a newer release, a config their
validation rejects). Either way the reading says which path was taken, and every key read is
recorded, so that a key nobody read can be reported instead of silently ignored.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import json
import os
import re
import sys
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

if __package__:
    from .._source import config_keys as _keys
else:  # run by its path as the config child (no package imported): the key names' file, by its path
    import importlib.util

    _keys_spec = importlib.util.spec_from_file_location(
        "hubdiff_config_keys", os.path.join(os.path.dirname(__file__), os.pardir, "_source", "config_keys.py")
    )
    assert _keys_spec is not None and _keys_spec.loader is not None
    _keys = importlib.util.module_from_spec(_keys_spec)
    _keys_spec.loader.exec_module(_keys)

EXPERT_KEYS, EXPERTS_PER_TOKEN_KEYS, LAYER_KEYS = (
    _keys.EXPERT_KEYS,
    _keys.EXPERTS_PER_TOKEN_KEYS,
    _keys.LAYER_KEYS,
)
MAX_DIM, MAX_LAYERS, MTP_LAYER_KEYS = _keys.MAX_DIM, _keys.MAX_LAYERS, _keys.MTP_LAYER_KEYS
MULTIPLIER_KEY, SHARED_EXPERT_KEYS, SIZE_KEY = _keys.MULTIPLIER_KEY, _keys.SHARED_EXPERT_KEYS, _keys.SIZE_KEY
TEXT_CONFIG_KEYS, VISION_CONFIG_KEYS = _keys.TEXT_CONFIG_KEYS, _keys.VISION_CONFIG_KEYS
DECODER_TEXT_TYPES = _keys.DECODER_TEXT_TYPES


def _num(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value if -MAX_DIM <= value <= MAX_DIM else None
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_DIM:
        return int(value)
    return None


# The sizes of a vision tower that its readers take as a list; every other is taken as one number
VISION_LIST_SIZES = frozenset({"merge_kernel_size"})


def _one_number_sizes(tower: dict[str, Any]) -> dict[str, Any]:
    """The tower without sizes given as lists (``patch_size: [16, 16]``), which its readers would
    multiply as one number: a list times a size is that list repeated (``[1] * 16384**2`` is 2 GB)."""
    if not any(type(v) is list for v in tower.values()):
        return tower
    return {
        k: v
        for k, v in tower.items()
        if type(v) is not list
        or k in VISION_LIST_SIZES
        or not (SIZE_KEY.search(k) or MULTIPLIER_KEY.search(k))
    }


# Sub-configs that describe parts of every block rather than another model (DBRX)
BLOCK_PARTS = ("attn_config", "ffn_config")

_TRANSFORMERS: Any = False  # not tried yet; None when it cannot be imported
# transformers is imported, and its configuration classes used, by one thread at a time: its lazy
# modules are not safe to import from two threads at once, and hiding torch and silencing warnings
# change process-wide state (repos checked side by side read their configs at the same time). It is
# the lock of every hidden import (``hidden``): the config diff imports deepdiff without numpy.
_TRANSFORMERS_LOCK = threading.RLock()


@contextlib.contextmanager
def hidden(*names: str) -> Iterator[None]:
    """``names`` reported absent while what runs inside imports (``sys.modules[name] = None``: "not
    installed"), in a process hubdiff owns (``owns_process``) and unless it has imported them already;
    restored after. Only there: a package imported meanwhile keeps what it saw for the process's life
    (transformers' ``is_torch_available``, deepdiff's numpy), which code beside hubdiff would inherit. The entry is process-wide, so a thread importing
    ``name`` meanwhile would fail too: every hidden import, and every import of transformers (which uses
    numpy and would load torch), holds ``_TRANSFORMERS_LOCK``. Here, not in a module of its own: this
    file is also run by path, alone, in the config child (``config_child``)."""
    with _TRANSFORMERS_LOCK:
        hide = [name for name in names if name not in sys.modules] if owns_process() else []
        for name in hide:
            sys.modules[name] = None  # type: ignore[assignment]  # import machinery: "not installed"
        try:
            yield
        finally:
            for name in hide:
                if sys.modules.get(name, 0) is None:
                    del sys.modules[name]


_CHILD = False  # this module runs as the config child (``_child_main``)


def owns_process() -> bool:
    """Whether nothing but hubdiff runs in this process: its command line (``_entry.run``) or the config
    child. Only there may transformers stand as its configuration classes alone over a bare package, and
    torch be hidden while they import: both stay for the process's life, and a host's own code (the
    pytest plugin's session, a library user, the suite) would find ``from transformers import
    AutoConfig`` failing and torch reported absent. Elsewhere transformers is imported whole."""
    entry = sys.modules.get("hubdiff._entry")
    return _CHILD or bool(getattr(entry, "OWNS_PROCESS", False))


def _transformers() -> Any:
    """transformers, imported on first use with its logging quiet (it warns about the missing torch).

    Only its configuration classes are used, and those need no torch; but where torch is installed,
    importing transformers imports it too (2-4 s more). So unless the process has already imported
    either, torch is hidden while transformers is imported: ``find_spec`` then reports it absent.
    """
    global _TRANSFORMERS
    with _TRANSFORMERS_LOCK:
        if _TRANSFORMERS is False:
            _import_transformers()
    return _TRANSFORMERS


_LIGHT = False  # _TRANSFORMERS is the configuration classes alone (_import_config_classes)


def _import_transformers(whole: bool = False) -> None:
    """The configuration classes alone first (a third of the whole import's time, which every cold
    command pays), unless transformers is imported already or ``whole`` is asked for: the read falls
    back to the whole import for a config they refuse (``_with_transformers``)."""
    global _TRANSFORMERS
    # read by transformers once, at import; set and left (never unset while other threads may read the
    # environment: a concurrent os.environ copy would see the key vanish)
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    if not whole and "transformers" not in sys.modules and owns_process():
        _import_config_classes()
        if _TRANSFORMERS not in (False, None):
            return
    hide_torch = "torch" not in sys.modules and "transformers" not in sys.modules and owns_process()
    if hide_torch:
        sys.modules["torch"] = None  # type: ignore[assignment]  # import machinery: "not installed"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import transformers
            from transformers import CONFIG_MAPPING  # noqa: F401  (the lazy mapping itself)

        _TRANSFORMERS = transformers
    except MemoryError:
        raise
    except Exception:  # not installed, or broken: hubdiff's own readers take over
        _TRANSFORMERS = None
    finally:
        if hide_torch and sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]


def _plain(value: Any) -> Any:
    """JSON-like values only: what a config object exposes beyond that is of no use here."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return None


def _export(config: Any) -> dict[str, Any]:
    """A config object as a dict: its fields with defaults filled, and its derived properties
    (``layers_block_type``, ``layer_types``, ``num_hidden_layers``... which some classes compute)."""
    out: dict[str, Any]
    nested = set(getattr(config, "sub_configs", None) or ())
    try:
        whole = config.to_dict()
    except MemoryError:
        raise
    except Exception:  # a class whose to_dict fails on this input: its properties still serve
        whole = {}
    out = {k: v for k, v in whole.items() if k not in nested}
    for key in BLOCK_PARTS:  # DBRX keeps attention and FFN sizes in sub-configs of the text model
        if isinstance(whole.get(key), dict):
            for k, v in whole[key].items():
                out.setdefault(k, v)
    for name in dir(type(config)):
        if name.startswith("_") or not isinstance(getattr(type(config), name, None), property):
            continue
        try:
            value = getattr(config, name)
        except MemoryError:
            raise
        except Exception:
            continue
        if isinstance(value, (int, str, list)) and not isinstance(value, bool):
            out.setdefault(name, _plain(value))
    for alias, canonical in (getattr(config, "attribute_map", None) or {}).items():
        if canonical in out and alias not in out:
            out[alias] = out[canonical]
    return out


LAYER_COUNT_KEYS = LAYER_KEYS + MTP_LAYER_KEYS


def absurd_layer_count(raw: dict[str, Any]) -> str | None:
    nested = [v for k, v in raw.items() if k.endswith("_config") and isinstance(v, dict)]
    for source in (raw, *nested):
        for key in LAYER_COUNT_KEYS:
            value = source.get(key)
            if (
                isinstance(value, (int, float))
                and not isinstance(value, bool)
                and not 0 <= value <= MAX_LAYERS
            ):
                return f"{key} {value:g} is outside 0 to {MAX_LAYERS:,}"
    return None


def wants_transformers(raw: dict[str, Any]) -> bool:
    """Whether ``ArchConfig.read`` would import transformers for ``raw``: a model_type to look up, and
    layer counts its classes may be given. Lets a caller start the ~1.4 s import early only when it
    will be used (a config without model_type never needs it)."""
    model_type = raw.get("model_type")
    return isinstance(model_type, str) and bool(model_type) and absurd_layer_count(raw) is None


# Answers of transformers' classes read elsewhere (``config_child``: a child process started when the
# Hub sent the config), by ``config_key``: each a call that waits for the answer, None when there is none
PREREAD: dict[str, Any] = {}
CHILD_FORMAT = 1  # of a child's answer: {"format", "answer"}


def config_key(raw: dict[str, Any]) -> str | None:
    """The config as a key: an answer read elsewhere is for exactly this config (keys in order)."""
    try:
        text = json.dumps(raw, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        return None
    return hashlib.sha256(text.encode()).hexdigest()


def tagged(value: Any) -> Any:
    """``value`` as JSON that reads back exactly: each container a list tagged with its type (tuples,
    int keys such as ``id2label``'s stay what they were); TypeError for anything but plain values."""
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if kind in (list, tuple):
        return [kind.__name__, *map(tagged, value)]
    if kind is dict:
        return ["dict", *(tagged(item) for pair in value.items() for item in pair)]
    raise TypeError(f"{kind.__name__} is not a plain value")


def untagged(data: Any) -> Any:
    """The inverse of ``tagged``; ValueError or TypeError for what ``tagged`` never writes."""
    kind = type(data)
    if data is None or kind in (bool, int, float, str):
        return data
    if kind is list and data:
        tag, items = data[0], [untagged(item) for item in data[1:]]
        if tag == "list":
            return items
        if tag == "tuple":
            return tuple(items)
        if tag == "dict" and len(items) % 2 == 0:
            return dict(zip(items[::2], items[1::2]))  # an unhashable key: TypeError
    raise ValueError("not a tagged value")


def _preread(raw: dict[str, Any]) -> Any:
    """The answer read elsewhere for ``raw``, or None (none was started, or it gave no answer)."""
    if not PREREAD:
        return None
    key = config_key(raw)
    wait = PREREAD.get(key) if key is not None else None
    return wait() if wait is not None else None


@contextlib.contextmanager
def _torch_hidden() -> Iterator[None]:
    """torch reported absent while transformers' modules import (they would import it: 2-4 s, and no
    configuration class needs it), unless this process has imported it already."""
    with hidden("torch"):
        yield


def _with_transformers(raw: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None, str] | str:
    """(text config, vision config, reader) through transformers, or why it could not be used.

    Read with the configuration classes alone when that is what is imported; a config they refuse, or
    a class they cannot import, is read again after the whole import, so that only transformers' own
    refusal is ever an answer (tests/test_config_child.py: every model_type reads the same either way)."""
    with _TRANSFORMERS_LOCK:
        try:
            with _torch_hidden():
                answer = _read_with_transformers(raw)
        except MemoryError:
            raise
        except Exception:
            if not _LIGHT:
                raise
            answer = None
        if _LIGHT and (answer is None or (isinstance(answer, str) and " rejected the config " in answer)):
            _forget_transformers()
            _import_transformers(whole=True)
            answer = _read_with_transformers(raw)
        return answer  # type: ignore[return-value]


def _read_with_transformers(raw: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None, str] | str:
    model_type = raw.get("model_type")
    if not isinstance(model_type, str) or not model_type:  # no class to look up: not worth the import
        return "no model_type: read from config keys"
    answer = _preread(raw)
    if answer is not None:
        return answer  # type: ignore[no-any-return]  # checked by config_child.parse_answer
    transformers = _transformers()
    if transformers is None:
        return "transformers not installed: read from config keys"
    version = f"transformers {transformers.__version__}"
    with _TRANSFORMERS_LOCK:
        mapping = transformers.CONFIG_MAPPING
        if model_type not in mapping:
            return f"model_type {model_type} unknown to {version}: read from config keys"
        cls = mapping[model_type]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # a copy all the way down: the class writes into the objects it is given (its rope
                # standardization adds rope_theta and rope_type to rope_scaling), and ``raw`` is the
                # snapshot's config, which is cached and recorded as the Hub sent it
                config = cls.from_dict(copy.deepcopy({k: v for k, v in raw.items() if k != "auto_map"}))
                text = config.get_text_config(decoder=True if model_type in DECODER_TEXT_TYPES else None)
                vision = getattr(config, "vision_config", None)
                if text is config:
                    text, vision = _nested_model_parts(config, text, vision)
        except MemoryError:  # never a fallback to the raw keys: exit 3, the one line of an unexpected error
            raise
        except Exception as exc:  # hostile or newer-than-installed input: the class's validation said no
            reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
            return f"{cls.__name__} of {version} rejected the config ({reason}): read from config keys"
        text_dict = _export(text)
        vision_dict = _export(vision) if vision is not None and not isinstance(vision, dict) else None
    return text_dict, vision_dict, f"config read with {version} {type(text).__name__}"


def _nested_model_parts(config: Any, text: Any, vision: Any) -> tuple[Any, Any]:
    """The language model and tower of a vision-language model nested in a config with no text part of
    its own (``NESTED_MODEL_KEYS``), or the parts as found."""
    for key in _keys.NESTED_MODEL_KEYS:
        part = getattr(config, key, None)
        if part is None or isinstance(part, dict) or getattr(part, "vision_config", None) is None:
            continue
        with contextlib.suppress(ValueError):  # several text configs: none chosen
            inner = part.get_text_config()
            if inner is not part:
                return inner, part.vision_config
    return text, vision


@dataclass(frozen=True)
class ArchConfig:
    raw: dict[str, Any]
    resolved_text: dict[str, Any] | None = None  # from transformers, defaults and patterns filled in
    resolved_vision: dict[str, Any] | None = None
    reader: str = "read from config keys"
    read_keys: set[str] = field(default_factory=set, compare=False, repr=False)

    def __post_init__(self) -> None:
        # what each lookup found: counting a 200,000-tensor repo asks the same few keys a million times.
        # Not a field (the cache stores fields, dataclasses.replace copies them); the config dicts are
        # not changed after reading
        object.__setattr__(self, "_found", {})

    @classmethod
    def read(cls, raw: dict[str, Any], *, use_transformers: bool = True) -> ArchConfig:
        if not use_transformers:
            return cls(raw, reader="read from config keys (transformers not asked)")
        absurd = absurd_layer_count(raw)
        if absurd:  # transformers' classes build per-layer lists from these: refused before they can
            return cls(raw, reader=f"{absurd}: read from config keys")
        got = _with_transformers(raw)
        if isinstance(got, str):
            return cls(raw, reader=got)
        text, vision, reader = got
        return cls(raw, text, vision, reader)

    @property
    def via_transformers(self) -> bool:
        return self.resolved_text is not None

    @property
    def raw_text(self) -> dict[str, Any]:
        for key in TEXT_CONFIG_KEYS:
            nested = self.raw.get(key)
            if isinstance(nested, dict) and nested:
                return nested
        decoder = self.raw.get("decoder")
        if self.raw.get("model_type") in DECODER_TEXT_TYPES and isinstance(decoder, dict) and decoder:
            return decoder
        return self.raw

    def _first_set(self, keys: tuple[str, ...]) -> Any:
        raw_text = self.raw_text
        parts = [raw_text.get(k) for k in BLOCK_PARTS]
        for source in (self.text, self.raw, *(p for p in parts if isinstance(p, dict))):
            for key in keys:
                if source.get(key) is not None:
                    return source[key]
        return None

    @property
    def text(self) -> dict[str, Any]:
        return self.resolved_text if self.resolved_text is not None else self.raw_text

    @property
    def vision(self) -> dict[str, Any] | None:
        if self.resolved_vision:
            return _one_number_sizes(self.resolved_vision)
        for key in VISION_CONFIG_KEYS:
            nested = self.raw.get(key)
            if isinstance(nested, dict) and nested:
                return _one_number_sizes(nested)
        return None

    def get(self, *keys: str, default: Any = None) -> Any:
        """The first of ``keys`` set (not None) in the text config, then the top level."""
        self.read_keys.update(keys)
        found_by_keys: dict[tuple[str, ...], Any] = self._found  # type: ignore[attr-defined]
        try:
            found = found_by_keys[keys]
        except KeyError:
            found = found_by_keys[keys] = self._first_set(keys)
        return default if found is None else found

    def number(self, *keys: str, default: int | None = None) -> int | None:
        value = _num(self.get(*keys))
        return default if value is None else value

    def int_list(self, *keys: str) -> list[int] | None:
        value = self.get(*keys)
        if isinstance(value, list) and all(_num(v) is not None for v in value):
            return [int(v) for v in value]
        return None

    def str_list(self, *keys: str) -> list[str] | None:
        value = self.get(*keys)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return list(value)
        return None

    # -- shape of the language model --------------------------------------------------------
    @property
    def model_type(self) -> str:
        value = self.text.get("model_type") or self.raw.get("model_type")
        return value if isinstance(value, str) else ""

    @property
    def hidden_size(self) -> int | None:
        return self.number("hidden_size", "d_model", "n_embd", "dim")

    def _decoder_stack(self) -> tuple[str, ...]:
        """The decoder's layer and head keys where the text config's aliases point at its encoder."""
        stacks = _keys.DECODER_STACK_KEYS
        return stacks.get(self.model_type) or stacks.get(str(self.raw.get("model_type") or "")) or ()

    @property
    def num_layers(self) -> int:
        decoder = self._decoder_stack()[:1]  # PP-FormulaNet's decoder_layers
        n = self.number(*decoder, *LAYER_KEYS, default=0) or 0
        if not n:  # some configs give the layers only as their per-layer list (Nemotron 3 Ultra)
            types = self.get("layers_block_type", "layer_types")
            n = len(types) if isinstance(types, list) else 0
        return n if 0 <= n <= MAX_LAYERS else 0

    @property
    def vocab_size(self) -> int | None:
        return self.number("vocab_size", "padded_vocab_size")

    @property
    def num_heads(self) -> int | None:
        decoder = self._decoder_stack()[1:]
        return self.number(*decoder, "num_attention_heads", "n_head", "n_heads", "attention_heads")

    @property
    def num_kv_heads(self) -> int | None:
        return self.number(
            "num_key_value_heads",
            "n_kv_heads",
            "kv_n_heads",
            "num_kv_heads",
            "multi_query_group_num",
            default=self.num_heads,
        )

    @property
    def head_dim(self) -> int | None:
        own = _keys.HEAD_DIM_KEYS.get(self.model_type)
        explicit = self.number(
            *((own,) if own else ()), "head_dim", "attention_head_dim", "kv_channels", "dim_head", "d_head"
        )
        if explicit:
            return explicit
        if self.hidden_size and self.num_heads:
            return self.hidden_size // self.num_heads
        return None

    @property
    def v_head_dim(self) -> int | None:
        """Value head width where it differs from the key's (MiMo-V2-style); MLA reads its own."""
        if self.is_mla:
            return self.head_dim
        return self.number("v_head_dim", default=self.head_dim)

    @property
    def is_mla(self) -> bool:
        return self.number("kv_lora_rank") is not None

    @property
    def has_indexer(self) -> bool:
        return self.number("index_head_dim") is not None and self.number("index_n_heads") is not None

    @property
    def num_experts(self) -> int | None:
        return self.number(*EXPERT_KEYS)

    @property
    def experts_per_token(self) -> int | None:
        return self.number(*EXPERTS_PER_TOKEN_KEYS)

    @property
    def num_shared_experts(self) -> int:
        return self.number(*SHARED_EXPERT_KEYS, default=0) or 0

    @property
    def mtp_layers(self) -> int:
        n = self.number(*MTP_LAYER_KEYS, default=0) or 0
        return n if 0 <= n <= MAX_LAYERS else 0

    @property
    def max_context(self) -> int | None:
        return self.number(
            "max_position_embeddings",
            "max_sequence_length",
            "seq_length",
            "n_positions",
            "max_seq_len",
            "context_length",
        )

    @property
    def dtype(self) -> str:
        value = self.get("torch_dtype", "dtype", default="bfloat16")
        return value if isinstance(value, str) else "bfloat16"

    @property
    def tied_embeddings(self) -> bool:
        # transformers keeps tie_word_embeddings on the outer config of multimodal models
        value = self.raw.get("tie_word_embeddings")
        if value is None:
            value = self.get("tie_word_embeddings", default=False)
        return bool(value)

    @property
    def linear_attn(self) -> dict[str, Any]:
        """KDA's sizes: Kimi's linear_attn_config, or the flat keys transformers' KimiLinearConfig holds."""
        value = self.get("linear_attn_config")
        if isinstance(value, dict):
            return value
        flat = {
            "num_heads": self.number("linear_num_heads"),
            "head_dim": self.number("linear_head_dim"),
            "short_conv_kernel_size": self.number("linear_conv_kernel_dim"),
        }
        return {k: v for k, v in flat.items() if v is not None} if flat["num_heads"] else {}

    @property
    def quantization(self) -> dict[str, Any]:
        value = self.get("quantization_config")
        return value if isinstance(value, dict) else {}

    @property
    def four_bit_uint8_weights(self) -> bool:
        """The quantization config says weights are 4-bit values packed two to a U8 (NVFP4, MXFP4, NF4, ...)."""
        quant = self.quantization
        if not quant:
            return False
        if quant.get("load_in_4bit") is True:
            return True
        text = " ".join(
            str(quant.get(k, "")) for k in ("quant_algo", "format", "quant_method", "bnb_4bit_quant_type")
        )
        return any(tag in text.lower() for tag in ("fp4", "nvfp4", "mxfp4", "nf4", "w4a")) or (
            self.quant_bits == 4
            and bool(quant.get("config_groups") or quant.get("bits") or quant.get("num_bits"))
        )

    @property
    def quant_bits(self) -> int:
        """Bits of packed weights, from the quantization config (4 when it does not say)."""
        quant = self.quantization
        groups = quant.get("config_groups")
        if isinstance(groups, dict):
            for group in groups.values():
                weights = group.get("weights") if isinstance(group, dict) else None
                bits = _num(weights.get("num_bits")) if isinstance(weights, dict) else None
                if bits:
                    return bits
        bits = _num(quant.get("bits")) or _num(quant.get("num_bits"))
        return bits or 4


_VERSION_LINE = re.compile(r'^__version__ = "([^"]+)"$', re.MULTILINE)


@functools.cache
def installed_transformers() -> str | None:
    """The installed transformers' version, read from its package's ``__init__`` without importing it
    (the import costs ~1 s; this a file read), or None when it is not installed."""
    import importlib.util

    spec = importlib.util.find_spec("transformers")
    if spec is None or spec.origin is None:
        return None
    try:
        with open(spec.origin, encoding="utf-8") as init:
            version = _VERSION_LINE.search(init.read())
    except OSError:
        return None
    return version[1] if version else None


def _import_config_classes() -> None:
    """transformers' configuration classes without its package ``__init__`` (the child's import).

    ``import transformers`` walks every model folder to build its lazy namespace (1,700 files read,
    ~0.4 s) and checks its dependencies' versions, ~0.55 s of the ~1 s a child spends, and none of it
    is used by a configuration class. So the packages ``transformers`` and ``transformers.models``
    stand as bare namespaces over their own folders (the version read from the package's
    ``__init__``), and ``CONFIG_MAPPING`` is imported from its module as transformers' own
    ``AutoConfig`` does: each model's configuration module is then imported by its own name, with its
    own imports. tests/test_config_child.py checks that every model_type transformers ships reads
    the same either way. Anything that goes wrong leaves ``_TRANSFORMERS`` untried, for the full import.
    """
    global _TRANSFORMERS, _LIGHT
    import importlib.util
    import types

    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    spec = importlib.util.find_spec("transformers")
    if spec is None or spec.origin is None or not spec.submodule_search_locations:
        return
    version = installed_transformers()
    if version is None:
        return
    (folder,) = spec.submodule_search_locations
    package = types.ModuleType("transformers")
    package.__spec__, package.__path__, package.__file__ = spec, [folder], spec.origin
    package.__version__ = version  # type: ignore[attr-defined]
    models = types.ModuleType("transformers.models")
    models.__spec__ = importlib.util.spec_from_loader("transformers.models", None, is_package=True)
    models.__path__ = [os.path.join(folder, "models")]
    package.models = models  # type: ignore[attr-defined]
    sys.modules["transformers"], sys.modules["transformers.models"] = package, models
    try:
        with warnings.catch_warnings(), _torch_hidden():
            warnings.simplefilter("ignore")
            from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    except Exception:
        _forget_transformers()
        return
    package.CONFIG_MAPPING = CONFIG_MAPPING  # type: ignore[attr-defined]
    _TRANSFORMERS, _LIGHT = package, True


def _forget_transformers() -> None:
    """Every transformers module this process holds dropped, so that the next use imports it whole."""
    global _TRANSFORMERS, _LIGHT
    _LIGHT = False
    for name in [n for n in sys.modules if n == "transformers" or n.startswith("transformers.")]:
        del sys.modules[name]
    _TRANSFORMERS = False


def _child_main() -> None:
    """A child's side of ``config_child``: the config on stdin, the tagged answer on stdout.

    Run by its path (no package imported): what it prints is this module's own reading, and any
    failure (an answer that is not plain, MemoryError) is a non-zero exit, which the parent ignores.
    The configuration classes come from ``_import_config_classes``; a config they refuse, or a class
    they cannot import, is read again after the full import, so that only transformers' own refusal
    is ever an answer.
    """
    # httpcore, which transformers' hub utilities import, imports trio wherever it is installed, for
    # async clients (~60 ms of the child's CPU, on a core the reading process wants): this process
    # never makes a request (it runs offline), so trio stays unimported
    global _CHILD
    _CHILD = True
    sys.modules.setdefault("trio", None)  # type: ignore[arg-type]
    sys.modules.setdefault("torch", None)  # type: ignore[arg-type]  # hidden for the child's life
    _import_config_classes()  # before the config is read: the parent starts a child ahead of it
    raw = json.loads(sys.stdin.buffer.read())
    if type(raw) is not dict:
        raise SystemExit(2)
    answer: Any = _with_transformers(raw)  # the whole import after a refusal of the classes alone
    sys.stdout.write(json.dumps({"format": CHILD_FORMAT, "answer": tagged(answer)}, allow_nan=True))


if __name__ == "__main__":
    _child_main()
