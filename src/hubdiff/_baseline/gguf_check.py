"""A GGUF repo against its baseline entry (``gguf:``): what ``hubdiff check`` reports of a GGUF pin.

The variants are compared as recorded (``_baseline.gguf``): added, removed, or with other files,
bytes, bits per weight, parameters or ggml type counts. The pinned variant's strip is compared as the
tensor layout of a safetensors entry is (``diff_tensors`` on the patterns), so a requantized tensor
kind is named with its layers (``blk.{4-27}.attn_v.weight: Q6_K -> Q4_K``), not summed into a byte
count that another tensor kind's change could cancel.

A change fails ``check`` unless ``allow_changes`` names its variant (anything of it) or the variant and
what changed (``Q8_0.files``), as a config key or its top-level key does for a safetensors entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._compare.tensor_diff import TensorDiff, diff_tensors
from ..patterns import compress, ordered
from ..snapshot import Snapshot
from ..values import same_value
from .gguf import gguf_block, parse_strip, pinned_key, pinned_record, variant_keys

if TYPE_CHECKING:
    from .._metrics.gguf import Variant

FIELDS = ("files", "bytes", "bits_per_weight", "parameters", "types")
FIELD_UNITS = {"bytes": "bytes", "parameters": "params", "bits_per_weight": "bits", "files": "", "types": ""}


@dataclass(frozen=True)
class GGUFChange:
    """One difference: a variant ``added``/``removed`` (``what`` is ``variant``), a recorded field
    ``changed``, the pinned variant's ``strip`` changed (or not recorded: ``added``), or the ``pin``
    naming no variant any more (``removed``)."""

    variant: str
    what: str
    kind: str
    old: Any = None
    new: Any = None

    @property
    def path(self) -> str:
        """What ``allow_changes`` names to let it pass: the variant, or ``variant.what``."""
        return self.variant if self.what == "variant" else f"{self.variant}.{self.what}"

    @property
    def unit(self) -> str:
        return FIELD_UNITS.get(self.what, "")


@dataclass(frozen=True)
class GGUFVariantNow:
    """A variant as the tracked revision holds it: what a report lists beside the changes."""

    key: str
    files: int
    bytes: int
    bits_per_weight: float
    pinned: bool


@dataclass(frozen=True)
class GGUFCheck:
    old_sha: str | None
    new_sha: str
    pin: str | None  # as the baseline writes it
    pinned: str | None  # the key of the variant it names now (None: names none, or no pin)
    changes: tuple[GGUFChange, ...]
    strip: TensorDiff | None  # the pinned variant's tensors against the recorded strip
    variants: tuple[GGUFVariantNow, ...]

    @property
    def moved(self) -> bool:
        return bool(self.old_sha) and self.old_sha != self.new_sha

    def blocking(self, allowed: Iterable[str]) -> list[GGUFChange]:
        names = set(allowed)
        return [c for c in self.changes if c.variant not in names and c.path not in names]


def _snapshot(patterns: Sequence[Any], sha: str) -> Snapshot:
    return Snapshot("gguf", "", sha, None, {}, None, (), {}, tuple(ordered(patterns)))


def compare_gguf(
    recorded: dict[str, Any], found: Sequence[Variant], old_sha: str | None, new_sha: str
) -> GGUFCheck:
    """The variants ``found`` at ``new_sha`` against the entry's ``gguf`` block (validated)."""
    pin = recorded.get("pin")
    old: dict[str, Any] = recorded.get("variants") or {}
    keys = variant_keys(found)
    new = gguf_block(found, None)["variants"]
    changes: list[GGUFChange] = []
    for name in sorted(old.keys() - new.keys()):
        changes.append(GGUFChange(name, "variant", "removed", _summary(old[name]), None))
    for name in sorted(new.keys() - old.keys()):
        changes.append(GGUFChange(name, "variant", "added", None, _summary(new[name])))
    for name in sorted(old.keys() & new.keys()):
        for what in FIELDS:
            before, after = old[name].get(what), new[name][what]
            differs = before != after if what == "files" else not same_value(before, after)
            if differs:
                changes.append(GGUFChange(name, what, "changed", before, after))
    pinned = pinned_key(pin, keys)
    strip = None
    if pin is not None and pinned is None:
        changes.append(GGUFChange(pin, "pin", "removed", pin, None))
    elif pinned is not None:
        now = compress((t.name, t.type.name, tuple(t.shape)) for t, _ in keys[pinned].tensors())
        was = pinned_record(pin, old)
        rows = (old.get(was) or {}).get("strip") if was is not None else None
        if rows is None:
            changes.append(GGUFChange(pinned, "strip", "added"))
        else:
            strip = diff_tensors(_snapshot(parse_strip(rows), old_sha or ""), _snapshot(now, new_sha))
            if not strip.empty:
                changes.append(GGUFChange(pinned, "strip", "changed"))  # ``strip`` holds what changed
    listed = tuple(
        GGUFVariantNow(k, len(r["files"]), r["bytes"], r["bits_per_weight"], k == pinned)
        for k, r in new.items()
    )
    return GGUFCheck(old_sha, new_sha, pin, pinned, tuple(changes), strip, listed)


def _summary(record: dict[str, Any]) -> str:
    """A variant in one phrase: "1 file, 889,088 bytes, 5.1634 bits per weight"."""
    files = record.get("files") or []
    return (
        f"{len(files)} file{'s' if len(files) != 1 else ''}, {record.get('bytes', 0):,} bytes, "
        f"{record.get('bits_per_weight', 0)} bits per weight"
    )
