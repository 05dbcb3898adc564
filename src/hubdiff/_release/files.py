"""Reading the release files: tokenizer config, chat templates, special tokens, generation and processor
settings, and the head of ``tokenizer.json``; bounded, checked, from the Hub or a folder alike.

Which file wins follows transformers 5.25.0 (``tokenization_utils_base.py``, ``from_pretrained``):
``chat_template.jinja`` and ``additional_chat_templates/*.jinja`` take priority over the template in
``tokenizer_config.json``; ``chat_template.json`` is the processors' older file (``processing_utils``'s
``LEGACY_PROCESSOR_CHAT_TEMPLATE_FILE``), used where no ``.jinja`` file is; ``special_tokens_map.json``
is read only when ``tokenizer_config.json`` has no ``added_tokens_decoder`` (the legacy layout), and
then its tokens replace the config's.

A file that is missing is normal (a base model has no chat template); a file that is there but
malformed is a source error naming repo, revision and file, as for ``config.json``.

``tokenizer.json`` can be tens of MB (its vocabulary and merges), so only its head is read (one range
request, ``TOKENIZER_HEAD_BYTES``): the tokenizers library writes ``added_tokens`` before ``model``, so
the head holds the added and special tokens with their ids. The vocabulary is counted only when the
whole ``model`` fits in the head; otherwise the size is a lower bound (the highest added-token id + 1),
said as such.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .._source.jsonin import MAX_DEPTH, JSONProblem, check_tree, has_lone_surrogate, load_json
from .._source.layout import MAX_CONFIG_BYTES

TOKENIZER_CONFIG = "tokenizer_config.json"
TEMPLATE_JINJA = "chat_template.jinja"
TEMPLATE_JSON = "chat_template.json"
TEMPLATE_DIR = "additional_chat_templates"
SPECIAL_TOKENS_MAP = "special_tokens_map.json"
GENERATION_CONFIG = "generation_config.json"
PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json")
TOKENIZER_JSON = "tokenizer.json"

MAX_JSON_BYTES = MAX_CONFIG_BYTES  # tokenizer_config.json with 10,000s of added tokens is ~2 MB
MAX_TEMPLATE_BYTES = 1_000_000  # real templates are 1-40 KB
MAX_NAMED_TEMPLATES = 16  # additional_chat_templates/*.jinja read at most
TOKENIZER_HEAD_BYTES = 4 << 20  # added_tokens of the largest tokenizers (Gemma's 6,000+) fit in ~1 MB
MAX_ADDED_TOKENS = 1_000_000
MAX_TOKEN_CHARS = 4_096  # a special token longer than this is refused (real ones are < 30)

# tokenizer attributes transformers treats as special (SPECIAL_TOKENS_ATTRIBUTES), in its order
SPECIAL_TOKENS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
_TEMPLATE_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


class ReleaseProblem(ValueError):
    """What is wrong with one release file; ``file`` names it."""

    def __init__(self, file: str, problem: str) -> None:
        super().__init__(f"{file}: {problem}")
        self.file = file
        self.problem = problem


@dataclass(frozen=True)
class ChatTemplate:
    name: str  # "default", or the name of a named template (tool_use, ...)
    text: str
    file: str  # the file it was read from

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


@dataclass(frozen=True)
class Vocabulary:
    """What the head of tokenizer.json says: its added tokens, and the vocabulary size when it fits."""

    added: dict[str, int]  # content -> id
    special: tuple[str, ...]  # contents of the added tokens marked special
    size: int | None  # base vocabulary + added tokens not in it, when the whole model was in the head
    lower_bound: int | None  # otherwise: the highest added id + 1
    complete: bool  # the added_tokens list was read whole


@dataclass(frozen=True)
class ReleaseFiles:
    """One release's files beside the weights, as read and resolved (see the module's rules)."""

    files: tuple[str, ...] = ()  # the release files the revision has
    templates: tuple[ChatTemplate, ...] = ()  # the templates in effect, "default" first
    shadowed: tuple[str, ...] = ()  # template sources present but overridden by a higher one
    special_tokens: dict[str, str] = field(default_factory=dict)  # bos_token ... and *_token: content
    special_file: str | None = None  # the file the special tokens come from
    extra_special_tokens: tuple[str, ...] = ()
    token_ids: dict[str, int] = field(default_factory=dict)  # content -> id, added tokens of both files
    added_tokens: int | None = None  # how many tokenizer_config's added_tokens_decoder lists
    model_max_length: int | float | None = None
    generation: dict[str, Any] | None = None
    processor: dict[str, dict[str, Any]] = field(default_factory=dict)  # file -> its object
    vocabulary: Vocabulary | None = None
    notes: tuple[str, ...] = ()  # what could not be read or resolved, in words

    @property
    def template(self) -> ChatTemplate | None:
        return next((t for t in self.templates if t.name == "default"), None)

    def token_id(self, content: str | None) -> int | None:
        return None if content is None else self.token_ids.get(content)


class Reader(Protocol):
    def read(self, path: str, limit: int) -> bytes:
        """At most ``limit + 1`` bytes of a file (one more, so that "too big" shows)."""

    def head(self, path: str, size: int) -> bytes:
        """The first ``size`` bytes of a file (fewer if it is shorter)."""


def release_paths(listing: set[str]) -> list[str]:
    """The release files of a revision's listing, in reading order (generation_config.json excluded:
    the snapshot has it)."""
    fixed = [
        TOKENIZER_CONFIG,
        TEMPLATE_JINJA,
        TEMPLATE_JSON,
        SPECIAL_TOKENS_MAP,
        *PROCESSOR_FILES,
        TOKENIZER_JSON,
    ]
    named = sorted(
        p for p in listing if p.startswith(TEMPLATE_DIR + "/") and p.endswith(".jinja") and p.count("/") == 1
    )
    return [p for p in fixed if p in listing] + named[:MAX_NAMED_TEMPLATES]


def _json_object(raw: bytes, file: str, limit: int) -> dict[str, Any]:
    if len(raw) > limit:
        raise ReleaseProblem(file, f"over the {limit:,}-byte limit for this file")
    try:
        data = load_json(raw)
    except JSONProblem as exc:
        raise ReleaseProblem(file, str(exc)) from None
    if not isinstance(data, dict):
        raise ReleaseProblem(file, f"JSON but not an object ({type(data).__name__})")
    return data


def _text(raw: bytes, file: str, limit: int) -> str:
    if len(raw) > limit:
        raise ReleaseProblem(file, f"over the {limit:,}-byte limit for this file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReleaseProblem(file, f"not UTF-8 text (invalid byte at offset {exc.start})") from None
    return text.removeprefix("\ufeff")


def _template_text(value: Any, file: str, key: str) -> str:
    if not isinstance(value, str):
        raise ReleaseProblem(file, f"{key} is {type(value).__name__}, not a string")
    if len(value.encode()) > MAX_TEMPLATE_BYTES:
        raise ReleaseProblem(file, f"{key} is over the {MAX_TEMPLATE_BYTES:,}-byte limit for a template")
    return value


def templates_of_config(value: Any, file: str) -> list[ChatTemplate]:
    """``chat_template`` as tokenizer_config.json or chat_template.json holds it: a string, or a list
    of ``{"name", "template"}`` (named templates, transformers' older layout)."""
    if value is None:
        return []
    if isinstance(value, list):
        out = []
        for i, entry in enumerate(value[:MAX_NAMED_TEMPLATES]):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise ReleaseProblem(file, f"chat_template[{i}] is not an object with a name")
            name = entry["name"]
            if not _TEMPLATE_NAME.fullmatch(name):
                raise ReleaseProblem(file, f"chat_template[{i}] has the name {name[:40]!r}")
            out.append(
                ChatTemplate(name, _template_text(entry.get("template"), file, f"chat_template[{i}]"), file)
            )
        return out
    return [ChatTemplate("default", _template_text(value, file, "chat_template"), file)]


def token_content(value: Any, file: str, key: str) -> str | None:
    """A special token as the files spell it: a string, or a serialized AddedToken (``{"content": ...}``)."""
    if value is None:
        return None
    if isinstance(value, dict):
        value = value.get("content")
    if not isinstance(value, str):
        raise ReleaseProblem(file, f"{key} is {type(value).__name__}, not a token")
    if len(value) > MAX_TOKEN_CHARS:
        raise ReleaseProblem(file, f"{key} is over {MAX_TOKEN_CHARS:,} characters")
    return value


def _special_tokens(data: dict[str, Any], file: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """The ``*_token`` entries (the standard ones and model-specific ones, as transformers 5 collects
    them) and the extra special tokens (``additional_special_tokens`` / ``extra_special_tokens``)."""
    tokens: dict[str, str] = {}
    for key, value in data.items():
        if key.endswith("_token") and (key in SPECIAL_TOKENS or isinstance(value, (str, dict))):
            content = token_content(value, file, key)
            if content is not None:
                tokens[key] = content
    extra: list[str] = []
    for key in ("additional_special_tokens", "extra_special_tokens"):
        value = data.get(key)
        if isinstance(value, dict):  # model-specific tokens by name (transformers 5)
            for name, token in value.items():
                content = token_content(token, file, f"{key}.{name}")
                if content is not None:
                    tokens[str(name)] = content
        elif isinstance(value, list):
            extra.extend(c for i, t in enumerate(value) if (c := token_content(t, file, f"{key}[{i}]")))
        elif value is not None:
            raise ReleaseProblem(file, f"{key} is {type(value).__name__}, not a list")
    return tokens, tuple(dict.fromkeys(extra))


def _added_tokens_decoder(data: dict[str, Any], file: str) -> dict[str, int]:
    decoder = data.get("added_tokens_decoder")
    if decoder is None:
        return {}
    if not isinstance(decoder, dict):
        raise ReleaseProblem(file, "added_tokens_decoder is not an object")
    if len(decoder) > MAX_ADDED_TOKENS:
        raise ReleaseProblem(file, f"added_tokens_decoder has over {MAX_ADDED_TOKENS:,} entries")
    out: dict[str, int] = {}
    for key, token in decoder.items():
        if not key.isdigit() or len(key) > 10:
            raise ReleaseProblem(file, f"added_tokens_decoder key {key[:20]!r} is not a token id")
        content = token_content(token, file, f"added_tokens_decoder[{key}]")
        if content is not None:
            out[content] = int(key)
    return out


def _max_length(value: Any, file: str) -> int | float | None:
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return value
    raise ReleaseProblem(file, f"model_max_length is {type(value).__name__}, not a number")


def read_release(
    reader: Reader,
    listing: set[str],
    generation: dict[str, Any] | None,
    each: Callable[[Callable[[str], Any], list[str]], dict[str, Any]] | None = None,
) -> ReleaseFiles:
    """The release files of ``listing`` through ``reader``; ``generation`` is the snapshot's
    generation config (already read). ``each`` reads the files side by side (the Hub); default one
    after another. Raises ReleaseProblem naming the file."""
    paths = release_paths(listing)

    def one(path: str) -> Any:
        if path == TOKENIZER_JSON:
            raw = reader.head(path, TOKENIZER_HEAD_BYTES)
            return read_vocabulary(raw, path, cut=len(raw) >= TOKENIZER_HEAD_BYTES)
        if path.endswith(".jinja"):
            return _text(reader.read(path, MAX_TEMPLATE_BYTES), path, MAX_TEMPLATE_BYTES)
        return _json_object(reader.read(path, MAX_JSON_BYTES), path, MAX_JSON_BYTES)

    got = each(one, paths) if each is not None else {p: one(p) for p in paths}
    return resolve(got, generation, listing)


def resolve(got: dict[str, Any], generation: dict[str, Any] | None, listing: set[str]) -> ReleaseFiles:
    """The files' contents (path -> object, text, or Vocabulary) resolved by transformers' rules."""
    notes: list[str] = []
    config: dict[str, Any] = got.get(TOKENIZER_CONFIG) or {}
    # chat templates: .jinja files first, then chat_template.json, then tokenizer_config's
    sources: list[tuple[str, list[ChatTemplate]]] = []
    if TEMPLATE_JINJA in got or any(p.startswith(TEMPLATE_DIR + "/") for p in got):
        jinja = (
            [ChatTemplate("default", got[TEMPLATE_JINJA], TEMPLATE_JINJA)] if TEMPLATE_JINJA in got else []
        )
        for path in sorted(p for p in got if p.startswith(TEMPLATE_DIR + "/")):
            name = path.rpartition("/")[2].removesuffix(".jinja")
            if not _TEMPLATE_NAME.fullmatch(name):
                raise ReleaseProblem(path, "not a usable template name")
            jinja.append(ChatTemplate(name, got[path], path))
        sources.append((TEMPLATE_JINJA, jinja))
    if TEMPLATE_JSON in got:
        sources.append(
            (TEMPLATE_JSON, templates_of_config(got[TEMPLATE_JSON].get("chat_template"), TEMPLATE_JSON))
        )
    if config.get("chat_template") is not None:
        sources.append((TOKENIZER_CONFIG, templates_of_config(config["chat_template"], TOKENIZER_CONFIG)))
    sources = [(f, t) for f, t in sources if t]
    templates = sorted(sources[0][1], key=lambda t: (t.name != "default", t.name)) if sources else []
    shadowed = tuple(f for f, _ in sources[1:])
    if len(listing) and sum(p.startswith(TEMPLATE_DIR + "/") for p in listing) > MAX_NAMED_TEMPLATES:
        notes.append(f"only the first {MAX_NAMED_TEMPLATES} of {TEMPLATE_DIR}/ were read")

    tokens, extra = _special_tokens(config, TOKENIZER_CONFIG)
    special_file = TOKENIZER_CONFIG if tokens or extra else None
    ids = _added_tokens_decoder(config, TOKENIZER_CONFIG)
    if SPECIAL_TOKENS_MAP in got:
        if "added_tokens_decoder" in config:
            notes.append(f"{SPECIAL_TOKENS_MAP} is not read by transformers 5 beside an added_tokens_decoder")
        else:
            mapped, mapped_extra = _special_tokens(got[SPECIAL_TOKENS_MAP], SPECIAL_TOKENS_MAP)
            tokens.update(mapped)
            extra = tuple(dict.fromkeys((*extra, *mapped_extra)))
            special_file = SPECIAL_TOKENS_MAP if mapped or mapped_extra else special_file
    vocabulary = got.get(TOKENIZER_JSON)
    if vocabulary is not None:
        ids = {**vocabulary.added, **ids}  # tokenizer_config's own ids first, then tokenizer.json's
        if not vocabulary.complete:
            notes.append(
                f"{TOKENIZER_JSON}: added tokens past its first {TOKENIZER_HEAD_BYTES:,} bytes not read"
            )
    return ReleaseFiles(
        files=tuple(sorted(p for p in (*got, *([GENERATION_CONFIG] if generation is not None else [])))),
        templates=tuple(templates),
        shadowed=shadowed,
        special_tokens=tokens,
        special_file=special_file,
        extra_special_tokens=extra,
        token_ids=ids,
        added_tokens=len(config["added_tokens_decoder"])
        if isinstance(config.get("added_tokens_decoder"), dict)
        else None,
        model_max_length=_max_length(config.get("model_max_length"), TOKENIZER_CONFIG),
        generation=generation,
        processor={p: got[p] for p in PROCESSOR_FILES if p in got},
        vocabulary=vocabulary,
        notes=tuple(notes),
    )


# -- tokenizer.json's head -----------------------------------------------------------------------
def _refuse_constant(name: str) -> Any:
    raise JSONProblem(f"not JSON ({name} is not a JSON number)")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise JSONProblem(f"number {text[:40]} is out of range")
    return value


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite)
_SPACE = re.compile(r"[ \t\n\r]*")


def top_level_values(text: str, cut: bool) -> tuple[dict[str, Any], bool]:
    """The top-level entries of a JSON object, and whether the whole object was read. ``cut``: the
    text is the file's first bytes only, so the first value that does not decode ends the reading
    (it runs past the cut) instead of being an error. Each value is checked as ``load_json`` checks a
    document (depth, 64-bit integers)."""
    out: dict[str, Any] = {}

    def skip(pos: int) -> int:
        return _SPACE.match(text, pos).end()  # type: ignore[union-attr]

    pos = skip(0)
    if not text.startswith("{", pos):
        raise JSONProblem("not a JSON object")
    pos = skip(pos + 1)
    if text.startswith("}", pos):
        return out, True
    while True:
        try:
            key, pos = _DECODER.raw_decode(text, pos)
            pos = skip(pos)
            if not text.startswith(":", pos):
                raise ValueError(f"no ':' after a key at {pos}")
            value, pos = _DECODER.raw_decode(text, skip(pos + 1))
        except RecursionError:
            raise JSONProblem("nested too deeply to read") from None
        except JSONProblem:
            raise
        except ValueError as exc:
            if cut:
                return out, False
            raise JSONProblem(f"not JSON ({exc})") from None
        if not isinstance(key, str):
            raise JSONProblem("a key is not a string")
        check_tree(value, MAX_DEPTH, f"{key}: ")
        if "\\u" in text and has_lone_surrogate(value):
            raise JSONProblem(f"{key}: holds a lone UTF-16 surrogate escape (\\udXXX), which is not text")
        out[key] = value
        pos = skip(pos)
        if text.startswith(",", pos):
            pos = skip(pos + 1)
        elif text.startswith("}", pos):
            return out, True
        elif cut and pos >= len(text):
            return out, False
        else:
            raise JSONProblem(f"not JSON (unexpected {text[pos : pos + 10]!r} at {pos})")


def read_vocabulary(raw: bytes, file: str = TOKENIZER_JSON, cut: bool = True) -> Vocabulary:
    """The added tokens (and the vocabulary size, when it is in) of tokenizer.json's first bytes;
    ``cut``: ``raw`` may be only the file's head."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not cut or exc.start < len(raw) - 3:  # a cut may split the last character, nothing else
            raise ReleaseProblem(file, f"not UTF-8 text (invalid byte at offset {exc.start})") from None
        text = raw[: exc.start].decode("utf-8")
    try:
        top, whole = top_level_values(text, cut)
    except JSONProblem as exc:
        raise ReleaseProblem(file, str(exc)) from None
    added_list = top.get("added_tokens")
    complete = "added_tokens" in top or whole  # read, or the file has none
    if added_list is not None and not isinstance(added_list, list):
        raise ReleaseProblem(file, "added_tokens is not a list")
    added: dict[str, int] = {}
    special: list[str] = []
    for i, token in enumerate(added_list or []):
        if not isinstance(token, dict) or type(token.get("id")) is not int or token["id"] < 0:
            raise ReleaseProblem(file, f"added_tokens[{i}] has no token id")
        content = token_content(token, file, f"added_tokens[{i}]")
        if content is None:
            raise ReleaseProblem(file, f"added_tokens[{i}] has no content")
        added[content] = token["id"]
        if token.get("special") is True:
            special.append(content)
    size: int | None = None
    model = top.get("model")
    if isinstance(model, dict) and isinstance(model.get("vocab"), (dict, list)):
        vocab = model["vocab"]
        base = len(vocab)
        known = set(vocab) if isinstance(vocab, dict) else {v[0] for v in vocab if isinstance(v, list) and v}
        size = base + sum(1 for content in added if content not in known)
    lower = max(added.values()) + 1 if added and size is None else None
    return Vocabulary(added, tuple(special), size, lower, complete)
