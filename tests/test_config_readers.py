"""hubdiff's own config readers against transformers' configuration classes.

transformers reads a config first when it knows the ``model_type``; hubdiff's key readers take over
when it does not (remote code, a release newer than the installed transformers). For every corpus
model transformers knows, both readings must agree on the hyperparameters and the layer census, or
the key reader must say what it was unsure of (``unverified``), so that the fallback stays honest for
the models only it can read.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from dataclasses import astuple

import pytest

from hubdiff._metrics.results import Metrics

from .test_corpus import MODELS, cached


def _hyperparameters(m: Metrics) -> dict[str, object]:
    c = m.cfg
    moe = any(x.mlp == "moe" for x in m.layers)
    return {
        "hidden_size": c.hidden_size,
        "layers": c.num_layers,
        "heads": c.num_heads,
        "kv_heads": c.num_kv_heads,
        # MLA layers size everything from their own keys; head_dim is only meaningful elsewhere
        "head_dim": None if c.is_mla else c.head_dim,
        "vocab_size": c.vocab_size,
        "experts": c.num_experts if moe else None,
        "experts_per_token": c.experts_per_token if moe else None,
        "tied_embeddings": c.tied_embeddings,
    }


def _census(m: Metrics) -> list[tuple[object, ...]]:
    # the window is compared apart: transformers adds the query's own token to MiMo's window
    return [astuple(x)[:4] + astuple(x)[5:] for x in m.layers]


def test_transformers_reads_most_of_the_corpus() -> None:
    known = [m for m in MODELS if cached(m).cfg.via_transformers]
    assert len(known) >= 0.75 * len(MODELS)
    assert all("config read with transformers" in cached(m).cfg.reader for m in known)


@pytest.mark.parametrize("model", MODELS)  # not only those transformers reads: collection reads no config
def test_key_reader_agrees_or_says_it_is_unsure(model: str) -> None:
    with_transformers, keys_only = cached(model, "auto"), cached(model, "keys")
    assert "transformers not asked" in keys_only.cfg.reader
    if (
        not with_transformers.cfg.via_transformers
    ):  # transformers declined: auto is the key reader's own reading
        assert "transformers not asked" not in with_transformers.cfg.reader
        assert _census(with_transformers) == _census(keys_only)
        assert with_transformers.params.total == keys_only.params.total
        return
    agree = (
        _hyperparameters(with_transformers) == _hyperparameters(keys_only)
        and _census(with_transformers) == _census(keys_only)
        and with_transformers.params.total == keys_only.params.total
    )
    if not agree:
        assert keys_only.unverified, (
            f"{model}: the key reader differs from transformers and does not say so\n"
            f"  transformers: {_hyperparameters(with_transformers)}\n  keys:         {_hyperparameters(keys_only)}"
        )
    else:
        windows = [(a.window, b.window) for a, b in zip(with_transformers.layers, keys_only.layers)]
        assert all(a == b or (a and b and abs(a - b) <= 1) for a, b in windows), windows


def test_snapshot_does_not_import_transformers() -> None:
    """A snapshot needs no config classes: the 1-2 s import is paid only when metrics are asked for."""
    code = (
        "import sys, hubdiff.cli.snapshot, hubdiff.cli.metrics, hubdiff.snapshot, hubdiff._source;"
        "print('transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert importlib.util.find_spec("transformers") is not None


@pytest.mark.parametrize("layers", [10**9, 1e300, -5, 2**70])
def test_absurd_layer_counts_are_refused_before_anything_is_built(layers: object) -> None:
    """transformers' classes build per-layer lists; hubdiff refuses such a count before they can."""
    from hubdiff._metrics.compute import compute_metrics
    from hubdiff._metrics.options import MetricsOptions
    from hubdiff.snapshot import Snapshot

    config = {"model_type": "gemma3_text", "hidden_size": 64, "num_hidden_layers": layers, "vocab_size": 10}
    snapshot = Snapshot("x", "local", "", None, config, None, (), {}, ())
    m = compute_metrics(snapshot, MetricsOptions(config_only=True))
    assert m.layers == ()
    assert "outside 0 to 1,024" in m.cfg.reader
    assert any("num_hidden_layers" in reason and "refused" in reason for reason in m.unverified)


def test_every_architecture_transformers_knows_is_read_alike_or_marked() -> None:
    """Each configuration class's own defaults, dumped as a config.json would be, read both ways: the
    key readers must agree with transformers on census, parameters and KV, or name what they guessed.
    This covers every model_type of the installed transformers, not only the corpus."""
    import json

    from transformers import CONFIG_MAPPING

    from hubdiff._metrics.compute import compute_metrics
    from hubdiff._metrics.options import MetricsOptions
    from hubdiff.snapshot import Snapshot

    silent, read = [], 0
    for model_type in sorted(CONFIG_MAPPING.keys()):
        try:
            raw = json.loads(json.dumps(CONFIG_MAPPING[model_type]().to_dict(), default=str))
        except Exception:  # a class that cannot build its own defaults: nothing to compare
            continue
        snapshot = Snapshot(model_type, "local", "", None, raw, None, (), {}, ())
        auto = compute_metrics(snapshot, MetricsOptions(config_only=True))
        keys = compute_metrics(snapshot, MetricsOptions(config_only=True, config_reader="keys"))
        read += 1
        same = (
            _census(auto) == _census(keys)
            and auto.params.total == keys.params.total
            and auto.kv.bytes_per_token == keys.kv.bytes_per_token
        )
        if not same and not keys.unverified:
            silent.append(f"{model_type}: {auto.params.total:,} vs {keys.params.total:,} parameters")
    assert read >= 500
    assert silent == []
