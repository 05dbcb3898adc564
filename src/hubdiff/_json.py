"""JSON at C speed where the volume is: safetensors headers in, tensor lists out.

orjson parses a 160-shard, 199,680-tensor checkpoint's headers in 0.23 s where the standard library
takes 0.42 s (msgspec: 0.30 s), and writes the tensor list of ``--json`` about ten times faster. It is
stricter than the standard library (no NaN, no integers beyond 64 bits, no lone surrogates, UTF-8
only), so whatever it refuses goes through ``json`` instead: the result and the errors are the
standard library's, only the common case is faster.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

import orjson


def loads(raw: bytes) -> Any:
    """``json.loads(raw)``, by orjson when it can."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)


def dumps_sorted(data: dict[str, Any], bulk: str) -> str:
    """``json.dumps(data, sort_keys=True)`` in compact form, with ``data[bulk]`` written by orjson.

    The small rest (configs may hold NaN or huge integers, which orjson would change or refuse) goes
    through the standard library; the bulk value is spliced in where an unguessable placeholder stood.
    """
    placeholder = f"hubdiff-bulk-{secrets.token_hex(16)}"
    text = json.dumps({**data, bulk: placeholder}, sort_keys=True, separators=(",", ":"))
    try:
        value = orjson.dumps(data[bulk]).decode()
    except (TypeError, orjson.JSONEncodeError):
        value = json.dumps(data[bulk], separators=(",", ":"))
    return text.replace(f'"{placeholder}"', value, 1)
