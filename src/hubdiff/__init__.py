"""hubdiff: what changed between model revisions on the Hugging Face Hub, from configs and headers."""

from __future__ import annotations

import os

# huggingface_hub reads its environment once, at import. hubdiff sends no telemetry: without this,
# the client's first request of a process may go to the default endpoint, whatever --endpoint says.
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

__version__ = "0.1.0"
