"""Sources: where snapshots come from (the Hub, a local folder, the on-disk cache).

Every source returns the same frozen :class:`hubdiff.snapshot.Snapshot`; the layout rules (which
safetensors files make up the model) and the header checks are shared, so a folder and a Hub repo
with the same files give the same snapshot.

The names below are imported on first use, so that a header worker (``parsing.serve``), which needs
only the header reader and the grouping, does not load the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .settings import HubSettings
    from .sources import Sources
    from .spec import SourceSpec, parse_source

__all__ = ["HubSettings", "SourceSpec", "Sources", "parse_source"]


def __getattr__(name: str) -> Any:
    if name == "Sources":
        from .sources import Sources

        return Sources
    if name in __all__:
        from . import spec

        return getattr(spec, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
