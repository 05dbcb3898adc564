"""A safetensors release against a GGUF of it: every tensor paired by name, shapes and types compared,
parameters reconciled, chat templates compared.

Names: the llama-family rules of gguf-py's ``TensorNameMap`` (``gguf-py/gguf/tensor_mapping.py`` and
``MODEL_TENSORS`` in ``gguf-py/gguf/constants.py``, gguf-py as vendored by llama-cpp-python 0.3.36),
written out here for the names llama-family checkpoints use (gguf is a test dependency of hubdiff, not
a run-time one): ``model.embed_tokens`` <-> ``token_embd``, ``lm_head`` <-> ``output``, ``model.norm``
<-> ``output_norm``, per layer ``input_layernorm`` <-> ``attn_norm``, ``post_attention_layernorm`` <->
``ffn_norm`` (Gemma 2/3's four norms: ``attn_post_norm``, ``ffn_norm``, ``ffn_post_norm``),
``self_attn.{q,k,v,o}_proj`` <-> ``attn_q``, ``attn_k``, ``attn_v``, ``attn_output``, ``q_norm``/``k_norm``
<-> ``attn_q_norm``/``attn_k_norm``, ``mlp.{gate,up,down}_proj`` <-> ``ffn_gate``, ``ffn_up``, ``ffn_down``,
the router ``mlp.gate`` <-> ``ffn_gate_inp``, ``e_score_correction_bias`` <-> ``exp_probs_b``, shared
experts <-> ``ffn_*_shexp`` and every routed expert ``mlp.experts.E.*_proj`` (Mixtral:
``block_sparse_moe.experts.E.w1/w3/w2``) stacked into one ``ffn_*_exps`` of (experts, rows, columns).
Multi-head latent attention (the deepseek2 and glm-dsa maps): ``q_a_proj``, ``q_a_layernorm``, ``q_b_proj``,
``kv_a_proj_with_mqa``, ``kv_a_layernorm`` <-> ``attn_q_a``, ``attn_q_a_norm``, ``attn_q_b``,
``attn_kv_a_mqa``, ``attn_kv_a_norm``; ``kv_b_proj`` split by the converter into ``attn_k_b`` and
``attn_v_b`` (``_split_kv_b``); the DSA indexer's ``k_norm``, ``weights_proj``, ``wk``, ``wq_b`` <->
``indexer.k_norm``, ``indexer.proj``, ``indexer.attn_k``, ``indexer.attn_q_b``.

Shapes: a GGUF stores dimensions innermost first (ggml's ``ne``); ``TensorInfo.shape`` reverses them,
so it is compared with the safetensors shape as is. Parameters are elements, which quantization does
not change: a count that differs is explained term by term (``rope_freqs`` added by the converter, a
tied ``lm_head`` dropped, MTP layers dropped, tensors missing or only on one side, reshapes).

Differences (exit 1): a tensor missing from the GGUF, one only in the GGUF that no converter rule
explains, a tensor the rules do not map, a shape that differs, chat templates that differ. The
quantization is reported (per tensor group, a strip per layer) but is never a difference: it is what a
GGUF is for.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .._metrics.gguf import Variant
from .._source.gguf import TensorInfo
from ..snapshot import Snapshot, Tensor

_PREFIXES = (
    ("model.language_model.", "model."),
    ("language_model.model.", "model."),
    ("language_model.lm_head.", "lm_head."),
)
_LAYER = r"model\.layers\.(?P<n>\d+)\."
# (pattern on the HF name, the GGUF name; {n} the layer, {s} the suffix weight/bias)
_RULES: tuple[tuple[str, str], ...] = (
    (r"model\.embed_tokens\.(?P<s>weight)", "token_embd.{s}"),
    (r"lm_head\.(?P<s>weight|bias)", "output.{s}"),
    (r"model\.norm\.(?P<s>weight|bias)", "output_norm.{s}"),
    (_LAYER + r"input_layernorm\.(?P<s>weight|bias)", "blk.{n}.attn_norm.{s}"),
    (_LAYER + r"self_attn\.q_proj\.(?P<s>weight|bias)", "blk.{n}.attn_q.{s}"),
    (_LAYER + r"self_attn\.k_proj\.(?P<s>weight|bias)", "blk.{n}.attn_k.{s}"),
    (_LAYER + r"self_attn\.v_proj\.(?P<s>weight|bias)", "blk.{n}.attn_v.{s}"),
    (_LAYER + r"self_attn\.o_proj\.(?P<s>weight|bias)", "blk.{n}.attn_output.{s}"),
    (_LAYER + r"self_attn\.q_norm\.(?P<s>weight)", "blk.{n}.attn_q_norm.{s}"),
    (_LAYER + r"self_attn\.k_norm\.(?P<s>weight)", "blk.{n}.attn_k_norm.{s}"),
    (_LAYER + r"mlp\.gate_proj\.(?P<s>weight|bias)", "blk.{n}.ffn_gate.{s}"),
    (_LAYER + r"mlp\.up_proj\.(?P<s>weight|bias)", "blk.{n}.ffn_up.{s}"),
    (_LAYER + r"mlp\.down_proj\.(?P<s>weight|bias)", "blk.{n}.ffn_down.{s}"),
    (_LAYER + r"(?:mlp|block_sparse_moe)\.gate\.(?P<s>weight)", "blk.{n}.ffn_gate_inp.{s}"),
    (_LAYER + r"mlp\.gate\.e_score_correction_(?P<s>bias)", "blk.{n}.exp_probs_b.{s}"),
    (_LAYER + r"mlp\.shared_experts?\.gate_proj\.(?P<s>weight)", "blk.{n}.ffn_gate_shexp.{s}"),
    (_LAYER + r"mlp\.shared_experts?\.up_proj\.(?P<s>weight)", "blk.{n}.ffn_up_shexp.{s}"),
    (_LAYER + r"mlp\.shared_experts?\.down_proj\.(?P<s>weight)", "blk.{n}.ffn_down_shexp.{s}"),
    (_LAYER + r"mlp\.shared_expert_gate\.(?P<s>weight)", "blk.{n}.ffn_gate_inp_shexp.{s}"),
    # multi-head latent attention (DeepSeek-V2/V3, GLM-5) and the DSA indexer (DeepSeek-V3.2, GLM-5):
    # TensorNameMap for deepseek2 and glm-dsa. kv_b is split by the converter (``_split_kv_b``)
    (_LAYER + r"self_attn\.q_a_proj\.(?P<s>weight)", "blk.{n}.attn_q_a.{s}"),
    (_LAYER + r"self_attn\.q_a_layernorm\.(?P<s>weight)", "blk.{n}.attn_q_a_norm.{s}"),
    (_LAYER + r"self_attn\.q_b_proj\.(?P<s>weight)", "blk.{n}.attn_q_b.{s}"),
    (_LAYER + r"self_attn\.kv_a_proj_with_mqa\.(?P<s>weight)", "blk.{n}.attn_kv_a_mqa.{s}"),
    (_LAYER + r"self_attn\.kv_a_layernorm\.(?P<s>weight)", "blk.{n}.attn_kv_a_norm.{s}"),
    (_LAYER + r"self_attn\.kv_b_proj\.(?P<s>weight)", "blk.{n}.attn_kv_b.{s}"),
    (_LAYER + r"self_attn\.indexer\.k_norm\.(?P<s>weight|bias)", "blk.{n}.indexer.k_norm.{s}"),
    (_LAYER + r"self_attn\.indexer\.weights_proj\.(?P<s>weight)", "blk.{n}.indexer.proj.{s}"),
    (_LAYER + r"self_attn\.indexer\.wk\.(?P<s>weight)", "blk.{n}.indexer.attn_k.{s}"),
    (_LAYER + r"self_attn\.indexer\.wq_b\.(?P<s>weight)", "blk.{n}.indexer.attn_q_b.{s}"),
)
_NORMS_LLAMA = ((_LAYER + r"post_attention_layernorm\.(?P<s>weight|bias)", "blk.{n}.ffn_norm.{s}"),)
_NORMS_GEMMA = (
    (_LAYER + r"post_attention_layernorm\.(?P<s>weight)", "blk.{n}.attn_post_norm.{s}"),
    (_LAYER + r"pre_feedforward_layernorm\.(?P<s>weight)", "blk.{n}.ffn_norm.{s}"),
    (_LAYER + r"post_feedforward_layernorm\.(?P<s>weight)", "blk.{n}.ffn_post_norm.{s}"),
)
# routed experts, stacked: (pattern, the GGUF name of the stack)
_EXPERTS = (
    (
        _LAYER + r"(?:mlp|block_sparse_moe)\.experts\.(?P<e>\d+)\.(?:gate_proj|w1)\.weight",
        "blk.{n}.ffn_gate_exps.weight",
    ),
    (
        _LAYER + r"(?:mlp|block_sparse_moe)\.experts\.(?P<e>\d+)\.(?:up_proj|w3)\.weight",
        "blk.{n}.ffn_up_exps.weight",
    ),
    (
        _LAYER + r"(?:mlp|block_sparse_moe)\.experts\.(?P<e>\d+)\.(?:down_proj|w2)\.weight",
        "blk.{n}.ffn_down_exps.weight",
    ),
)
CONVERTER_ADDED = {"rope_freqs.weight": "rope frequency factors, computed by the converter from rope_scaling"}
_BLK = re.compile(r"^blk\.(\d+)\.(.+)$")
# one character a ggml type in the per-layer strip
_CHARS = {
    "F32": "F",
    "F16": "H",
    "BF16": "B",
    "Q8_0": "8",
    "Q6_K": "6",
    "Q5_K": "5",
    "Q5_0": "5",
    "Q4_K": "4",
    "Q4_0": "4",
    "Q3_K": "3",
    "Q2_K": "2",
    "MXFP4": "m",
    "IQ4_XS": "x",
    "IQ4_NL": "n",
    "IQ3_XXS": "c",
    "IQ3_S": "s",
    "IQ2_XXS": "a",
    "IQ2_XS": "b",
    "IQ2_S": "d",
    "IQ1_S": "1",
    "IQ1_M": "i",
}


@dataclass(frozen=True)
class Pair:
    """A source tensor (or a stack of experts) and its GGUF name."""

    gguf: str
    sources: tuple[Tensor, ...]
    shape: tuple[int, ...]  # the source shape (experts: stacked, outermost the expert)
    dtype: str

    @property
    def elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass
class VariantDiff:
    name: str
    source_parameters: int = 0
    gguf_parameters: int = 0
    missing: list[Pair] = field(default_factory=list)  # mapped, not in the GGUF
    unmapped: list[Tensor] = field(default_factory=list)  # no rule maps them
    only_gguf: list[tuple[str, tuple[int, ...], int, str]] = field(
        default_factory=list
    )  # name, shape, elements, why
    reshaped: list[tuple[Pair, tuple[int, ...]]] = field(default_factory=list)
    dropped: list[tuple[str, int, str]] = field(default_factory=list)  # what, elements, why (expected)
    types: dict[str, Counter[tuple[str, str]]] = field(default_factory=dict)  # group -> (src, gguf) -> n
    type_layers: dict[str, dict[int, str]] = field(default_factory=dict)  # group -> layer -> ggml type
    template: str | None = None  # "same", "differ: ...", or why not compared

    @property
    def differs(self) -> bool:
        unexplained_only = any(why == "" for *_, why in self.only_gguf)
        template_differs = self.template is not None and self.template.startswith("differ")
        return bool(self.missing or self.unmapped or self.reshaped or unexplained_only or template_differs)

    def to_json(self) -> dict[str, Any]:
        return {
            "variant": self.name,
            "differs": self.differs,
            "parameters": {"source": self.source_parameters, "gguf": self.gguf_parameters},
            "missing": [p.gguf for p in self.missing],
            "unmapped": [t.name for t in self.unmapped],
            "only_in_gguf": [{"name": n, "shape": list(s), "why": why} for n, s, _, why in self.only_gguf],
            "reshaped": [
                {"name": p.gguf, "source": list(p.shape), "gguf": list(g)} for p, g in self.reshaped
            ],
            "dropped": [{"what": w, "elements": e, "why": why} for w, e, why in self.dropped],
            "types": {
                g: [{"source": s, "gguf": q, "tensors": n} for (s, q), n in sorted(c.items())]
                for g, c in sorted(self.types.items())
            },
            "chat_template": self.template,
        }


def _normal(name: str) -> str:
    for old, new in _PREFIXES:
        if name.startswith(old):
            return new + name[len(old) :]
    return name


def _config_value(config: dict[str, Any], key: str) -> Any:
    if key in config:
        return config[key]
    text = config.get("text_config")
    return text.get(key) if isinstance(text, dict) else None


def pair_tensors(tensors: Iterable[Tensor]) -> tuple[list[Pair], list[Tensor]]:
    """The source tensors paired with GGUF names (experts stacked), and those no rule maps."""
    rows = list(tensors)
    gemma = any("pre_feedforward_layernorm" in t.name for t in rows)
    rules = [(re.compile(p), g) for p, g in (*_RULES, *(_NORMS_GEMMA if gemma else _NORMS_LLAMA))]
    experts = [(re.compile(p), g) for p, g in _EXPERTS]
    pairs: list[Pair] = []
    stacks: dict[str, list[tuple[int, Tensor]]] = defaultdict(list)
    unmapped: list[Tensor] = []
    for t in rows:
        name = _normal(t.name)
        for pattern, target in rules:
            m = pattern.fullmatch(name)
            if m:
                pairs.append(Pair(target.format(**m.groupdict()), (t,), tuple(t.shape), t.dtype))
                break
        else:
            for pattern, target in experts:
                m = pattern.fullmatch(name)
                if m:
                    stacks[target.format(n=m.group("n"))].append((int(m.group("e")), t))
                    break
            else:
                unmapped.append(t)
    for target, members in stacks.items():
        members.sort(key=lambda x: x[0])
        first = members[0][1]
        same = all(tuple(t.shape) == tuple(first.shape) and t.dtype == first.dtype for _, t in members)
        numbered = [e for e, _ in members] == list(range(len(members)))
        if not same or not numbered:
            unmapped.extend(t for _, t in members)  # a stack llama.cpp could not make from these
            continue
        shape = (len(members), *first.shape)
        pairs.append(Pair(target, tuple(t for _, t in members), shape, first.dtype))
    return pairs, unmapped


def compare_variant(snapshot: Snapshot, variant: Variant, template: str | None = None) -> VariantDiff:
    """``snapshot`` (safetensors) against one GGUF variant."""
    out = VariantDiff(variant.name)
    tensors = snapshot.tensors
    out.source_parameters = sum(t.elements for t in tensors)
    out.gguf_parameters = variant.parameters
    gguf = {t.name: t for t, _ in variant.tensors()}
    pairs, unmapped = pair_tensors(tensors)
    layers = _config_value(snapshot.config, "num_hidden_layers")
    tied = bool(_config_value(snapshot.config, "tie_word_embeddings"))
    paired: set[str] = set()
    for p in pairs:
        g = gguf.get(p.gguf)
        split = _split_kv_b(p, gguf) if g is None else None
        if split is not None:  # attn_k_b and attn_v_b in its place, as the converter writes them
            for part in split:
                paired.add(part.name)
                group, layer = _group(part.name)
                out.types.setdefault(group, Counter())[(p.dtype, part.type.name)] += 1
                if layer is not None:
                    out.type_layers.setdefault(group, {})[layer] = part.type.name
            continue
        if g is None:
            why = _expected_drop(p, layers, tied)
            if why:
                out.dropped.append((", ".join(t.name for t in p.sources[:1]) + _more(p), p.elements, why))
            else:
                out.missing.append(p)
            continue
        paired.add(p.gguf)
        if tuple(g.shape) != p.shape:
            out.reshaped.append((p, tuple(g.shape)))
        group, layer = _group(p.gguf)
        out.types.setdefault(group, Counter())[(p.dtype, g.type.name)] += 1
        if layer is not None:
            out.type_layers.setdefault(group, {})[layer] = g.type.name
    for t in unmapped:
        why = _expected_drop_name(_normal(t.name), layers)
        if why:
            out.dropped.append((t.name, t.elements, why))
        else:
            out.unmapped.append(t)
    for name, g in sorted(gguf.items()):
        if name in paired:
            continue
        why = CONVERTER_ADDED.get(name, "")
        if ".nextn." in name:
            why = "an MTP (nextn) tensor the converter writes under its own name"
        out.only_gguf.append((name, tuple(g.shape), g.elements, why))
        group, layer = _group(name)
        if layer is not None:
            out.type_layers.setdefault(group, {})[layer] = g.type.name
    gguf_template = variant.metadata.get("tokenizer.chat_template")
    out.template = _templates(template, gguf_template if isinstance(gguf_template, str) else None)
    return out


def _split_kv_b(p: Pair, gguf: dict[str, TensorInfo]) -> tuple[TensorInfo, TensorInfo] | None:
    """MLA's ``kv_b_proj`` (heads x (nope + v), kv_lora) as llama.cpp's converter writes it for the
    absorbed attention (``DeepseekV2Model.modify_tensors``): ``attn_k_b`` (heads, kv_lora, nope), the K
    part transposed, and ``attn_v_b`` (heads, v, kv_lora). None unless both are there and together hold
    exactly the source's rows and columns."""
    if not p.gguf.endswith(".attn_kv_b.weight") or len(p.shape) != 2:
        return None
    k = gguf.get(p.gguf.replace(".attn_kv_b.", ".attn_k_b."))
    v = gguf.get(p.gguf.replace(".attn_kv_b.", ".attn_v_b."))
    if k is None or v is None or len(k.shape) != 3 or len(v.shape) != 3:
        return None
    (heads, lora, nope), (v_heads, v_dim, v_lora) = k.shape, v.shape
    rows, columns = p.shape
    if heads != v_heads or lora != v_lora or lora != columns or heads * (nope + v_dim) != rows:
        return None
    return k, v


def _more(p: Pair) -> str:
    return f" and {len(p.sources) - 1} more (stacked)" if len(p.sources) > 1 else ""


def _expected_drop(p: Pair, layers: Any, tied: bool) -> str:
    if p.gguf == "output.weight" and tied:
        return "tied to the embeddings (tie_word_embeddings): llama.cpp uses token_embd"
    m = _BLK.match(p.gguf)
    if m and isinstance(layers, int) and int(m.group(1)) >= layers:
        return f"MTP layer (index {m.group(1)} >= num_hidden_layers {layers}): not converted"
    return ""


def _expected_drop_name(name: str, layers: Any) -> str:
    if name.endswith(("weight_scale_inv", ".weight_scale", ".input_scale")):
        return "a quantization scale of the source: the converter dequantizes, then quantizes to ggml types"
    if name.endswith("rotary_emb.inv_freq"):
        return "a RoPE buffer: llama.cpp computes the frequencies"
    m = re.match(r"model\.layers\.(\d+)\.", name)
    if m and isinstance(layers, int) and int(m.group(1)) >= layers:
        return f"MTP layer (index {m.group(1)} >= num_hidden_layers {layers}): not converted"
    if name.startswith(("mtp.", "model.mtp.")):
        return "MTP module: not converted"
    return ""


def _group(name: str) -> tuple[str, int | None]:
    m = _BLK.match(name)
    return (m.group(2), int(m.group(1))) if m else (name, None)


def _templates(source: str | None, gguf: str | None) -> str | None:
    if gguf is None and source is None:
        return None
    if gguf is None:
        return "not compared: the GGUF has no tokenizer.chat_template"
    if source is None:
        return "not compared: the source has no chat template"
    if source == gguf:
        return "same"
    a, b = source.split("\n"), gguf.split("\n")
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        if x != y:
            return f"differ: from line {i + 1} (source {_clip(x)}, GGUF {_clip(y)})"
    return "differ"  # pragma: no cover - equal lines are equal texts


def _clip(line: str | None) -> str:
    if line is None:
        return "ends"
    return repr(line if len(line) <= 60 else line[:57] + "...")


def _ranges(numbers: Iterable[int]) -> str:
    out: list[str] = []
    run: list[int] = []
    for n in sorted(numbers):
        if run and n == run[-1] + 1:
            run.append(n)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [n]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


def _named(names: list[str]) -> list[str]:
    """Names with ``blk.N.`` (or ``model.layers.N.``) folded into one line per group with the layers."""
    groups: dict[str, list[int]] = defaultdict(list)
    plain: list[str] = []
    for name in names:
        m = re.match(r"^(blk\.|model\.layers\.)(\d+)\.(.+)$", name)
        if m:
            groups[f"{m.group(1)}N.{m.group(3)}"].append(int(m.group(2)))
        else:
            plain.append(name)
    return plain + [f"{g} (N = {_ranges(ns)})" for g, ns in sorted(groups.items())]


def strip(diff: VariantDiff) -> list[str]:
    """The quantization a layer, a line a tensor group: one character a layer (legend after)."""
    if not diff.type_layers:
        return []
    last = max(max(layers) for layers in diff.type_layers.values())
    used: set[str] = set()
    lines = []
    width = max(len(g) for g in diff.type_layers)
    for group, layers in sorted(diff.type_layers.items()):
        chars = []
        for il in range(last + 1):
            kind = layers.get(il)
            if kind:
                used.add(kind)
            chars.append(_CHARS.get(kind, "?") if kind else ".")
        lines.append(f"    {group:<{width}} {''.join(chars)}")
    legend = ", ".join(f"{_CHARS.get(k, '?')} {k}" for k in sorted(used))
    return [f"  quantization by layer (0-{last}; {legend}; . none):", *lines]


def diff_text(source_label: str, gguf_label: str, diffs: list[VariantDiff]) -> str:
    lines = [f"{source_label} -> {gguf_label}  (safetensors against GGUF)"]
    for d in diffs:
        lines.append("")
        lines.append(f"{d.name}: " + ("differs" if d.differs else "every tensor accounted for"))
        delta = d.gguf_parameters - d.source_parameters
        if delta == 0:
            lines.append(
                f"  parameters: {d.source_parameters:,} in both (quantization changes bytes, not elements)"
            )
        else:
            lines.append(
                f"  parameters: source {d.source_parameters:,}, GGUF {d.gguf_parameters:,} ({delta:+,}), because:"
            )
            for what, n, why in d.dropped:
                lines.append(f"    dropped {what}: {-n:+,} ({why})")
            for name, _, n, why in d.only_gguf:
                lines.append(f"    added {name}: {n:+,} ({why or 'no source tensor maps to it'})")
            for p in d.missing:
                lines.append(f"    missing {p.gguf}: {-p.elements:+,}")
            for t in d.unmapped:
                lines.append(f"    not mapped {t.name}: {-t.elements:+,}")
            for p, g in d.reshaped:
                n = 1
                for x in g:
                    n *= x
                lines.append(f"    reshaped {p.gguf}: {n - p.elements:+,}")
        if d.missing:
            lines.append("  missing from the GGUF:")
            lines += [f"    {n}" for n in _named([p.gguf for p in d.missing])]
        if d.unmapped:
            lines.append("  source tensors no rule maps:")
            lines += [f"    {n}" for n in _named([t.name for t in d.unmapped])]
        unexplained = [n for n, _, _, why in d.only_gguf if not why]
        if unexplained:
            lines.append("  only in the GGUF:")
            lines += [f"    {n}" for n in _named(unexplained)]
        for p, g in d.reshaped:
            lines.append(f"  reshaped {p.gguf}: source {list(p.shape)}, GGUF {list(g)}")
        lines.append("  types (source -> GGUF):")
        for group, counts in sorted(d.types.items()):
            mix = ", ".join(f"{s} -> {q} x{n}" for (s, q), n in sorted(counts.items()))
            layers = d.type_layers.get(group, {})
            kinds = Counter(layers.values())
            if len(kinds) > 1:  # name the layers of each type where a group is mixed
                by_kind: dict[str, list[int]] = defaultdict(list)
                for il, k in layers.items():
                    by_kind[k].append(il)
                mix += "  (" + "; ".join(f"{k} layers {_ranges(v)}" for k, v in sorted(by_kind.items())) + ")"
            lines.append(f"    {group}: {mix}")
        lines += strip(d)
        if d.template is not None:
            lines.append(f"  chat template: {d.template}")
    return "\n".join(lines) + "\n"
