"""Sources: where snapshots come from (the Hub, a local folder, the on-disk cache).

Every source returns the same frozen :class:`hubdiff.snapshot.Snapshot`; the layout rules (which
safetensors files make up the model) and the header checks are shared, so a folder and a Hub repo
with the same files give the same snapshot.
"""

from __future__ import annotations

from .spec import HubSettings, Sources, SourceSpec, parse_source

__all__ = ["HubSettings", "SourceSpec", "Sources", "parse_source"]
