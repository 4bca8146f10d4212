#!/usr/bin/env python3
"""Generates the tiny DeepSeek-V2 / DeepSeek-V3 model fixtures under tests/data/model/.

Companion of gen_model_fixtures.py (same layout, same bf16-representable weights), for
MLA attention + DeepSeekMoE. Two random models, run by transformers in float32 with
eager attention and eager experts:

  deepseek_v2_tiny  DeepseekV2ForCausalLM: no q compression (q_proj, like V2-Lite),
                    softmax router, topk_method group_limited_greedy (group score = max),
                    weights not normalized, x routed_scaling_factor 1.5.
  deepseek_v3_tiny  DeepseekV3ForCausalLM: q compression (q_a_proj, q_a_layernorm,
                    q_b_proj), sigmoid router with e_score_correction_bias (noaux_tc,
                    group score = sum of the top-2 biased scores), weights normalized,
                    x routed_scaling_factor 2.5.
Both: 3 layers, layer 0 dense (first_k_dense_replace 1), layers 1-2 MoE with 8 routed
experts and 1 shared expert, kv_lora_rank 32, qk_nope 16, qk_rope 8, v_head 16, YaRN
(factor 4, original context 64, mscale = mscale_all_dim = 0.707, beta 32/1).

For each fixture it writes:
  config.json, model.safetensors   a checkpoint in DeepSeek's own Hugging Face format:
                                   per-expert tensors mlp.experts.<e>.{gate,up,down}_proj,
                                   rope_theta + rope_scaling {"type": "yarn", ...} at top
                                   level, scoring_func / topk_method keys, no derived
                                   head_dim; bfloat16 except gate.e_score_correction_bias
                                   (float32, as in the released V3 checkpoint)
  model-f32.gguf, model-q8_0.gguf (and model-f16.gguf with --f16)
                                   arch "deepseek2", LEGACY layout of llama.cpp's converter
                                   (before MLA absorption): one blk.N.attn_kv_b.weight,
                                   head_count_kv = n_head, key_length = qk_nope + qk_rope,
                                   value_length = v_head_dim, no *_mla keys
  model-f32-split-kv.gguf          CURRENT converter layout: attn_k_b + attn_v_b instead
                                   of attn_kv_b, head_count_kv = 1,
                                   key_length = kv_lora + qk_rope, value_length = kv_lora,
                                   key_length_mla = qk_nope + qk_rope, value_length_mla = v
  reference.json                   token sequences, vocab, files, the config values an
                                   engine needs, the conventions below, routing margins
  reference_logits.bin             float32 logits of every position of every sequence,
                                   sequences concatenated, row-major [sum(len)][vocab],
                                   each sequence run alone

Tensor types: 1-D tensors, *_norm.weight and ffn_gate_inp stay F32 in every file (as the
converter does); in the q8_0 file a tensor whose rows are not a multiple of 32 falls back
to F16 like the converter (here: V3's attn_q_b, rows of q_lora_rank 24).

CONVENTIONS (what the fixtures imply; checked by gguf_forward() below, which re-implements
the forward pass from the GGUF files alone in numpy and must match the reference):

RoPE pairing. Only the last qk_rope_head_dim (8) entries of each q head and the 8 k_pe
  entries of kv_a_proj_with_mqa's output (after the kv_lora_rank latent) are rotated.
  Pair i (i = 0..3) is the ADJACENT pair (x[2i], x[2i+1]), rotated by angle
  pos * inv_freq[i]: (a, b) -> (a cos - b sin, a sin + b cos).
  - HF safetensors: this is what transformers does (V2: view_as_complex on
    reshape(..., -1, 2); V3 with rope_interleave=True: the even/odd-slice form) and what
    DeepSeek's original remote code does (it permutes to [evens, odds] and applies
    rotate_half, which pairs the same elements; q and k get the same permutation, so
    q.k is unchanged). No row permutation is needed when loading safetensors.
  - GGUF: the converter does NOT permute q/k rows for deepseek2, and llama.cpp ropes
    deepseek2 with LLAMA_ROPE_TYPE_NORM = adjacent pairs. Same pairing as safetensors.
  (Contrast: GGUF llama has permuted rows + adjacent pairs, HF llama half-split pairs.)
  Rows of q per head: [qk_nope (16) | qk_rope (8)]; k_pe is shared by all heads.

YaRN (transformers _compute_yarn_parameters == DeepSeek's code == ggml rope_yarn):
  dim = qk_rope_head_dim, base = rope_theta, f = factor,
  corr(r) = dim * ln(orig_ctx / (r * 2 pi)) / (2 ln base)
  low = max(floor(corr(beta_fast)), 0), high = min(ceil(corr(beta_slow)), dim - 1)
  ramp[i] = clamp((i - low) / (high - low), 0, 1)    (high - low at least 0.001)
  extrap[i] = 1 - ramp[i]
  inv_freq[i] = base^(-2i/dim) / f * (1 - extrap[i]) + base^(-2i/dim) * extrap[i]
  cos/sin are multiplied by attention_factor = m(f, mscale) / m(f, mscale_all_dim),
  m(f, s) = 0.1 * s * ln(f) + 1 (1 when f <= 1): 1.0 here since mscale == mscale_all_dim
  (also true of all released DeepSeek V2/V3 configs; GGUF does not carry `mscale`).
  Softmax scale of q.k (all 24 dims, nope and rope parts alike):
  scale = (qk_nope + qk_rope)^-0.5 * m(f, mscale_all_dim)^2
  GGUF stores rope.scaling.yarn_log_multiplier = 0.1 * mscale_all_dim (llama.cpp divides
  it by 0.1 on load), so m = 1 + yarn_log_multiplier * ln(f); and in the legacy files
  key_length = qk_nope + qk_rope, in the split file key_length_mla = qk_nope + qk_rope.

kv_b layouts. HF kv_b_proj.weight is [n_head * (qk_nope + v), kv_lora]; per head h the
  rows h*(qk_nope+v) .. +qk_nope-1 give k_nope, the next v rows give the value.
  - attn_kv_b (legacy GGUF): that matrix unchanged, ggml ne = [kv_lora, n_head*(nope+v)].
  - attn_k_b (split GGUF): kv_b viewed [n_head, nope+v, kv_lora], rows [:, :nope, :],
    TRANSPOSED to [n_head, kv_lora, nope]; ggml ne = [nope, kv_lora, n_head].
    k_nope[h][n] = sum_c k_b[h][c][n] * latent[c]; absorbed query:
    q_abs[h][c] = sum_n k_b[h][c][n] * q_nope[h][n] (llama.cpp: mul_mat(wk_b, q_nope)).
  - attn_v_b (split GGUF): rows [:, nope:, :], NOT transposed: [n_head, v, kv_lora];
    ggml ne = [kv_lora, v, n_head]; v[h][j] = sum_c v_b[h][j][c] * latent[c].
  The latent is RMSNorm(kv_a_proj_with_mqa(x)[:kv_lora]) with attn_kv_a_norm; k_pe is
  kv_a_proj_with_mqa(x)[kv_lora:] (not normed), then roped.

Router (layers >= first_k_dense_replace), logits = ffn_gate_inp @ x in float32:
  V2 (softmax): s = softmax(logits over all experts). group_limited_greedy: group score
    = max of s over the group's experts (n_group groups of consecutive experts), keep the
    topk_group best groups, zero the rest, take the top-k of s; weight = s (unnormalized,
    NOT renormalized over the chosen k) * routed_scaling_factor.
  V3 (sigmoid): s = sigmoid(logits); c = s + e_score_correction_bias (exp_probs_b);
    group score = sum of the 2 largest c in the group; keep topk_group groups; top-k of c
    among them; weight = s (WITHOUT the bias) / (sum of the k chosen s + 1e-20)
    * routed_scaling_factor.
  Out = sum_k weight_k * down_e(silu(gate_e x) * up_e x) + shared expert (a plain SwiGLU
  MLP of width moe_intermediate_size * n_shared_experts, no gate).
  transformers' V2 router ignores norm_topk_prob (DeepSeek's V2 code would renormalize
  and NOT scale when it is true; false here and in released V2 configs). DeepSeek's V3
  remote code masks dropped groups with 0.0 where transformers and llama.cpp use -inf;
  no fixture decision depends on that.
  GGUF has no topk_method key: the group score rule must be inferred from
  expert_gating_func (softmax -> max, as DeepSeek-V2; sigmoid -> top-2 sum, as V3).
  llama.cpp always uses the top-2 sum (reference.json counts the tokens of the V2 fixture
  where that would route differently). Every fixture token has a margin > MIN_MARGIN
  between the last kept and the first dropped group score and between the k-th and
  (k+1)-th candidate expert score, so any correct float32 implementation routes the same;
  the same holds with the q8_0 file's weights (dequantized, float32 activations), so the
  q8_0 file routes every token like the reference too (seeds are tried until both hold).

RMSNorm eps: transformers builds q_a_layernorm / kv_a_layernorm with eps 1e-6 whatever
  rms_norm_eps says (so does DeepSeek's code); llama.cpp uses rms_norm_eps for all. The
  fixtures use rms_norm_eps = 1e-6, so both agree.

Usage: python3 scripts/gen_deepseek_fixtures.py  (from the repository root; needs torch,
transformers >= 5 with DeepseekV2/V3, safetensors, gguf, numpy). Deterministic for a given
torch version. Imports representable() and OUT_ROOT from gen_model_fixtures.py.
"""
import argparse
import copy
import json
import math
import os
import sys

import numpy as np
import torch
import gguf
from safetensors.torch import save_file
from transformers import DeepseekV2Config, DeepseekV2ForCausalLM, DeepseekV3Config, DeepseekV3ForCausalLM

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_model_fixtures import OUT_ROOT, representable  # noqa: E402

SEQUENCE_LENGTHS = [1, 9, 70]  # 70 crosses a 64-token block and YaRN's original context (64)
MIN_MARGIN = 1e-3              # routing decisions must win by at least this much
MAX_ATTEMPTS = 2000            # seeds tried until every routing decision is decisive
GGUF_CHECK_TOL = 1e-3          # numpy re-implementation from F32/F16 GGUF vs reference

YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64,
        "mscale": 0.707, "mscale_all_dim": 0.707, "beta_fast": 32, "beta_slow": 1}

COMMON = dict(vocab_size=256, hidden_size=64, intermediate_size=96, num_hidden_layers=3,
              num_attention_heads=4, num_key_value_heads=4, kv_lora_rank=32, qk_nope_head_dim=16,
              qk_rope_head_dim=8, v_head_dim=16, first_k_dense_replace=1, n_routed_experts=8,
              n_shared_experts=1, moe_intermediate_size=32, max_position_embeddings=256,
              rms_norm_eps=1e-6, tie_word_embeddings=False)


def fixture_specs():
    v2 = DeepseekV2Config(
        **COMMON, q_lora_rank=None, num_experts_per_tok=3, topk_method="group_limited_greedy",
        n_group=4, topk_group=2, norm_topk_prob=False, routed_scaling_factor=1.5,
        rope_parameters=dict(YARN, rope_theta=10000.0))
    v3 = DeepseekV3Config(
        **COMMON, q_lora_rank=24, num_experts_per_tok=2, n_group=2, topk_group=1,
        norm_topk_prob=True, routed_scaling_factor=2.5, rope_interleave=True, num_mtp_layers=0,
        rope_parameters=dict(YARN, rope_theta=20000.0))
    return [
        # name, variant, config, class, seed, router weight std, keys of DeepSeek's config.json
        # that transformers' config lacks. Router std: softmax scores keep absolute gaps
        # between the 3rd and 4th expert largest when router logits have a std near 1
        # (0.15 * |RMSNorm(x)| ~ 0.15 * 8); sigmoid scores plus bias do well with wider logits.
        ("deepseek_v2_tiny", "v2", v2, DeepseekV2ForCausalLM, 4321, 0.15,
         {"scoring_func": "softmax", "topk_method": "group_limited_greedy"}),
        ("deepseek_v3_tiny", "v3", v3, DeepseekV3ForCausalLM, 8765, 0.5,
         {"scoring_func": "sigmoid", "topk_method": "noaux_tc"}),
    ]


# ---------------------------------------------------------------------------------------
# random weights and routing margins

def randomize(model, seed, router_std):
    """Overwrites every parameter and persistent buffer (transformers leaves the router
    weight and e_score_correction_bias at zero) with seeded, bf16/f16-representable values."""
    g = torch.Generator().manual_seed(seed)
    tensors = list(model.named_parameters())
    tensors += [(n, b) for n, b in model.named_buffers() if n.endswith("e_score_correction_bias")]
    with torch.no_grad():
        for name, t in tensors:
            if name.endswith("norm.weight"):
                v = 1.0 + 0.2 * torch.randn(t.shape, generator=g)
            elif name.endswith("mlp.gate.weight"):
                v = router_std * torch.randn(t.shape, generator=g)  # decisive routing
            elif name.endswith("e_score_correction_bias"):
                v = 0.3 * torch.randn(t.shape, generator=g)  # changes some top-k choices
            elif name == "model.embed_tokens.weight":
                v = torch.randn(t.shape, generator=g)
            elif name == "lm_head.weight":
                v = 0.3 * torch.randn(t.shape, generator=g)  # logits with std of a few units
            else:
                v = 0.1 * torch.randn(t.shape, generator=g)
            t.copy_(representable(v).to(t.dtype))


def gap(sorted_desc, k):
    """Distance between the k-th and (k+1)-th largest values (inf when nothing is dropped)."""
    return float(sorted_desc[..., k - 1] - sorted_desc[..., k]) if sorted_desc.shape[-1] > k else math.inf


def route(variant, cfg, logits, bias):
    """Re-implements the router for one token (float32 torch). Returns
    (chosen expert set, weights by expert, group margin, expert margin, plain top-k set,
    choice under llama.cpp's top-2-sum group rule, top-k of the selection scores without
    groups)."""
    n_exp, k = cfg.n_routed_experts, cfg.num_experts_per_tok
    per_group = n_exp // cfg.n_group
    if variant == "v2":
        s = logits.softmax(-1)
        choice = s
        group_score = choice.view(cfg.n_group, per_group).max(-1).values
    else:
        s = logits.sigmoid()
        choice = s + bias
        group_score = choice.view(cfg.n_group, per_group).topk(2, -1).values.sum(-1)
    gs = group_score.sort(descending=True).values
    groups = group_score.topk(cfg.topk_group).indices.tolist()
    allowed = [e for g in groups for e in range(g * per_group, (g + 1) * per_group)]
    cand = choice[allowed].sort(descending=True)
    chosen = {allowed[i] for i in cand.indices[:k].tolist()}
    w = s[sorted(chosen)]
    if cfg.norm_topk_prob and variant == "v3":
        w = w / (w.sum() + 1e-20)
    w = w * cfg.routed_scaling_factor
    weights = dict(zip(sorted(chosen), w.tolist()))
    plain = set(s.topk(k).indices.tolist())
    # llama.cpp: group score = sum of the top-2 selection scores, whatever the gating
    g2 = choice.view(cfg.n_group, per_group).topk(2, -1).values.sum(-1)
    allowed2 = [e for g in g2.topk(cfg.topk_group).indices.tolist()
                for e in range(g * per_group, (g + 1) * per_group)]
    llamacpp = {allowed2[i] for i in choice[allowed2].topk(k).indices.tolist()}
    no_groups = set(choice.topk(k).indices.tolist())
    return chosen, weights, gap(gs, cfg.topk_group), gap(cand.values, k), plain, llamacpp, no_groups


def run_with_routing(model, cfg, variant, seqs):
    """Runs each sequence alone; returns logits rows and per-(layer, token) routing records."""
    records = []
    hooks = []
    for li, layer in enumerate(model.model.layers):
        if li < cfg.first_k_dense_replace:
            continue

        def hook(mod, args, out, li=li):
            h = args[0].reshape(-1, cfg.hidden_size)
            logits = torch.nn.functional.linear(h.float(), mod.weight.float())
            bias = getattr(mod, "e_score_correction_bias", None)
            hf_w, hf_idx = out[1], out[2]
            for t in range(h.shape[0]):
                rec = route(variant, cfg, logits[t], bias)
                hf = dict(zip(hf_idx[t].tolist(), hf_w[t].tolist()))
                same = rec[0] == set(hf) and all(abs(rec[1][e] - hf[e]) <= 1e-6 * max(1.0, abs(hf[e])) for e in hf)
                records.append((li,) + rec + (same,))
        hooks.append(layer.mlp.gate.register_forward_hook(hook))
    rows = []
    try:
        with torch.no_grad():
            for s in seqs:
                rows.append(model(torch.tensor([s])).logits[0].to(torch.float32).numpy())
    finally:
        for h in hooks:
            h.remove()
    return rows, records


def q8_0_roundtrip(model, qmodel):
    """Copies model's weights into qmodel as the q8_0 GGUF holds them: every tensor of 2+
    dims but the router quantized along its last dim (a GGUF row), F16 (exact here) where
    a row is not a multiple of 32."""
    with torch.no_grad():
        src = dict(model.named_parameters())
        for name, t in qmodel.named_parameters():
            w = src[name].detach().to(torch.float32)
            if w.ndim >= 2 and not name.endswith("mlp.gate.weight"):
                try:
                    q8 = gguf.GGMLQuantizationType.Q8_0
                    q = gguf.quants.dequantize(gguf.quants.quantize(w.numpy(), q8), q8)
                    w = torch.from_numpy(q.reshape(w.shape).copy())
                except gguf.QuantError:
                    pass
            t.copy_(w)
        for name, b in qmodel.named_buffers():
            if name.endswith("e_score_correction_bias"):
                b.copy_(dict(model.named_buffers())[name])


def routing_summary(records):
    return {
        "min_group_margin": min(r[3] for r in records),
        "min_expert_margin": min(r[4] for r in records),
        "decisions": len(records),
        "tokens_differing_from_plain_topk": sum(r[1] != r[5] for r in records),
        "tokens_where_groups_change_choice": sum(r[1] != r[7] for r in records),
        "tokens_where_bias_changes_choice": sum(r[5] != r[7] for r in records),
        "tokens_differing_under_llamacpp_top2sum_groups": sum(r[1] != r[6] for r in records),
        "mismatches_with_transformers": sum(not r[8] for r in records),
    }


# ---------------------------------------------------------------------------------------
# Hugging Face checkpoint

def hf_tensors(model, cfg):
    """State dict in DeepSeek's checkpoint naming (per-expert tensors), float32."""
    out = {}
    for name, p in model.state_dict().items():
        p = p.detach().to(torch.float32)
        if name.endswith("mlp.experts.gate_up_proj"):  # [E, 2I, H], gate rows first
            prefix = name[: -len("gate_up_proj")]
            inter = cfg.moe_intermediate_size
            for e in range(p.shape[0]):
                out[f"{prefix}{e}.gate_proj.weight"] = p[e, :inter]
                out[f"{prefix}{e}.up_proj.weight"] = p[e, inter:]
        elif name.endswith("mlp.experts.down_proj"):  # [E, H, I]
            prefix = name[: -len("down_proj")]
            for e in range(p.shape[0]):
                out[f"{prefix}{e}.down_proj.weight"] = p[e]
        else:
            out[name] = p
    return out


def write_hf(out_dir, model, cfg, extra_keys):
    tensors = {}
    for name, p in hf_tensors(model, cfg).items():
        dtype = torch.float32 if name.endswith("e_score_correction_bias") else torch.bfloat16
        tensors[name] = p.to(dtype).contiguous()
    save_file(tensors, os.path.join(out_dir, "model.safetensors"), metadata={"format": "pt"})
    os.chmod(os.path.join(out_dir, "model.safetensors"), 0o644)  # save_file creates it 0600
    conf = json.loads(cfg.to_json_string())
    params = conf.pop("rope_parameters")
    conf["rope_theta"] = params.pop("rope_theta")
    params.pop("rope_type")
    conf["rope_scaling"] = dict(params, type="yarn")  # DeepSeek's own spelling
    for derived in ("head_dim", "qk_head_dim"):  # set by transformers, absent from DeepSeek's configs
        conf.pop(derived, None)
    conf.update(extra_keys)
    conf["architectures"] = [type(model).__name__]
    conf["torch_dtype"] = "bfloat16"
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(conf, f, indent=2, sort_keys=True)
        f.write("\n")


# ---------------------------------------------------------------------------------------
# GGUF

HF_TO_GGUF_LAYER = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.q_a_proj.weight": "attn_q_a.weight",
    "self_attn.q_a_layernorm.weight": "attn_q_a_norm.weight",
    "self_attn.q_b_proj.weight": "attn_q_b.weight",
    "self_attn.kv_a_proj_with_mqa.weight": "attn_kv_a_mqa.weight",
    "self_attn.kv_a_layernorm.weight": "attn_kv_a_norm.weight",
    "self_attn.kv_b_proj.weight": "attn_kv_b.weight",
    "self_attn.o_proj.weight": "attn_output.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
    "mlp.gate.weight": "ffn_gate_inp.weight",
    "mlp.gate.e_score_correction_bias": "exp_probs_b.bias",
    "mlp.shared_experts.gate_proj.weight": "ffn_gate_shexp.weight",
    "mlp.shared_experts.up_proj.weight": "ffn_up_shexp.weight",
    "mlp.shared_experts.down_proj.weight": "ffn_down_shexp.weight",
}


def gguf_tensors(model, cfg, split_kv):
    """(gguf name, float32 numpy array in PyTorch dim order) in the converter's order."""
    state = hf_tensors(model, cfg)
    out = [("token_embd.weight", state["model.embed_tokens.weight"].numpy())]
    for layer in range(cfg.num_hidden_layers):
        pre = f"model.layers.{layer}."
        rests = [n[len(pre):] for n in state if n.startswith(pre) and ".experts." not in n]
        for rest in rests:
            w = state[pre + rest].numpy()
            if rest == "self_attn.kv_b_proj.weight" and split_kv:
                n_head, nope, v = cfg.num_attention_heads, cfg.qk_nope_head_dim, cfg.v_head_dim
                kv_b = w.reshape(n_head, nope + v, cfg.kv_lora_rank)
                k_b = np.ascontiguousarray(kv_b[:, :nope, :].transpose(0, 2, 1))  # [n_head, kv_lora, nope]
                out.append((f"blk.{layer}.attn_k_b.weight", k_b))
                out.append((f"blk.{layer}.attn_v_b.weight", np.ascontiguousarray(kv_b[:, nope:, :])))
                continue
            out.append((f"blk.{layer}.{HF_TO_GGUF_LAYER[rest]}", w))
        if layer >= cfg.first_k_dense_replace:  # experts stacked: [E, out, in]
            for proj, gname in (("down_proj", "ffn_down_exps"), ("gate_proj", "ffn_gate_exps"),
                                ("up_proj", "ffn_up_exps")):
                stacked = np.stack([state[f"{pre}mlp.experts.{e}.{proj}.weight"].numpy()
                                    for e in range(cfg.n_routed_experts)])
                out.append((f"blk.{layer}.{gname}.weight", stacked))
    out.append(("output_norm.weight", state["model.norm.weight"].numpy()))
    out.append(("output.weight", state["lm_head.weight"].numpy()))
    return out


FILE_TYPES = {"f32": (gguf.LlamaFileType.ALL_F32, gguf.GGMLQuantizationType.F32),
              "f16": (gguf.LlamaFileType.MOSTLY_F16, gguf.GGMLQuantizationType.F16),
              "q8_0": (gguf.LlamaFileType.MOSTLY_Q8_0, gguf.GGMLQuantizationType.Q8_0)}


def add_tensor(w, name, data, qtype):
    """The converter's type choice: F32 for 1-D, norms and the router; F16 when a row does
    not fit the quantization block."""
    if data.ndim == 1 or name.endswith("_norm.weight") or ".ffn_gate_inp." in name:
        qtype = gguf.GGMLQuantizationType.F32
    if qtype == gguf.GGMLQuantizationType.F32:
        w.add_tensor(name, data.astype(np.float32))
        return "F32"
    if qtype == gguf.GGMLQuantizationType.Q8_0:
        try:
            w.add_tensor(name, gguf.quants.quantize(data, qtype), raw_dtype=qtype)
            return "Q8_0"
        except gguf.QuantError:
            pass
    w.add_tensor(name, data.astype(np.float16))
    return "F16"


def write_gguf(path, name, variant, cfg, tensors, kind, split_kv):
    file_type, qtype = FILE_TYPES[kind]
    rp = cfg.rope_parameters
    w = gguf.GGUFWriter(path, "deepseek2")
    w.add_name(name)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    # MLA with absorption is MQA over the latent (converter sets 1); the legacy converter
    # wrote the HF value
    w.add_head_count_kv(1 if split_kv else cfg.num_key_value_heads)
    w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
    w.add_rope_scaling_factor(rp["factor"])
    w.add_rope_scaling_orig_ctx_len(rp["original_max_position_embeddings"])
    w.add_rope_scaling_yarn_beta_fast(rp["beta_fast"])
    w.add_rope_scaling_yarn_beta_slow(rp["beta_slow"])
    w.add_rope_freq_base(rp["rope_theta"])
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_expert_count(cfg.n_routed_experts)
    w.add_expert_used_count(cfg.num_experts_per_tok)
    w.add_expert_group_count(cfg.n_group)
    w.add_expert_group_used_count(cfg.topk_group)
    w.add_expert_gating_func(gguf.ExpertGatingFuncType.SOFTMAX if variant == "v2"
                             else gguf.ExpertGatingFuncType.SIGMOID)
    w.add_file_type(file_type)
    w.add_leading_dense_block_count(cfg.first_k_dense_replace)
    w.add_vocab_size(cfg.vocab_size)
    if cfg.q_lora_rank is not None:
        w.add_q_lora_rank(cfg.q_lora_rank)
    w.add_kv_lora_rank(cfg.kv_lora_rank)
    if split_kv:
        w.add_key_length(cfg.kv_lora_rank + cfg.qk_rope_head_dim)
        w.add_value_length(cfg.kv_lora_rank)
        w.add_key_length_mla(cfg.qk_nope_head_dim + cfg.qk_rope_head_dim)
        w.add_value_length_mla(cfg.v_head_dim)
    else:
        w.add_key_length(cfg.qk_nope_head_dim + cfg.qk_rope_head_dim)
        w.add_value_length(cfg.v_head_dim)
    w.add_expert_feed_forward_length(cfg.moe_intermediate_size)
    w.add_expert_shared_count(cfg.n_shared_experts)
    w.add_expert_weights_scale(cfg.routed_scaling_factor)
    if variant == "v3" and cfg.norm_topk_prob:  # the converter writes it only when true
        w.add_expert_weights_norm(True)
    w.add_rope_dimension_count(cfg.qk_rope_head_dim)
    w.add_rope_scaling_yarn_log_mul(0.1 * rp["mscale_all_dim"])
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    types = {}
    for tname, data in tensors:
        types[tname] = add_tensor(w, tname, data, qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return types


# ---------------------------------------------------------------------------------------
# independent check: the forward pass from a GGUF file alone (numpy, float64)

def gguf_field(reader, key, default=None):
    field = reader.fields.get(key)
    if field is None:
        return default
    return field.parts[field.data[0]].tolist()[0]


def rms_norm(x, w, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def silu(x):
    return x / (1.0 + np.exp(-x))


def swiglu(h, gate, up, down):
    return (silu(h @ gate.T) * (h @ up.T)) @ down.T


def yarn_low_high(dim, base, orig_ctx, beta_fast, beta_slow):
    def corr(r):
        return dim * math.log(orig_ctx / (r * 2 * math.pi)) / (2 * math.log(base))
    return max(math.floor(corr(beta_fast)), 0), min(math.ceil(corr(beta_slow)), dim - 1)


def yarn_inv_freq(dim, base, factor, orig_ctx, beta_fast, beta_slow):
    low, high = yarn_low_high(dim, base, orig_ctx, beta_fast, beta_slow)
    i = np.arange(dim // 2, dtype=np.float64)
    extrap = 1.0 - np.clip((i - low) / max(high - low, 0.001), 0.0, 1.0)
    freq = base ** (-2.0 * i / dim)
    return freq / factor * (1.0 - extrap) + freq * extrap


def rope_adjacent(x, pos, inv_freq):
    """x [..., n_tok, heads, dim]: pairs (2i, 2i+1) rotate by pos * inv_freq[i]."""
    ang = pos[:, None, None] * inv_freq[None, None, :]
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * np.cos(ang) - b * np.sin(ang)
    out[..., 1::2] = a * np.sin(ang) + b * np.cos(ang)
    return out


def gguf_forward(path, seqs, routes=None):
    """Logits of every position; appends each MoE decision (set of experts) to routes."""
    r = gguf.GGUFReader(path)
    A = "deepseek2."
    T = {}
    for t in r.tensors:
        w = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float64)
        T[t.name] = w.reshape([int(d) for d in reversed(t.shape.tolist())])
    n_head = gguf_field(r, A + "attention.head_count")
    kv_lora = gguf_field(r, A + "attention.kv_lora_rank")
    n_rot = gguf_field(r, A + "rope.dimension_count")
    is_mla = gguf_field(r, A + "attention.key_length_mla") is not None
    dk = gguf_field(r, A + ("attention.key_length_mla" if is_mla else "attention.key_length"))
    dv = gguf_field(r, A + ("attention.value_length_mla" if is_mla else "attention.value_length"))
    nope = dk - n_rot
    eps = gguf_field(r, A + "attention.layer_norm_rms_epsilon")
    factor = gguf_field(r, A + "rope.scaling.factor")
    inv_freq = yarn_inv_freq(n_rot, gguf_field(r, A + "rope.freq_base"), factor,
                             gguf_field(r, A + "rope.scaling.original_context_length"),
                             gguf_field(r, A + "rope.scaling.yarn_beta_fast"),
                             gguf_field(r, A + "rope.scaling.yarn_beta_slow"))
    mscale = 1.0 + gguf_field(r, A + "rope.scaling.yarn_log_multiplier") * math.log(factor)
    kq_scale = mscale * mscale / math.sqrt(dk)
    n_dense = gguf_field(r, A + "leading_dense_block_count")
    n_exp, k = gguf_field(r, A + "expert_count"), gguf_field(r, A + "expert_used_count")
    n_group, group_used = gguf_field(r, A + "expert_group_count", 1), gguf_field(r, A + "expert_group_used_count", 1)
    sigmoid = gguf_field(r, A + "expert_gating_func") == gguf.ExpertGatingFuncType.SIGMOID
    w_norm = bool(gguf_field(r, A + "expert_weights_norm", False))
    w_scale = gguf_field(r, A + "expert_weights_scale", 1.0)
    n_layer = gguf_field(r, A + "block_count")

    rows = []
    for seq in seqs:
        n = len(seq)
        pos = np.arange(n, dtype=np.float64)
        x = T["token_embd.weight"][seq]
        mask = np.triu(np.full((n, n), -np.inf), 1)
        for il in range(n_layer):
            b = f"blk.{il}."
            h = rms_norm(x, T[b + "attn_norm.weight"], eps)
            if b + "attn_q.weight" in T:
                q = h @ T[b + "attn_q.weight"].T
            else:
                q_a = rms_norm(h @ T[b + "attn_q_a.weight"].T, T[b + "attn_q_a_norm.weight"], eps)
                q = q_a @ T[b + "attn_q_b.weight"].T
            q = q.reshape(n, n_head, dk)
            q_nope, q_pe = q[..., :nope], rope_adjacent(q[..., nope:], pos, inv_freq)
            kv = h @ T[b + "attn_kv_a_mqa.weight"].T
            lat = rms_norm(kv[:, :kv_lora], T[b + "attn_kv_a_norm.weight"], eps)  # [n, kv_lora]
            k_pe = rope_adjacent(kv[:, None, kv_lora:], pos, inv_freq)[:, 0]      # [n, n_rot]
            if is_mla:  # absorbed: scores over the latent, values decompressed after
                q_abs = np.einsum("thn,hcn->thc", q_nope, T[b + "attn_k_b.weight"])
                s = (np.einsum("thc,sc->hts", q_abs, lat) + np.einsum("thr,sr->hts", q_pe, k_pe)) * kq_scale
                p = np.exp(s + mask - (s + mask).max(-1, keepdims=True))
                p /= p.sum(-1, keepdims=True)
                o = np.einsum("hjc,thc->thj", T[b + "attn_v_b.weight"], np.einsum("hts,sc->thc", p, lat))
            else:
                kvb = (lat @ T[b + "attn_kv_b.weight"].T).reshape(n, n_head, nope + dv)
                k_nope, v = kvb[..., :nope], kvb[..., nope:]
                s = (np.einsum("thn,shn->hts", q_nope, k_nope) + np.einsum("thr,sr->hts", q_pe, k_pe)) * kq_scale
                p = np.exp(s + mask - (s + mask).max(-1, keepdims=True))
                p /= p.sum(-1, keepdims=True)
                o = np.einsum("hts,shj->thj", p, v)
            x = x + o.reshape(n, n_head * dv) @ T[b + "attn_output.weight"].T
            h = rms_norm(x, T[b + "ffn_norm.weight"], eps)
            if il < n_dense:
                y = swiglu(h, T[b + "ffn_gate.weight"], T[b + "ffn_up.weight"], T[b + "ffn_down.weight"])
            else:
                y = swiglu(h, T[b + "ffn_gate_shexp.weight"], T[b + "ffn_up_shexp.weight"], T[b + "ffn_down_shexp.weight"])
                logits = h @ T[b + "ffn_gate_inp.weight"].T
                for t in range(n):
                    if sigmoid:
                        s_t = 1.0 / (1.0 + np.exp(-logits[t]))
                    else:
                        s_t = np.exp(logits[t] - logits[t].max())
                        s_t /= s_t.sum()
                    c = s_t + T.get(b + "exp_probs_b.bias", 0.0)
                    grp = c.reshape(n_group, -1)
                    gscore = np.sort(grp, -1)[:, -2:].sum(-1) if sigmoid else grp.max(-1)
                    keep = np.argsort(-gscore, kind="stable")[:group_used]
                    masked = np.full(n_exp, -np.inf)
                    per = n_exp // n_group
                    for g in keep:
                        masked[g * per:(g + 1) * per] = c[g * per:(g + 1) * per]
                    chosen = np.argsort(-masked, kind="stable")[:k]
                    if routes is not None:
                        routes.append(set(chosen.tolist()))
                    wts = s_t[chosen]
                    if w_norm:
                        wts = wts / wts.sum()
                    wts = wts * w_scale
                    for e, we in zip(chosen, wts):
                        ge = T[b + "ffn_gate_exps.weight"][e] @ h[t]
                        ue = T[b + "ffn_up_exps.weight"][e] @ h[t]
                        y[t] += we * (T[b + "ffn_down_exps.weight"][e] @ (silu(ge) * ue))
            x = x + y
        rows.append(rms_norm(x, T["output_norm.weight"], eps) @ T["output.weight"].T)
    return np.concatenate(rows)


# ---------------------------------------------------------------------------------------

def reload_check(out_dir, cls, ref_rows, seqs):
    """Loads config.json + model.safetensors back with transformers and compares logits
    (bf16 storage is exact: every weight is bf16-representable)."""
    model = cls.from_pretrained(out_dir, dtype=torch.float32, attn_implementation="eager",
                                experts_implementation="eager").eval()
    with torch.no_grad():
        rows = [model(torch.tensor([s])).logits[0].numpy() for s in seqs]
    return float(np.abs(np.concatenate(rows) - np.concatenate(ref_rows)).max())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--f16", action="store_true", help="also write model-f16.gguf (about 430 KB per fixture)")
    kinds = ["f32", "f16", "q8_0"] if ap.parse_args().f16 else ["f32", "q8_0"]
    torch.set_num_threads(1)
    for name, variant, cfg, cls, base_seed, router_std, extra_keys in fixture_specs():
        out_dir = os.path.normpath(os.path.join(OUT_ROOT, name))
        os.makedirs(out_dir, exist_ok=True)
        cfg._attn_implementation = "eager"
        cfg._experts_implementation = "eager"
        torch.manual_seed(base_seed)
        model = cls(cfg).to(torch.float32).eval()
        model.set_experts_implementation("eager")
        qmodel = copy.deepcopy(model)
        for attempt in range(MAX_ATTEMPTS):
            seed = base_seed + attempt
            randomize(model, seed, router_std)
            g = torch.Generator().manual_seed(seed + 100000)
            seqs = [torch.randint(0, cfg.vocab_size, (n,), generator=g).tolist() for n in SEQUENCE_LENGTHS]
            rows, records = run_with_routing(model, cfg, variant, seqs)
            summary = routing_summary(records)
            if min(summary["min_group_margin"], summary["min_expert_margin"]) <= MIN_MARGIN:
                continue
            # and weights whose q8_0 rounding leaves every routing decision unchanged and decisive
            q8_0_roundtrip(model, qmodel)
            q_rows, q_records = run_with_routing(qmodel, cfg, variant, seqs)
            q_summary = routing_summary(q_records)
            summary["q8_0_weights_routing_differences"] = sum(a[1] != b[1] for a, b in zip(records, q_records))
            summary["q8_0_weights_min_margins"] = [q_summary["min_group_margin"], q_summary["min_expert_margin"]]
            summary["q8_0_weights_max_abs_logit_diff"] = float(
                np.abs(np.concatenate(q_rows) - np.concatenate(rows)).max())
            if (summary["q8_0_weights_routing_differences"] == 0
                    and min(summary["q8_0_weights_min_margins"]) > MIN_MARGIN):
                break
        else:
            raise SystemExit(f"{name}: no seed in {MAX_ATTEMPTS} gives routing margins > {MIN_MARGIN} stable under q8_0")
        print(f"{name}: seed {seed} (attempt {attempt}), routing {summary}", file=sys.stderr)
        assert summary["mismatches_with_transformers"] == 0, "route() does not reproduce transformers' router"

        write_hf(out_dir, model, cfg, extra_keys)
        ref = np.concatenate(rows).astype("<f4")
        ref.tofile(os.path.join(out_dir, "reference_logits.bin"))

        gguf_files, tensor_types = {}, {}
        for kind in kinds:
            gguf_files[kind] = f"model-{kind}.gguf"
            tensor_types[kind] = write_gguf(os.path.join(out_dir, gguf_files[kind]), name, variant, cfg,
                                            gguf_tensors(model, cfg, split_kv=False), kind, split_kv=False)
        gguf_files["f32-split-kv"] = "model-f32-split-kv.gguf"
        tensor_types["f32-split-kv"] = write_gguf(os.path.join(out_dir, gguf_files["f32-split-kv"]), name, variant, cfg,
                   gguf_tensors(model, cfg, split_kv=True), "f32", split_kv=True)

        checks = {"safetensors_reload_max_abs_diff": reload_check(out_dir, cls, rows, seqs)}
        for kind, fname in gguf_files.items():
            routes = []
            d = float(np.abs(gguf_forward(os.path.join(out_dir, fname), seqs, routes) - ref).max())
            checks[f"numpy_{kind}_max_abs_diff"] = d
            checks[f"numpy_{kind}_routing_differences"] = sum(a != rec[1] for a, rec in zip(routes, records))
            if kind != "q8_0" and d > GGUF_CHECK_TOL:
                raise SystemExit(f"{name}: {fname} re-implementation differs from the reference by {d}")
        assert checks["safetensors_reload_max_abs_diff"] < 1e-5, checks
        print(f"{name}: checks {checks}", file=sys.stderr)

        rp = cfg.rope_parameters
        m_all = 0.1 * rp["mscale_all_dim"] * math.log(rp["factor"]) + 1.0
        m_rot = 0.1 * rp["mscale"] * math.log(rp["factor"]) + 1.0
        manifest = {
            "name": name, "arch": "deepseek2", "vocab": cfg.vocab_size, "sequences": seqs,
            "logits_file": "reference_logits.bin",
            "safetensors_dtype": "bfloat16",
            "safetensors_float32_tensors": ["model.layers.*.mlp.gate.e_score_correction_bias"] if variant == "v3" else [],
            "gguf_files": gguf_files,
            "gguf_tensor_types": {k: sorted(set(v.values())) for k, v in tensor_types.items()},
            "gguf_f16_fallback_in_q8_0": sorted(n for n, t in tensor_types["q8_0"].items() if t == "F16"),
            "hf_architecture": type(model).__name__,
            "transformers_version": __import__("transformers").__version__,
            "torch_version": torch.__version__,
            "seed": seed,
            "config": {
                "hidden_size": cfg.hidden_size, "num_hidden_layers": cfg.num_hidden_layers,
                "num_attention_heads": cfg.num_attention_heads, "intermediate_size": cfg.intermediate_size,
                "q_lora_rank": cfg.q_lora_rank, "kv_lora_rank": cfg.kv_lora_rank,
                "qk_nope_head_dim": cfg.qk_nope_head_dim, "qk_rope_head_dim": cfg.qk_rope_head_dim,
                "v_head_dim": cfg.v_head_dim, "first_k_dense_replace": cfg.first_k_dense_replace,
                "n_routed_experts": cfg.n_routed_experts, "num_experts_per_tok": cfg.num_experts_per_tok,
                "n_shared_experts": cfg.n_shared_experts, "moe_intermediate_size": cfg.moe_intermediate_size,
                "scoring_func": extra_keys["scoring_func"], "topk_method": extra_keys["topk_method"],
                "n_group": cfg.n_group, "topk_group": cfg.topk_group, "norm_topk_prob": cfg.norm_topk_prob,
                "routed_scaling_factor": cfg.routed_scaling_factor, "rms_norm_eps": cfg.rms_norm_eps,
                "max_position_embeddings": cfg.max_position_embeddings, "rope_theta": rp["rope_theta"],
                "rope_scaling": {k: v for k, v in rp.items() if k != "rope_theta"},
                "tie_word_embeddings": cfg.tie_word_embeddings,
            },
            "derived": {
                "yarn_inv_freq": model.model.rotary_emb.inv_freq.tolist(),
                "yarn_low_high": yarn_low_high(cfg.qk_rope_head_dim, rp["rope_theta"], rp["original_max_position_embeddings"],
                                               rp["beta_fast"], rp["beta_slow"]),
                "rope_cos_sin_factor": float(model.model.rotary_emb.attention_scaling),
                "rope_cos_sin_factor_formula": "m(factor, mscale) / m(factor, mscale_all_dim), m(f, s) = 0.1*s*ln(f) + 1",
                "softmax_scale": float(model.model.layers[0].self_attn.scaling),
                "softmax_scale_formula": "(qk_nope_head_dim + qk_rope_head_dim)^-0.5 * m(factor, mscale_all_dim)^2",
                "softmax_scale_check": (cfg.qk_nope_head_dim + cfg.qk_rope_head_dim) ** -0.5 * m_all * m_all,
                "rope_factor_check": m_rot / m_all,
            },
            "conventions": {
                "rope_pairing_safetensors": "adjacent pairs (2i, 2i+1) of the qk_rope part, angle pos*inv_freq[i]; no row permutation",
                "rope_pairing_gguf": "adjacent pairs (2i, 2i+1) (llama.cpp LLAMA_ROPE_TYPE_NORM); rows not permuted by the converter",
                "hf_rope_interleave": bool(getattr(cfg, "rope_interleave", True)),
                "q_head_layout": "per head [qk_nope | qk_rope]",
                "kv_a_proj_with_mqa_layout": "[kv_lora_rank latent | qk_rope_head_dim k_pe]; latent RMS-normed by kv_a_layernorm, k_pe roped",
                "kv_b_proj_layout": "rows per head h: [k_nope (qk_nope) | v (v_head_dim)], weight [n_head*(qk_nope+v), kv_lora]",
                "attn_kv_b": "legacy GGUF: kv_b_proj.weight unchanged, ne [kv_lora, n_head*(qk_nope+v)]",
                "attn_k_b": "split GGUF: kv_b viewed [n_head, qk_nope+v, kv_lora], [:, :qk_nope, :] transposed to [n_head, kv_lora, qk_nope]; ne [qk_nope, kv_lora, n_head]",
                "attn_v_b": "split GGUF: [:, qk_nope:, :] as is, [n_head, v, kv_lora]; ne [kv_lora, v, n_head]",
                "experts_gguf": "ffn_{gate,up}_exps [E, moe_inter, hidden] (ne [hidden, moe_inter, E]), ffn_down_exps [E, hidden, moe_inter]",
                "router_scores": "softmax over all experts" if variant == "v2" else "sigmoid; selection adds e_score_correction_bias (exp_probs_b.bias), weights use the unbiased sigmoid",
                "router_group_score": "max over the group" if variant == "v2" else "sum of the top-2 biased scores of the group",
                "router_weights": ("softmax prob * routed_scaling_factor (no renormalization)" if variant == "v2"
                                   else "sigmoid / (sum over chosen + 1e-20) * routed_scaling_factor"),
                "rms_norm_eps_all_norms": cfg.rms_norm_eps,
            },
            "routing": summary,
            "checks": checks,
        }
        with open(os.path.join(out_dir, "reference.json"), "w") as f:
            json.dump(manifest, f)
            f.write("\n")
        print(f"{out_dir}: {sum(os.path.getsize(os.path.join(out_dir, f)) for f in os.listdir(out_dir))} bytes",
              file=sys.stderr)


if __name__ == "__main__":
    main()
