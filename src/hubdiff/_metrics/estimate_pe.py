"""Perception LM's vision tower, timm's Perception Encoder (an ``Eva`` ViT under ``TimmWrapperModel``),
and its projector.

The vision config names its tower by a timm architecture (``architecture``); timm builds it from that
architecture's definition (timm/models/eva.py: ``vit_pe_*``) with ``model_args`` (keyword arguments to
``timm.create_model``) over it, which Perception LM's releases use to size the tower (embed_dim, depth,
img_size, and which norms and pooling it keeps). So each definition is written out here, keyed by the
architecture, as the subset of Eva's keyword arguments that size tensors; the model_args keys below that
size tensors are applied over it, those that size nothing are not, and any other is marked not
understood. An architecture not in the table is not guessed: its tower is marked as not modelled.
"""

from __future__ import annotations

from typing import Any

from .config import MAX_DIM
from .estimate_facts import Triple

DT = "BF16"


def _pe(
    patch: int, d: int, depth: int, heads: int, ratio: float, image: int, *, core: bool, **own: Any
) -> dict[str, Any]:
    """A Perception Encoder's definition: every one has a pre-transformer norm (and so an unbiased patch
    embedding) and rotary positions beside learned absolute ones; a core encoder pools with an attention
    latent (8 heads, MLP ratio 4) and keeps the post-transformer norm, the lang and spatial ones pool with
    nothing, and have neither a post-transformer nor an fc norm. ``image``: its default pretrained
    configuration's input size, which timm passes as img_size."""
    out: dict[str, Any] = {
        "patch_size": patch,
        "embed_dim": d,
        "depth": depth,
        "num_heads": heads,
        "mlp_ratio": ratio,
        "img_size": image,
        "use_pre_transformer_norm": True,
    }
    if core:
        out.update(global_pool="map", attn_pool_mlp_ratio=4.0)
    else:
        out.update(use_post_transformer_norm=False, use_fc_norm=False)
    return {**out, **own}


_GIANT = 8960 / 1536
PERCEPTION_ENCODERS: dict[str, dict[str, Any]] = {
    "vit_pe_core_tiny_patch16_384": _pe(16, 192, 12, 3, 4.0, 384, core=True),
    "vit_pe_core_small_patch16_384": _pe(16, 384, 12, 6, 4.0, 384, core=True),
    "vit_pe_core_base_patch16_224": _pe(16, 768, 12, 12, 4.0, 224, core=True),
    "vit_pe_core_large_patch14_336": _pe(14, 1024, 24, 16, 4.0, 336, core=True),
    "vit_pe_core_gigantic_patch14_448": _pe(14, 1536, 50, 16, _GIANT, 448, core=True, class_token=False),
    "vit_pe_lang_large_patch14_448": _pe(14, 1024, 23, 16, 4.0, 448, core=False, init_values=0.1),
    "vit_pe_lang_gigantic_patch14_448": _pe(
        14, 1536, 47, 16, _GIANT, 448, core=False, class_token=False, init_values=0.1
    ),
    "vit_pe_spatial_tiny_patch16_512": _pe(16, 192, 12, 3, 4.0, 512, core=False),
    "vit_pe_spatial_small_patch16_512": _pe(16, 384, 12, 6, 4.0, 512, core=False),
    "vit_pe_spatial_base_patch16_512": _pe(16, 768, 12, 12, 4.0, 512, core=False),
    "vit_pe_spatial_large_patch14_448": _pe(14, 1024, 24, 16, 4.0, 448, core=False),
    "vit_pe_spatial_gigantic_patch14_448": _pe(
        14, 1536, 50, 16, _GIANT, 448, core=False, class_token=False, init_values=0.1
    ),
}

# model_args keys applied over the definition (Eva's keyword arguments that size tensors)
_APPLIED = frozenset(
    {
        "patch_size",
        "embed_dim",
        "depth",
        "num_heads",
        "mlp_ratio",
        "img_size",
        "global_pool",
        "class_token",
        "num_reg_tokens",
        "init_values",
        "use_pre_transformer_norm",
        "use_post_transformer_norm",
        "use_fc_norm",
        "attn_pool_mlp_ratio",
    }
)
# model_args keys that size nothing: regularisation, the rotary embedding's grid and temperature (its
# tables are not stored), dynamic sizing and padding, the pooling latent's heads, initialisation
_SIZES_NOTHING = frozenset(
    {
        "drop_rate",
        "pos_drop_rate",
        "patch_drop_rate",
        "proj_drop_rate",
        "attn_drop_rate",
        "drop_path_rate",
        "ref_feat_shape",
        "rope_grid_offset",
        "rope_grid_indexing",
        "rope_temperature",
        "dynamic_img_size",
        "dynamic_img_pad",
        "attn_pool_num_heads",
        "head_init_scale",
    }
)


def _side(value: Any, default: int) -> tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_DIM:
        return value, value
    if (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(isinstance(x, int) and x > 0 for x in value)
    ):
        return int(value[0]), int(value[1])
    return default, default


def _norm(name: str, d: int) -> list[Triple]:
    return [(name + ".weight", DT, (d,)), (name + ".bias", DT, (d,))]


def _linear(name: str, out: int, into: int) -> list[Triple]:
    return [(name + ".weight", DT, (out, into)), (name + ".bias", DT, (out,))]


def perception_encoder(o: dict[str, Any], e: str) -> list[Triple]:
    """The tower's tensors: class and register tokens, learned positions for every patch and prefix token,
    the patch embedding (biased only without a pre-transformer norm), the pre-norm; blocks of a LayerNorm,
    fused biased q/k/v and a biased output projection, a LayerNorm and a GELU MLP, with two layer-scale
    vectors where init_values is set; the post-transformer norm (on unless an fc norm is), the attention
    pooling latent where the pool is "map", the fc norm (on for "avg" pooling unless said)."""
    d, depth = int(o["embed_dim"]), int(o["depth"])
    heads = int(o.get("num_heads", 12))
    attn = (d // heads) * heads if heads > 0 else d
    ph, pw = _side(o.get("patch_size"), 16)
    ih, iw = _side(o.get("img_size"), 224)
    cls, regs = o.get("class_token", True) is not False, int(o.get("num_reg_tokens") or 0)
    pre = o.get("use_pre_transformer_norm") is True
    pool = str(o.get("global_pool", "avg"))
    fc_norm = o["use_fc_norm"] if isinstance(o.get("use_fc_norm"), bool) else pool == "avg"
    post = (
        o["use_post_transformer_norm"]
        if isinstance(o.get("use_post_transformer_norm"), bool)
        else not fc_norm
    )
    mlp = int(d * float(o.get("mlp_ratio", 4.0)))
    out: list[Triple] = [(e + "cls_token", DT, (1, 1, d))] if cls else []
    out += [(e + "reg_token", DT, (1, regs, d))] if regs else []
    out += [(e + "pos_embed", DT, (1, (ih // ph) * (iw // pw) + int(cls) + regs, d))]
    out += [(e + "patch_embed.proj.weight", DT, (d, 3, ph, pw))]
    out += [] if pre else [(e + "patch_embed.proj.bias", DT, (d,))]
    out += _norm(e + "norm_pre", d) if pre else []
    for i in range(depth):
        b = f"{e}blocks.{i}."
        if o.get("init_values") is not None:
            out += [(b + "gamma_1", DT, (d,)), (b + "gamma_2", DT, (d,))]
        out += (
            _norm(b + "norm1", d) + _linear(b + "attn.qkv", 3 * attn, d) + _linear(b + "attn.proj", d, attn)
        )
        out += _norm(b + "norm2", d) + _linear(b + "mlp.fc1", mlp, d) + _linear(b + "mlp.fc2", d, mlp)
    out += _norm(e + "norm", d) if post else []
    if pool == "map":
        p = e + "attn_pool."
        inner = int(d * float(o.get("attn_pool_mlp_ratio") or o.get("mlp_ratio", 4.0)))
        out += [(p + "latent", DT, (1, 1, d)), *_linear(p + "q", d, d), *_linear(p + "kv", 2 * d, d)]
        out += _linear(p + "proj", d, d) + _norm(p + "norm", d)
        out += _linear(p + "mlp.fc1", inner, d) + _linear(p + "mlp.fc2", d, inner)
    return out + (_norm(e + "fc_norm", d) if fc_norm else [])


def _given(args: Any) -> dict[str, Any]:
    """model_args as timm applies them: timm.create_model drops every keyword argument that is None."""
    return {k: x for k, x in args.items() if x is not None} if isinstance(args, dict) else {}


def pe_options(v: dict[str, Any]) -> dict[str, Any] | None:
    """The table's definition of the vision config's architecture with the applied model_args over it,
    or None when the table has no such architecture."""
    base = PERCEPTION_ENCODERS.get(str(v.get("architecture") or ""))
    if base is None:
        return None
    args = v.get("model_args")
    own = {k: x for k, x in _given(args).items() if k in _APPLIED}
    return {**base, **own}


def perception_lm_vision(raw: dict[str, Any], v: dict[str, Any], text_hidden: int) -> list[Triple]:
    """The encoder under TimmWrapperModel's timm_model, then Perception LM's projector: two biased linears
    from the encoder's width (model_args' embed_dim, which the class reads) to the text width; its
    pooling (projector_pooling_ratio) holds no tensor."""
    o = pe_options(v)
    out = perception_encoder(o, "model.vision_tower.timm_model.") if o else []
    width = int(o["embed_dim"]) if o else 1024
    p = "model.multi_modal_projector."
    return (
        out + _linear(p + "linear_1", text_hidden, width) + _linear(p + "linear_2", text_hidden, text_hidden)
    )


def perception_lm_doubts(outer: str, v: dict[str, Any] | None) -> list[str]:
    """model_args keys that may change a modelled Perception Encoder and are not applied, said."""
    if outer != "perception_lm" or not v:
        return []
    arch = str(v.get("architecture"))
    args = _given(v.get("model_args")) if arch in PERCEPTION_ENCODERS else {}
    return [
        f"vision_config.model_args.{key} not understood: timm's {arch} taken as defined"
        for key in args
        if key not in _APPLIED and key not in _SIZES_NOTHING
    ]
