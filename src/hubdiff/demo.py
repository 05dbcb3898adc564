"""``hubdiff demo``: the whole loop on the embedded example, against a Hub replica on 127.0.0.1.

1. the founding comparison: GLM-5 -> GLM-5.3 and GLM-5.3 -> GLM-5.3-Flash, as reports;
2. ``watch`` over the example baselines: nothing has changed;
3. the publisher pushes a new GLM-5.3-Flash revision (indexer keys pooled 8:1 instead of 4:1);
4. ``watch --update`` notices it, reports the change and the claim it breaks, and re-records the
   baseline, as the scheduled workflow would before opening its pull request;
5. zai-org publishes two new repos that the family's ``discover`` rule takes: an FP8 copy of GLM-5.3
   and GLM-5.3-Flash-Lite (half the routed experts). The watch finds both, recognises the first as a
   quantized copy, compares the second with its closest sibling, and proposes both for the baseline.

``--serve`` instead keeps the replica running and prints the lines that point the README's commands at it.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import time
from dataclasses import replace
from importlib.resources import files
from pathlib import Path

from ._files import atomic_write_text
from ._metrics.options import MetricsOptions
from ._render.headline import headline
from ._render.markdown import render
from ._source import HubSettings, Sources
from ._source.cache import SnapshotCache
from .errors import EXIT_OK
from .jobs import run_diff
from .testing.example import EXAMPLE_REPOS, example_dir, example_hub, example_specs
from .testing.gguf_head import converted_tensors, gguf_split
from .testing.specs import CommitSpec, RepoSpec, VirtualFile, load_census, quantized_copy
from .watch import run_watch

FLASH = "zai-org/GLM-5.3-Flash"


def _new_flash_revision() -> CommitSpec:
    base = example_dir() / "GLM-5.3-Flash"
    config = json.loads((base / "config.json").read_text())
    config["text_config"]["index_kpool"] = 8
    config["transformers_version"] = "5.13.0"
    return CommitSpec(
        {"config.json": (json.dumps(config, indent=2) + "\n").encode()},
        load_census((base / "census.tsv").read_text()),
        shards=48,
        title="Pool indexer keys 8:1",
        date="2026-11-29T12:00:00.000Z",
    )


def _lite_flash() -> CommitSpec:
    """GLM-5.3-Flash with 144 of its 288 routed experts: a new architecture in the family."""
    base = example_dir() / "GLM-5.3-Flash"
    config = json.loads((base / "config.json").read_text())
    config["text_config"]["n_routed_experts"] = 144
    expert = re.compile(r"\.experts\.(\d+)\.")
    tensors = [
        t
        for t in load_census((base / "census.tsv").read_text())
        if not ((m := expert.search(t[0])) and int(m.group(1)) >= 144)
    ]
    files = {"config.json": (json.dumps(config, indent=2) + "\n").encode()}
    return CommitSpec(
        files, tensors, shards=24, title="GLM-5.3-Flash-Lite release", date="2026-11-30T08:00:00.000Z"
    )


def _gguf_copy(source: CommitSpec) -> CommitSpec:
    """GLM-5.3 as llama.cpp's converter and ``gguf-split`` would publish it: a Q4_K_M-like mix in 9
    files under the Hub's 50 GB a file, the model card naming its source (``hubdiff.testing.gguf_head``)."""
    raw = source.files["config.json"]
    config = json.loads(raw if isinstance(raw, bytes) else raw.head)
    layers, heads = config["num_hidden_layers"], config["num_attention_heads"]
    nope, rope, v_dim = config["qk_nope_head_dim"], config["qk_rope_head_dim"], config["v_head_dim"]
    lora, arch = config["kv_lora_rank"], "glm-dsa"
    metadata = [
        ("general.architecture", arch),
        ("general.name", "GLM-5.3"),
        ("general.file_type", 15),  # LLAMA_FTYPE_MOSTLY_Q4_K_M
        ("general.quantization_version", 2),
        (f"{arch}.block_count", layers),
        (f"{arch}.context_length", config["max_position_embeddings"]),
        (f"{arch}.embedding_length", config["hidden_size"]),
        (f"{arch}.feed_forward_length", config["intermediate_size"]),
        (f"{arch}.leading_dense_block_count", config["first_k_dense_replace"]),
        (f"{arch}.expert_count", config["n_routed_experts"]),
        (f"{arch}.expert_used_count", config["num_experts_per_tok"]),
        (f"{arch}.expert_shared_count", config["n_shared_experts"]),
        (f"{arch}.expert_feed_forward_length", config["moe_intermediate_size"]),
        (f"{arch}.attention.head_count", heads),
        (f"{arch}.attention.head_count_kv", 1),  # the absorbed MLA: one latent K/V for every head
        (f"{arch}.attention.q_lora_rank", config["q_lora_rank"]),
        (f"{arch}.attention.kv_lora_rank", lora),
        (f"{arch}.attention.key_length", lora + rope),
        (f"{arch}.attention.value_length", lora),
        (f"{arch}.attention.key_length_mla", nope + rope),
        (f"{arch}.attention.value_length_mla", v_dim),
        (f"{arch}.attention.layer_norm_rms_epsilon", float(config["rms_norm_eps"])),
        (f"{arch}.attention.indexer.head_count", config["index_n_heads"]),
        (f"{arch}.attention.indexer.key_length", config["index_head_dim"]),
        (f"{arch}.attention.indexer.top_k", config["index_topk"]),
        (f"{arch}.rope.dimension_count", rope),
    ]
    tensors = converted_tensors(source, layers, heads, nope, v_dim)
    card = b"---\nbase_model: zai-org/GLM-5.3\nbase_model_relation: quantized\nlibrary_name: gguf\n---\n"
    files: dict[str, bytes | VirtualFile] = {"README.md": card + b"\n# GLM-5.3 GGUF\n"}
    files |= gguf_split("GLM-5.3-Q4_K_M", metadata, tensors, shards=9)
    return CommitSpec(files, title="GLM-5.3 GGUF", date="2026-11-30T09:00:00.000Z")


def serve(out: Path) -> int:
    """Keep the replica up and say how to point every README command at it, until Ctrl-C: so ``check``,
    ``watch``, ``pytest checks/`` and ``diff`` can all be tried without the real Hub."""
    cache = (out / "cache").resolve()
    clone = Path.cwd().resolve()
    if (
        clone / "checks" / "test_baselines.py"
    ).exists():  # a clone of hubdiff: the README's commands as written
        where, tries = clone, ["hubdiff diff examples/old examples/new", "pytest checks/"]
    else:  # elsewhere: the folder the example baseline was copied to, and hubdiff's own checks
        where, tries = out.resolve(), ["pytest HUBDIFF_CLONE/checks --baseline-dir baselines"]
    with example_hub() as hub:
        lines = [
            f"Hub replica serving {', '.join(EXAMPLE_REPOS)} at {hub.endpoint} (Ctrl-C to stop).",
            "In another terminal, paste:",
            "",
            f"export HUBDIFF_CACHE={shlex.quote(str(cache))}",
            f"export HF_ENDPOINT={hub.endpoint}",
            f"cd {shlex.quote(str(where))}",
            "hubdiff snapshot zai-org/GLM-5.3",
            "hubdiff diff zai-org/GLM-5.3 zai-org/GLM-5.3-Flash --kv-dtype fp8",
            "hubdiff check",
            "hubdiff watch",
            *tries,
        ]
        print("\n".join(lines), flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            print("\nstopped", flush=True)
    return EXIT_OK


def run_demo(args: argparse.Namespace) -> int:
    out = Path(args.output_dir)
    baselines = out / "baselines"
    baselines.mkdir(parents=True, exist_ok=True)
    shutil.copy(Path(str(files("hubdiff.baselines") / "glm-5.yaml")), baselines / "glm-5.yaml")
    if args.serve:
        return serve(out)
    with example_hub() as hub:
        print(f"Hub replica serving {', '.join(EXAMPLE_REPOS)} at {hub.endpoint}")
        sources = Sources(HubSettings(endpoint=hub.endpoint), SnapshotCache(out / "cache"))
        options = MetricsOptions(kv_dtype="fp8", context=1_048_576)

        print("\n1. The founding comparison (KV cache in FP8, 1,048,576 tokens)")
        for old, new, name in (
            ("zai-org/GLM-5", "zai-org/GLM-5.3", "glm-5-vs-glm-5.3"),
            ("zai-org/GLM-5.3", FLASH, "glm-5.3-vs-glm-5.3-flash"),
        ):
            report = run_diff(old, new, sources, options)
            atomic_write_text(out / f"{name}.md", render(report))
            print(f"   {headline(report.results[0])}\n   -> {out / (name + '.md')}")

        print("\n2. hubdiff watch over baselines/glm-5.yaml")
        first = run_watch([baselines / "glm-5.yaml"], sources, output_dir=out)
        print(f"   {first.summary_line()}")

        sha = hub.push(FLASH, _new_flash_revision())
        print(f"\n3. {FLASH} gets a new revision {sha[:12]}: indexer keys pooled 8:1 instead of 4:1")

        print("\n4. hubdiff watch --update")
        second = run_watch([baselines / "glm-5.yaml"], sources, update=True, output_dir=out)
        for results in second.results.values():
            for result in results:
                print(f"   {headline(result)}")
                for claim in result.broken_claims:
                    print(
                        f"   claim {claim.claim.name}: stated {claim.claim.stated}, measured {claim.measured_text}"
                    )
        print(f"   {second.summary_line()}")
        for paths in second.files.values():
            print(f"   report: {paths['report']}\n   PR body: {paths.get('pr_body', '-')}")
        print(f"   baseline re-recorded: {baselines / 'glm-5.yaml'} (claims and notes kept)")
        glm53 = next(spec for spec in example_specs() if spec.repo_id == "zai-org/GLM-5.3").commits[0]
        fp8 = replace(quantized_copy(glm53, "fp8", title="GLM-5.3 FP8"), shards=96)  # ~8 GB shards
        hub.add(RepoSpec("zai-org/GLM-5.3-FP8", [fp8]))
        hub.add(RepoSpec("zai-org/GLM-5.3-Flash-Lite", [_lite_flash()]))
        hub.add(RepoSpec("zai-org/GLM-5.3-GGUF", [_gguf_copy(glm53)]))
        print(
            "\n5. zai-org publishes GLM-5.3-FP8, GLM-5.3-Flash-Lite and GLM-5.3-GGUF (a Q4_K_M in 9 files, "
            "its card: base_model zai-org/GLM-5.3, quantized); hubdiff watch --update"
        )
        third = run_watch([baselines / "glm-5.yaml"], sources, update=True, output_dir=out / "releases")
        for results in third.results.values():
            for result in results:
                print(f"   {headline(result)}")
        print(f"   {third.summary_line()}")
        for paths in third.files.values():
            print(f"   report: {paths['report']}\n   PR body: {paths.get('pr_body', '-')}")
        sent = sum(r.bytes_sent for r in hub.log)
        print(
            f"\n{len(hub.log):,} requests to the replica, {sent:,} bytes received: configs, indexes, "
            "safetensors and GGUF headers only"
        )
    return EXIT_OK
