"""llama.cpp itself as the oracle of hubdiff's GGUF KV-cache figures (opt-in: it builds llama.cpp).

hubdiff computes what llama.cpp allocates for a GGUF model's memory from the header alone
(``hubdiff._metrics.gguf_kv``, every rule cited to llama.cpp's source). This script asks llama.cpp:
for each case below it writes a GGUF header (tensor infos whose data is never read: the file is sparse),
has ``tests/llama_cpp/kv_probe.cpp`` load it with ``no_alloc`` and create a context with the settings
given, and records the K, V, recurrent r and s bytes of llama.cpp's caches with the header's metadata in
``tests/data/gguf/llama_cpp_kv.json``. ``tests/test_gguf_kv_llama_cpp.py`` holds hubdiff to every
recorded row, in the suite, without llama.cpp.

The tensors each architecture needs are found by asking llama.cpp: a missing tensor is added, a tensor
of the wrong shape is given the shape llama.cpp expects, until the model loads.

Usage::

    python scripts/llama_cpp_kv.py --llama-cpp PATH

PATH is llama.cpp's source: ``vendor/llama.cpp`` of the llama-cpp-python sdist on PyPI
(``pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36``), the tree gguf_kv.py cites. It
is built there (``build/``, cmake, the ``llama`` library only) if not built yet, which takes minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PROBE = ROOT / "tests" / "llama_cpp" / "kv_probe.cpp"
TABLE = ROOT / "tests" / "data" / "gguf" / "llama_cpp_kv.json"
sys.path.insert(0, str(ROOT / "src"))

Metadata = list[tuple[Any, ...]]
VOCAB = 64


def _base(arch: str, layers: int, embd: int, heads: int, kv_heads: Any, context: int) -> Metadata:
    tokens = [f"t{i}" for i in range(VOCAB)]
    return [
        ("general.architecture", arch),
        ("general.name", arch),
        (f"{arch}.block_count", layers),
        (f"{arch}.context_length", context),
        (f"{arch}.embedding_length", embd),
        (f"{arch}.feed_forward_length", 2 * embd),
        (f"{arch}.attention.head_count", heads),
        (f"{arch}.attention.head_count_kv", kv_heads),
        (f"{arch}.attention.layer_norm_rms_epsilon", 1e-5),
        ("tokenizer.ggml.model", "llama"),
        ("tokenizer.ggml.tokens", tokens),
        ("tokenizer.ggml.scores", [0.0] * VOCAB),
        ("tokenizer.ggml.token_type", [1] * VOCAB),
    ]


# name -> the header's metadata: each a layout hubdiff models (GQA, per-layer heads, sliding windows,
# MLA, hybrid recurrent, pure recurrent)
CASES: dict[str, Callable[[], Metadata]] = {
    "llama-gqa": lambda: _base("llama", 4, 256, 8, 2, 4096),
    "qwen2-gqa": lambda: _base("qwen2", 3, 256, 8, 4, 4096),
    "gemma3-swa": lambda: [
        *_base("gemma3", 12, 256, 4, 2, 8192),
        ("gemma3.attention.key_length", 128),
        ("gemma3.attention.value_length", 128),
        ("gemma3.attention.sliding_window", 1024),
    ],
    "gemma2-swa": lambda: [
        *_base("gemma2", 4, 256, 4, 2, 8192),
        ("gemma2.attention.key_length", 64),
        ("gemma2.attention.value_length", 64),
        ("gemma2.attention.sliding_window", 512),
    ],
    "deepseek2-mla": lambda: [
        *_base("deepseek2", 3, 256, 4, 1, 4096),
        ("deepseek2.attention.key_length", 96),
        ("deepseek2.attention.value_length", 64),
        ("deepseek2.attention.key_length_mla", 48),
        ("deepseek2.attention.value_length_mla", 32),
        ("deepseek2.attention.kv_lora_rank", 64),
        ("deepseek2.rope.dimension_count", 32),
        ("deepseek2.attention.q_lora_rank", 32),
        ("deepseek2.leading_dense_block_count", 1),
        ("deepseek2.expert_feed_forward_length", 64),
        ("deepseek2.expert_count", 4),
        ("deepseek2.expert_used_count", 2),
        ("deepseek2.expert_shared_count", 1),
        ("deepseek2.nextn_predict_layers", 1),
    ],
    "granitehybrid-mamba2": lambda: [
        *_base("granitehybrid", 4, 256, 8, [0, 0, 0, 2], 8192),
        ("granitehybrid.ssm.conv_kernel", 4),
        ("granitehybrid.ssm.inner_size", 512),
        ("granitehybrid.ssm.state_size", 16),
        ("granitehybrid.ssm.group_count", 1),
        ("granitehybrid.ssm.time_step_rank", 8),
    ],
    "mamba": lambda: [
        *_base("mamba", 2, 128, 0, 0, 4096),
        ("mamba.ssm.conv_kernel", 4),
        ("mamba.ssm.inner_size", 256),
        ("mamba.ssm.state_size", 16),
        ("mamba.ssm.time_step_rank", 8),
    ],
}
# tensors a case starts from: DeepSeek-2's loader takes a file without blk.0.attn_norm for an MTP-only one
# and then requires none of the trunk's tensors (models/deepseek2.cpp, mtp_only)
# and a Mamba convolution's bias is optional to the loader but added by the graph (mamba-base.cpp)
SEEDS: dict[str, dict[str, tuple[int, ...]]] = {
    "deepseek2-mla": {"blk.0.attn_norm.weight": (256,)},
    "granitehybrid-mamba2": {f"blk.{i}.ssm_conv1d.bias": (512 + 2 * 16,) for i in range(3)},
    "mamba": {f"blk.{i}.ssm_conv1d.bias": (256,) for i in range(2)},
}
# (kv type, n_ctx, n_seq, swa_full, n_ubatch): llama.cpp's defaults and the settings that change cells
SETTINGS: list[tuple[str, int, int, bool, int]] = [
    ("f16", 4096, 1, False, 512),
    ("q8_0", 1000, 1, False, 512),
    ("q4_0", 3000, 2, False, 512),
    ("f16", 4096, 1, True, 512),
    ("f16", 2048, 1, False, 256),
]

_MISSING = re.compile(r"missing tensor '([^']+)'|tensor '([^']+)' not found")
_SHAPE = re.compile(r"tensor '([^']+)' has wrong shape; expected\s*\[?\s*(\d+(?:,\s*\d+)*)")


def build(source: Path) -> Path:
    """The probe, built against llama.cpp's ``llama`` library (cmake, once)."""
    build_dir = source / "build"
    libs = list(build_dir.rglob("libllama.a"))
    if not libs:
        flags = ["-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_CURL=OFF"]
        flags += [f"-D{o}=OFF" for o in ("LLAMA_BUILD_TESTS", "LLAMA_BUILD_EXAMPLES", "LLAMA_BUILD_SERVER")]
        flags += ["-DLLAMA_BUILD_TOOLS=OFF", "-DGGML_NATIVE=OFF"]
        subprocess.run(["cmake", "-S", str(source), "-B", str(build_dir), *flags], check=True)
        jobs = str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "llama", "-j", jobs], check=True)
        libs = list(build_dir.rglob("libllama.a"))
    probe = build_dir / "hubdiff-kv-probe"
    if not probe.exists() or probe.stat().st_mtime < PROBE.stat().st_mtime:
        archives = [*libs, *sorted(build_dir.rglob("libggml*.a"), key=lambda p: p.name != "libggml.a")]
        includes = [source / "include", source / "src", source / "ggml" / "include"]
        command = ["g++", "-std=c++17", "-O1", str(PROBE), "-o", str(probe)]
        command += [f"-I{i}" for i in includes]
        # the ggml archives reference each other: grouped, so the linker resolves them in any order
        command += ["-Wl,--start-group", *map(str, archives), "-Wl,--end-group", "-lpthread", "-fopenmp"]
        subprocess.run(command, check=True)
    return probe


def write(path: Path, metadata: Metadata, tensors: dict[str, tuple[int, ...]]) -> None:
    """The header, then a sparse file as long as the data would be (llama.cpp checks the bounds)."""
    from hubdiff.testing.gguf_head import gguf_head

    head, data = gguf_head(metadata, [(name, "F32", shape) for name, shape in tensors.items()])
    with path.open("wb") as f:
        f.write(head)
        f.truncate(len(head) + data)


def run(
    probe: Path, model: Path, setting: tuple[str, int, int, bool, int]
) -> subprocess.CompletedProcess[str]:
    kind, n_ctx, n_seq, swa_full, n_ubatch = setting
    args = [str(probe), str(model), str(n_ctx), str(n_seq), kind, kind, str(int(swa_full)), str(n_ubatch)]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def tensors_for(probe: Path, folder: Path, name: str, metadata: Metadata) -> dict[str, tuple[int, ...]]:
    """The tensors llama.cpp needs for this header, asked of llama.cpp one error at a time."""
    tensors: dict[str, tuple[int, ...]] = dict(SEEDS.get(name, {}))
    model = folder / f"{name}.gguf"
    for _ in range(2000):
        write(model, metadata, tensors)
        done = run(probe, model, SETTINGS[0])
        if done.returncode == 0:
            return tensors
        if missing := _MISSING.search(done.stderr):
            tensors[missing.group(1) or missing.group(2)] = (1,)
        elif shape := _SHAPE.search(done.stderr):
            ne = [int(d) for d in shape.group(2).split(",")]
            tensors[shape.group(1)] = tuple(reversed(ne))  # ggml's ne is innermost first
        else:
            raise SystemExit(f"{name}: llama.cpp refuses the model: {done.stderr.strip()[-2000:]}")
    raise SystemExit(f"{name}: no loadable set of tensors found")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llama-cpp", type=Path, required=True, help="llama.cpp's source tree")
    parser.add_argument("--origin", help="where the tree came from (default: the sdist's PKG-INFO above it)")
    args = parser.parse_args()
    from hubdiff._source.gguf import parse_gguf

    probe = build(args.llama_cpp.resolve())
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, case in CASES.items():
            metadata = case()
            tensors = tensors_for(probe, Path(tmp), name, metadata)
            model = Path(tmp) / f"{name}.gguf"
            write(model, metadata, tensors)
            data = model.read_bytes()[: 1 << 20]
            read = {k: v for k, v in parse_gguf(data).metadata.items() if not k.startswith("tokenizer.")}
            for setting in SETTINGS:
                done = run(probe, model, setting)
                if done.returncode != 0:
                    raise SystemExit(f"{name} {setting}: {done.stderr.strip()[-2000:]}")
                measured = json.loads(done.stdout.strip().splitlines()[-1])
                kind, n_ctx, n_seq, swa_full, n_ubatch = setting
                rows.append(
                    {
                        "case": name,
                        "metadata": read,
                        "settings": {
                            "kv_dtype": kind,
                            "n_ctx": n_ctx,
                            "n_seq": n_seq,
                            "swa_full": swa_full,
                            "n_ubatch": n_ubatch,
                        },
                        "llama_cpp": measured,
                    }
                )
                print(name, setting, measured)
    commit = args.origin or _commit(args.llama_cpp)
    body = ",\n".join("    " + json.dumps(r, sort_keys=True) for r in rows)
    TABLE.write_text(f'{{\n  "llama_cpp": {json.dumps(commit)},\n  "rows": [\n{body}\n  ]\n}}\n')
    print(f"{len(rows)} rows written to {TABLE.relative_to(ROOT)}")
    return 0


def _commit(source: Path) -> str:
    """Where the oracle's source came from: the sdist's version file names the tree."""
    for candidate in (source.parent.parent / "PKG-INFO", source / "PKG-INFO"):
        if candidate.is_file():
            version = re.search(r"^Version: (.+)$", candidate.read_text(), re.M)
            if version:
                return f"llama-cpp-python {version.group(1)} vendor/llama.cpp"
    return str(source)


if __name__ == "__main__":
    raise SystemExit(main())
