"""Find a model's input layer in the files its token table came from. No Qt here.

:func:`read_input_layer` reads headers and settings only (config.json or
the GGUF metadata, milliseconds); the tables it finds are read when asked.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from explorer.core.input_layer.layer import InputLayer, LayerNormParams
from explorer.core.input_layer.rotary import DEFAULT_ROPE_THETA, RotarySettings
from explorer.core.input_layer.stored import gguf_tensor, safetensors_tensor
from explorer.core.sources.common import SourceError

__all__ = ["read_input_layer", "ROTARY_MODEL_TYPES"]

#: model types whose attention turns queries and keys by position (and
#: that have no position table), when config.json names no rope setting
ROTARY_MODEL_TYPES = frozenset({
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2", "gemma3",
    "gemma3_text", "phi", "phi3", "gpt_neox", "gptj", "stablelm", "olmo", "olmo2", "cohere", "starcoder2",
    "granite", "smollm3", "deepseek_v3", "internlm2", "exaone",
})
#: GGUF architectures that are rotary
_ROTARY_ARCHS = ROTARY_MODEL_TYPES | {"llama4", "qwen2vl", "phi2", "starcoder2", "command-r", "deepseek2"}
#: models that multiply the token rows by sqrt(d) before the first block
_SCALED_MODEL_TYPES = frozenset({"gemma", "gemma2", "gemma3", "gemma3_text"})
#: suffix of the token table's name -> the names (same prefix) of the position
#: table, the token-type table and the input LayerNorm's weight and bias
_LAYOUTS = (
    ("word_embeddings.weight", ("position_embeddings.weight",), ("token_type_embeddings.weight",),
     (("LayerNorm.weight", "LayerNorm.bias"), ("LayerNorm.gamma", "LayerNorm.beta"),
      ("layer_norm.weight", "layer_norm.bias"))),
    ("wte.weight", ("wpe.weight",), (), ()),
    ("embed_tokens.weight", ("embed_positions.weight",), (),
     (("layernorm_embedding.weight", "layernorm_embedding.bias"),)),
)
#: model types whose position ids start past 0: RoBERTa's at padding_idx + 1,
#: OPT's and BART's at 2
_OFFSET_TWO = frozenset({"opt", "bart", "mbart"})
_OFFSET_PADDING = frozenset({"roberta", "xlm-roberta", "camembert", "longformer"})
_TOY_MODEL_TYPE = "explorer-toy-lm"


def read_input_layer(table) -> InputLayer:
    """The input layer of the model an :class:`EmbeddingTable` came from.

    Parameters
    ----------
    table : EmbeddingTable

    Returns
    -------
    InputLayer
        Toys and random tables: scheme "none" (a bare table has no model
        around it). Checkpoints: what config.json and the tensor names say.
        GGUF files: what the metadata and tensor names say.

    Raises
    ------
    SourceError
        When the files the table came from can no longer be read.
    """
    path = table.path
    d = int(table.dim)
    if table.kind in ("toy", "random") or path is None:
        return InputLayer("none", d, notes=(
            "A bare table with no model around it: no positions, no token types, no LayerNorm. "
            "Its input vectors are its rows, the same wherever a token stands.",))
    path = Path(path)
    if path.is_file() and path.suffix.lower() != ".safetensors":
        return _from_gguf(path, d)
    from explorer.core.sources.checkpoint import file_facts, folder_facts

    facts = folder_facts(path, table.spec, deep=False) if path.is_dir() else file_facts(path, deep=False)
    if isinstance(facts, Path):
        return _from_gguf(facts, d)
    return _from_checkpoint(facts.checkpoint.tensors, facts.config, table.tensor_name or facts.embed, d)


# -- safetensors checkpoints -----------------------------------------------------------


def _from_checkpoint(tensors: dict, config: dict, embed: str, d: int) -> InputLayer:
    model = config.get("model_type") if isinstance(config.get("model_type"), str) else ""
    if model == _TOY_MODEL_TYPE:
        ctx = config.get("context")
        slots = f"the previous {ctx} tokens" if isinstance(ctx, int) else "the previous tokens"
        return InputLayer("none", d, model=model, notes=(
            "The bundled model has no position table, no token types and no LayerNorm: its input vectors are "
            f"its token rows. Order still matters to it: its first layer concatenates the rows of {slots}, "
            "and each slot of that concatenation has its own weights.",))
    pos = typ = None
    ln = None
    for suffix, pos_names, type_names, norm_names in _LAYOUTS:
        if not embed.endswith(suffix):
            continue
        prefix = embed[: -len(suffix)]
        pos = _first(tensors, prefix, pos_names)
        typ = _first(tensors, prefix, type_names)
        for w, b in norm_names:
            if prefix + w in tensors:
                ln = (prefix + w, prefix + b if prefix + b in tensors else None)
                break
        break
    scale = _config_scale(config, model, d)
    notes = []
    positions = safetensors_tensor(tensors[pos], pos) if pos else None
    token_types = safetensors_tensor(tensors[typ], typ) if typ else None
    layer_norm = None
    if ln is not None:
        eps = _config_eps(config, model)
        layer_norm = LayerNormParams(safetensors_tensor(tensors[ln[0]], ln[0]),
                                     safetensors_tensor(tensors[ln[1]], ln[1]) if ln[1] else None, eps)
    for t in (positions, token_types):
        if t is not None and t.cols != d:
            raise SourceError(f"{t.name} has rows of {t.cols:,} values but the token rows have {d:,}; "
                              "the checkpoint does not fit together")
    if positions is not None:
        offset = _position_offset(config, model)
        layer = InputLayer("learned", d, scale, positions, offset, token_types, layer_norm, None, model)
        return _with_notes(layer, notes)
    rotary = _config_rotary(config, model, d)
    scheme = "rotary" if rotary is not None else "none"
    layer = InputLayer(scheme, d, scale, None, 0, token_types, layer_norm, rotary, model)
    if scheme == "none":
        notes.append("No position table and no rotary settings were found for this model"
                     + (f" ({model})" if model else " (no config.json)") + ": its input vectors are shown as "
                     "its token rows" + (" plus what else it adds." if token_types or layer_norm else "."))
    return _with_notes(layer, notes)


def _first(tensors: dict, prefix: str, names) -> str | None:
    for n in names:
        if prefix + n in tensors:
            return prefix + n
    return None


def _number(config: dict, *keys):
    for k in keys:
        v = config.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            return v
    return None


def _config_scale(config: dict, model: str, d: int) -> float:
    if model in _SCALED_MODEL_TYPES or config.get("scale_embedding") is True:
        return math.sqrt(d)
    return 1.0


def _config_eps(config: dict, model: str) -> float:
    eps = _number(config, "layer_norm_eps", "layer_norm_epsilon", "norm_eps")
    if eps is not None and eps > 0:
        return float(eps)
    return 1e-12 if model in ("bert", "roberta", "distilbert", "electra", "") else 1e-5


def _position_offset(config: dict, model: str) -> int:
    if model in _OFFSET_TWO:
        return 2
    if model in _OFFSET_PADDING:
        pad = _number(config, "pad_token_id")
        return int(pad) + 1 if pad is not None else 2
    return 0


def _config_rotary(config: dict, model: str, d: int) -> RotarySettings | None:
    params = config.get("rope_parameters") if isinstance(config.get("rope_parameters"), dict) else {}
    theta = _number(params, "rope_theta") or _number(config, "rope_theta", "rotary_emb_base")
    if theta is None and model not in ROTARY_MODEL_TYPES:
        return None
    heads = _number(config, "num_attention_heads", "n_head")
    head_dim = _number(config, "head_dim")
    if head_dim is None:
        head_dim = d // int(heads) if heads and int(heads) > 0 and d % int(heads) == 0 else d
    head_dim = int(head_dim)
    rot = head_dim
    factor = _number(params, "partial_rotary_factor") or _number(config, "partial_rotary_factor", "rotary_pct")
    if factor is not None and 0 < factor <= 1:
        rot = int(head_dim * factor)
    elif _number(config, "rotary_dim") is not None:
        rot = int(_number(config, "rotary_dim"))
    scaling = params.get("rope_type") if params else None
    rs = config.get("rope_scaling")
    if isinstance(rs, dict):
        scaling = rs.get("rope_type") or rs.get("type") or scaling
    if scaling == "default":
        scaling = None
    ctx = _number(config, "max_position_embeddings", "n_positions")
    return RotarySettings(float(theta or DEFAULT_ROPE_THETA), head_dim, max(2, rot - rot % 2),
                          int(ctx) if ctx else None, scaling if isinstance(scaling, str) else None, "config.json")


# -- GGUF ------------------------------------------------------------------------------


def _from_gguf(path: Path, d: int) -> InputLayer:
    from explorer.core.sources import ggufio

    try:
        header = ggufio.read_header(path)
    except ggufio.GGUFError as exc:
        raise SourceError(f"{path}: not a readable GGUF file: {exc}") from None
    meta = header.metadata
    arch = meta.get("general.architecture") if isinstance(meta.get("general.architecture"), str) else ""

    def key(name):
        return _number(meta, f"{arch}.{name}")

    tensors = header.tensors
    positions = gguf_tensor(header, "position_embd.weight") if "position_embd.weight" in tensors else None
    token_types = gguf_tensor(header, "token_types.weight") if "token_types.weight" in tensors else None
    layer_norm = None
    if "token_embd_norm.weight" in tensors:
        bias = gguf_tensor(header, "token_embd_norm.bias") if "token_embd_norm.bias" in tensors else None
        eps = key("attention.layer_norm_epsilon") or 1e-12
        layer_norm = LayerNormParams(gguf_tensor(header, "token_embd_norm.weight"), bias, float(eps))
    scale = math.sqrt(d) if arch in _SCALED_MODEL_TYPES else 1.0
    if positions is not None:
        return _with_notes(InputLayer("learned", d, scale, positions, 0, token_types, layer_norm, None, arch), [])
    rotary = None
    theta = key("rope.freq_base")
    if theta is not None or arch in _ROTARY_ARCHS:
        heads = key("attention.head_count")
        head_dim = key("attention.key_length") or (d // int(heads) if heads else d)
        rot = key("rope.dimension_count") or head_dim
        ctx = key("context_length")
        rotary = RotarySettings(float(theta or DEFAULT_ROPE_THETA), int(head_dim), int(rot),
                                int(ctx) if ctx else None, None, "GGUF metadata")
    scheme = "rotary" if rotary else "none"
    notes = [] if rotary else [f"No position table and no rotary settings were found in this GGUF file "
                               f"(architecture {arch or 'not named'}): its input vectors are shown as its token rows."]
    return _with_notes(InputLayer(scheme, d, scale, None, 0, token_types, layer_norm, rotary, arch), notes)


# -- sentences -------------------------------------------------------------------------


def _with_notes(layer: InputLayer, extra: list[str]) -> InputLayer:
    return replace(layer, notes=tuple(describe(layer)) + tuple(extra))


def describe(layer: InputLayer) -> list[str]:
    """Sentences saying what the model adds to its token rows, from its own figures."""
    out = []
    if layer.scale != 1.0:
        out.append(f"The token rows are multiplied by √d = √{layer.dim:,} = {layer.scale:.2f} first.")
    if layer.scheme == "learned":
        p = layer.positions
        first = f", starting at row {layer.position_offset}" if layer.position_offset else ""
        out.append(f"A learned position table of {p.rows:,} × {p.cols:,} adds one row per position{first}: "
                   f"texts of up to {layer.max_tokens:,} tokens.")
    elif layer.scheme == "rotary":
        r = layer.rotary
        out.append(f"No position table: rotary positions turn {r.pairs} pairs of dimensions of each query and key "
                   f"head ({r.head_dim} wide) inside attention (theta = {r.theta:,.0f}, from the {r.source}). "
                   "The input vector carries no position: it is the token row alone.")
        if r.scaling:
            out.append(f"The config also scales the rotations ({r.scaling}); the angles shown are unscaled.")
    if layer.token_types is not None:
        out.append(f"A token-type table of {layer.token_types.rows} × {layer.token_types.cols:,} adds its row 0 "
                   "to every token of a single text.")
    if layer.layer_norm is not None:
        out.append(f"A LayerNorm (eps = {layer.layer_norm.eps:g}) then centres and rescales each sum.")
    return out
