#!/usr/bin/env python3
"""Writes a GGUF with random weights in the shape of a real model, for speed
measurements where the real weights are not at hand. The tokenizer comes either from
another GGUF (--vocab-from: every tokenizer.* field is copied) or from a Hugging Face
tokenizer directory (--tokenizer-json), so both deepbatch and llama.cpp-family engines
load the file as they would the real model.

Shapes:
  r1-qwen-1.5b       qwen2, DeepSeek-R1-Distill-Qwen-1.5B: 28 layers, hidden 1536, 12 heads,
                     2 KV heads, FFN 8960, QKV bias, untied output (about 1.8 B parameters).
                     Default type f16 (as before).
  r1-qwen-mini       qwen2 at test size in the same form: 2 layers, hidden 128, 4 heads, 2 KV
                     heads, FFN 256, context 4096. With R1-Distill-Qwen's 151665-token vocab
                     (--vocab-from its vocab.gguf, which carries the chat template): 39 M
                     parameters, a 42 MB q8_0 file. Default type q8_0.
  deepseek-v2-lite   deepseek2, DeepSeek-V2-Lite: 27 layers, hidden 2048, 16 heads, no q
                     compression (attn_q), kv_lora 512, qk_nope 128, qk_rope 64, v 128;
                     layer 0 dense (FFN 10944), layers 1-26 MoE: 64 routed experts of width
                     1408, top-6, 2 shared experts (fused width 2816), softmax router, weights
                     not normalized, scale 1.0, no groups; YaRN factor 40 (original context
                     4096, beta 32/1, yarn_log_multiplier 0.0707), rope base 10000, context
                     163840, rms eps 1e-6. About 15.8 B parameters with a 129280-token vocab.
                     Default type q4_0.
  moonlight-16b-a3b  deepseek2 in DeepSeek-V3 form at Lite scale (moonshotai/Moonlight-16B-A3B):
                     as deepseek-v2-lite but dense FFN 11264, sigmoid router with a per-layer
                     exp_probs_b (e_score_correction_bias, F32 [64]), weights normalized,
                     scale 2.446, n_group 1 / topk_group 1; no rope scaling, rope base 50000,
                     context 8192, rms eps 1e-5. Default type q4_0.
  deepseek-v3-slice  deepseek2, DeepSeek-V3 / R1's own widths in 3 of its 61 layers: hidden
                     7168, 128 heads, q_lora 1536, kv_lora 512, qk_nope 128, qk_rope 64, v 128;
                     layer 0 dense (FFN 18432), layers 1-2 MoE: 256 routed experts of width
                     2048, top-8 from the best 4 of 8 groups, 1 shared, sigmoid router with
                     exp_probs_b, weights normalized, scale 2.5; YaRN factor 40 (original 4096,
                     beta 32/1, mscale_all_dim 1.0), rope base 10000. About 14 GB in q4_0.
  kimi-k2-slice      deepseek2, Kimi-K2's widths in 2 of its 61 layers: as deepseek-v3-slice
                     but 64 heads, 384 routed experts (one group), scale 2.827, rope base 50000,
                     YaRN factor 32 (beta 1/1); layer 0 dense, layer 1 MoE. About 11 GB in q4_0.
  deepseek-v2-mini   deepseek2 at test size, V2-Lite's form (softmax router, attn_q, no groups):
                     3 layers (layer 0 dense, FFN 512), hidden 256, 4 heads, kv_lora 64, qk_nope
                     32, qk_rope 16, v 32; 8 routed experts of width 128, top-2, 1 shared; YaRN
                     factor 4 (original context 1024, mscale_all_dim 0.707), rope base 10000,
                     context 4096, rms eps 1e-6. With the 129280-token vocab: 68.7 M parameters,
                     a 52 MB q4_0 file written in about a second. Default type q4_0.
  deepseek-v3-mini   as deepseek-v2-mini in DeepSeek-V3's form: q_lora 96 (attn_q_a / attn_q_b),
                     sigmoid router with exp_probs_b, weights normalized, scale 2.5, 2 shared
                     experts, 4 groups of 2 experts with the best 2 groups eligible (group-limited
                     routing), YaRN mscale_all_dim 1.0. Every row length is a multiple of 32, so
                     q4_0 and q8_0 apply to every matrix (q4_k only to rows of 256, the hidden
                     size; the others get --k-fallback). tests/e2e/deepseek writes both at test time.

DeepSeek tensors follow llama.cpp's deepseek2 naming and layouts (see the docstring of
scripts/gen_deepseek_fixtures.py); numpy shapes are outermost-first, ggml ne reversed:
  attn_q {16*192, 2048}  attn_kv_a_mqa {512+64, 2048}  attn_kv_a_norm [512]
  attn_kv_b {16*(128+128), 512} (legacy layout, head_count_kv 16, key_length 192,
      value_length 128) or, with --split-kv, attn_k_b [16][512][128] + attn_v_b
      [16][128][512] (head_count_kv 1, key_length 576, value_length 512,
      key_length_mla 192, value_length_mla 128)
  attn_output {2048, 16*128}; ffn_gate_inp {64, 2048} F32; ffn_{gate,up}_exps
  [64][1408][2048]; ffn_down_exps [64][2048][1408]; ffn_{gate,up}_shexp {2816, 2048};
  ffn_down_shexp {2048, 2816}; exp_probs_b.bias [64] F32 (moonlight only).

Tensor types (--type): matrices are written DIRECTLY as quantized blocks (random codes,
fixed-magnitude scales), one tensor at a time, so the file never sits in memory and no
F16 intermediate exists. Norms, the router (ffn_gate_inp), exp_probs_b and biases stay
F32. Like llama-quantize: output.weight is Q6_K for q4_0 / q4_k (Q8_0 for q8_0) and
token_embd.weight has the base type. For q4_k, matrices whose rows are not a multiple of
256 (ffn_down_exps rows of 1408, the dense ffn_down rows of 10944, attn_k_b rows of 128)
get the fallback type --k-fallback: q5_0 by default, as llama-quantize does (q8_0 or q4_0
on request).
f16 writes F16 matrices (normal, std --std) as the qwen2 shape always did.

Scales: every quantized weight is d * (code - centre) with uniform random codes, so its
std is |d| * sqrt(E[(code - centre)^2]) and |d| is set for a std of --std (0.02, the
usual initialisation / trained-weight scale): Q4_0 d = std / sqrt(21.5) (codes 0..15,
centre 8), Q5_0 d = std / sqrt(85.5), Q8_0 d = std / sqrt(5460.5) (codes -127..127), each
block's d with a random sign so the mean is 0; Q4_K: all 8 sub-scales and mins 8,
dmin = 7.5 d, so w = 8 d (code - 7.5), d = std / (8 sqrt(21.25)); Q6_K: sub-scales
+-4 (random sign), d = std / (4 sqrt(341.5)). With RMS-normed inputs, a projection's
output has an RMS of about std * sqrt(fan_in) (0.9 for 2048 inputs), so activations
stay O(1) through the 27 layers; router logits (F32 normal, std 0.02) are O(1) too, so
routing spreads over all 64 experts. Norm weights are 1.

Examples:
  python3 bench/make_random_gguf.py --shape deepseek-v2-lite \
      --tokenizer-json tests/data/tokenizer/deepseek-v3 --out /tmp/random-deepseek-v2-lite-q4_0.gguf
  python3 bench/make_random_gguf.py --shape deepseek-v2-lite --split-kv --type q4_k --k-fallback q8_0 \
      --tokenizer-json tests/data/tokenizer/deepseek-v3 --out /tmp/random-deepseek-v2-lite-q4_k.gguf
  python3 bench/make_random_gguf.py --shape moonlight-16b-a3b \
      --tokenizer-json tests/data/tokenizer/deepseek-v3 --out /tmp/random-moonlight-16b-a3b-q4_0.gguf
  python3 bench/make_random_gguf.py --shape deepseek-v3-mini --split-kv --type q4_k --k-fallback q8_0 \
      --tokenizer-json tests/data/tokenizer/deepseek-v3 --out /tmp/random-deepseek-v3-mini-q4_k.gguf
  python3 bench/make_random_gguf.py --shape r1-qwen-1.5b \
      --vocab-from tests/data/tokenizer/deepseek-r1-distill-qwen/vocab.gguf --out random-r1-qwen-1.5b-f16.gguf
Sizes of the Lite shapes (15.82 B parameters either one): q4_0 8.98 GB; q4_k 9.59 GB (11.40 GB with
--k-fallback q8_0); q8_0 16.82 GB. The q4_0 V2-Lite file took 25-40 s on a 2-core machine
(mostly disk writes; about 350 MB of memory). Add --verify to reopen the file with
gguf.GGUFReader, check every tensor's shape and type, and print the weight std of a
sample of blocks per type. --vocab-size only applies to --tokenizer-json.

Divergences from the real models: random weights (the outputs are meaningless; routing is
near-uniform over experts, unlike a trained router); the DeepSeek-V3 tokenizer (129280
entries, 128815 used, the rest "[PADn]" UNUSED) replaces DeepSeek-V2-Lite's 102400-token
DeepSeek-LLM tokenizer and Moonlight's 163840-token tiktoken one, so token_embd/output
have 129280 rows; every matrix has one type (no Q4_K_M-style per-tensor bumps).
"""
import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import gguf

from gguf_tokenizer import copy_tokenizer, hf_tokenizer

Q = gguf.GGMLQuantizationType

_DEEPSEEK_LITE = dict(
    arch="deepseek2", layers=27, hidden=2048, heads=16, q_lora=0, kv_lora=512, nope=128,
    rope=64, v=128, dense_layers=1, experts=64, experts_used=6, shared=2, expert_ffn=1408,
    groups=1, groups_used=1, default_type="q4_0")

# DeepSeek-V3's own widths (deepseek-ai/DeepSeek-V3 config.json), in slices of a few
# layers that fit one machine: the full model has 61 (3 dense, 58 MoE).
_DEEPSEEK_V3 = dict(
    arch="deepseek2", hidden=7168, heads=128, q_lora=1536, kv_lora=512, nope=128, rope=64, v=128,
    dense_layers=1, ffn=18432, experts=256, experts_used=8, shared=1, expert_ffn=2048, groups=8,
    groups_used=4, gating="sigmoid", weights_norm=True, weights_scale=2.5, exp_probs_b=True,
    rope_base=10000.0, ctx=163840, eps=1e-6, default_type="q4_0",
    yarn=dict(factor=40.0, orig_ctx=4096, beta_fast=32.0, beta_slow=1.0, mscale_all_dim=1.0))

# Test-sized deepseek2: 3 layers (the first dense), every row a multiple of 32 (Q4_0 / Q8_0 blocks)
_DEEPSEEK_MINI = dict(
    arch="deepseek2", layers=3, hidden=256, heads=4, q_lora=0, kv_lora=64, nope=32, rope=16, v=32,
    dense_layers=1, ffn=512, experts=8, experts_used=2, shared=1, expert_ffn=128, groups=1,
    groups_used=1, rope_base=10000.0, ctx=4096, eps=1e-6, default_type="q4_0")
_MINI_YARN = dict(factor=4.0, orig_ctx=1024, beta_fast=32.0, beta_slow=1.0)

SHAPES = {
    "r1-qwen-1.5b": dict(arch="qwen2", layers=28, hidden=1536, heads=12, kv_heads=2, ffn=8960,
                         qkv_bias=True, ctx=131072, rope_base=10000.0, eps=1e-6, default_type="f16"),
    "r1-qwen-mini": dict(arch="qwen2", layers=2, hidden=128, heads=4, kv_heads=2, ffn=256,
                         qkv_bias=True, ctx=4096, rope_base=10000.0, eps=1e-6, default_type="q8_0"),
    # deepseek-ai/DeepSeek-V2-Lite config.json (vocab 102400 there)
    "deepseek-v2-lite": dict(_DEEPSEEK_LITE, ffn=10944, gating="softmax", weights_norm=False,
                             weights_scale=1.0, exp_probs_b=False, rope_base=10000.0, ctx=163840,
                             eps=1e-6, yarn=dict(factor=40.0, orig_ctx=4096, beta_fast=32.0,
                                                 beta_slow=1.0, mscale_all_dim=0.707),
                             real_vocab=102400),
    # moonshotai/Moonlight-16B-A3B config.json (vocab 163840 there)
    "moonlight-16b-a3b": dict(_DEEPSEEK_LITE, ffn=11264, gating="sigmoid", weights_norm=True,
                              weights_scale=2.446, exp_probs_b=True, rope_base=50000.0, ctx=8192,
                              eps=1e-5, yarn=None, real_vocab=163840),
    # DeepSeek-V3 / R1: layer 0 dense, layers 1-2 MoE (256 experts of 2048, top-8 of 8 groups,
    # 4 eligible); about 14 GB in q4_0
    "deepseek-v3-slice": dict(_DEEPSEEK_V3, layers=3, real_vocab=129280),
    # moonshotai/Kimi-K2-Instruct config.json: V3's form with 384 experts, 64 heads, one
    # group, scale 2.827, rope base 50000, YaRN factor 32 (beta 1/1); layer 0 dense, layer 1
    # MoE; about 11 GB in q4_0 (vocab 163840 there)
    "kimi-k2-slice": dict(_DEEPSEEK_V3, layers=2, heads=64, experts=384, groups=1, groups_used=1,
                          weights_scale=2.827, rope_base=50000.0, ctx=131072,
                          yarn=dict(factor=32.0, orig_ctx=4096, beta_fast=1.0, beta_slow=1.0,
                                    mscale_all_dim=1.0), real_vocab=163840),
    # tiny files for tests, with the real 129280-token vocab: V2-Lite's form ...
    "deepseek-v2-mini": dict(_DEEPSEEK_MINI, gating="softmax", weights_norm=False, weights_scale=1.0,
                             exp_probs_b=False, yarn=dict(_MINI_YARN, mscale_all_dim=0.707)),
    # ... and DeepSeek-V3's (q_lora; sigmoid router, exp_probs_b, group-limited routing)
    "deepseek-v3-mini": dict(_DEEPSEEK_MINI, q_lora=96, shared=2, groups=4, groups_used=2,
                             gating="sigmoid", weights_norm=True, weights_scale=2.5, exp_probs_b=True,
                             yarn=dict(_MINI_YARN, mscale_all_dim=1.0)),
}

TYPES = {"f16": Q.F16, "q4_0": Q.Q4_0, "q4_k": Q.Q4_K, "q8_0": Q.Q8_0}
FALLBACKS = {"q5_0": Q.Q5_0, "q8_0": Q.Q8_0, "q4_0": Q.Q4_0}
FILE_TYPES = {Q.F16: gguf.LlamaFileType.MOSTLY_F16, Q.Q4_0: gguf.LlamaFileType.MOSTLY_Q4_0,
              Q.Q4_K: gguf.LlamaFileType.MOSTLY_Q4_K_S, Q.Q8_0: gguf.LlamaFileType.MOSTLY_Q8_0}


# ---------------------------------------------------------------------------------------
# Random quantized blocks

def _random_bytes(rng, n):
    words = rng.integers(0, 2**64 - 1, (n + 7) // 8, dtype=np.uint64, endpoint=True)
    return words.view(np.uint8)[:n]


def _f16_bits(x):
    return np.float16(x).view(np.uint16)


def random_blocks(qtype, n_rows, ne0, rng, std):
    """uint8 [n_rows, row_bytes]: rows of random `qtype` blocks whose weights have mean 0
    and standard deviation `std` (see the module docstring for the scale rule)."""
    blk, size = gguf.GGML_QUANT_SIZES[qtype]
    assert ne0 % blk == 0
    nb = n_rows * (ne0 // blk)
    b = _random_bytes(rng, nb * size).reshape(nb, size)  # codes are the random bytes
    h = b.view(np.uint16)
    if qtype in (Q.Q4_0, Q.Q5_0, Q.Q8_0):  # d first; keep the random sign bit
        if qtype == Q.Q8_0:
            codes = b[:, 2:].view(np.int8)
            np.maximum(codes, -127, out=codes)  # ggml's quantizer never writes -128
        ex2 = {Q.Q4_0: 21.5, Q.Q5_0: 85.5, Q.Q8_0: 5460.5}[qtype]
        h[:, 0] &= 0x8000
        h[:, 0] |= _f16_bits(std / np.sqrt(ex2))
    elif qtype == Q.Q4_K:  # d, dmin, 12 bytes of 6-bit scales/mins (all 8), 128 code bytes
        d = std / (8.0 * np.sqrt(21.25))
        h[:, 0] = _f16_bits(d)
        h[:, 1] = _f16_bits(7.5 * d)
        b[:, 4:12] = 8
        b[:, 12:16] = 0x88
    elif qtype == Q.Q6_K:  # ql[128] qh[64] int8 scales[16] d
        sc = b[:, 192:208].view(np.int8)
        sc[...] = np.where(sc < 0, np.int8(-4), np.int8(4))
        h[:, 104] = _f16_bits(std / (4.0 * np.sqrt(341.5)))
    else:
        raise ValueError("no random-block rule for %s" % qtype.name)
    return b.reshape(n_rows, (ne0 // blk) * size)


# ---------------------------------------------------------------------------------------
# Tensor lists: (name, numpy shape, kind); kind "w" = matrix of the chosen type,
# "embd" / "output", "norm" (F32 ones), "router" / "bias" (F32 normal), "f32" (F32 small)

def qwen2_tensors(s, n_vocab):
    h, head_dim = s["hidden"], s["hidden"] // s["heads"]
    kv = s["kv_heads"] * head_dim
    out = [("token_embd.weight", (n_vocab, h), "embd")]
    for i in range(s["layers"]):
        p = "blk.%d." % i
        out += [(p + "attn_norm.weight", (h,), "norm"),
                (p + "attn_q.weight", (h, h), "w"),
                (p + "attn_k.weight", (kv, h), "w"),
                (p + "attn_v.weight", (kv, h), "w")]
        if s["qkv_bias"]:
            out += [(p + "attn_q.bias", (h,), "bias"), (p + "attn_k.bias", (kv,), "bias"),
                    (p + "attn_v.bias", (kv,), "bias")]
        out += [(p + "attn_output.weight", (h, h), "w"),
                (p + "ffn_norm.weight", (h,), "norm"),
                (p + "ffn_gate.weight", (s["ffn"], h), "w"),
                (p + "ffn_up.weight", (s["ffn"], h), "w"),
                (p + "ffn_down.weight", (h, s["ffn"]), "w")]
    out += [("output_norm.weight", (h,), "norm"), ("output.weight", (n_vocab, h), "output")]
    return out


def deepseek2_tensors(s, n_vocab, split_kv):
    h, nh, kvl = s["hidden"], s["heads"], s["kv_lora"]
    nope, rope, v = s["nope"], s["rope"], s["v"]
    E, ef, sh = s["experts"], s["expert_ffn"], s["expert_ffn"] * s["shared"]
    out = [("token_embd.weight", (n_vocab, h), "embd")]
    for i in range(s["layers"]):
        p = "blk.%d." % i
        out.append((p + "attn_norm.weight", (h,), "norm"))
        if s["q_lora"]:
            out += [(p + "attn_q_a.weight", (s["q_lora"], h), "w"),
                    (p + "attn_q_a_norm.weight", (s["q_lora"],), "norm"),
                    (p + "attn_q_b.weight", (nh * (nope + rope), s["q_lora"]), "w")]
        else:
            out.append((p + "attn_q.weight", (nh * (nope + rope), h), "w"))
        out += [(p + "attn_kv_a_mqa.weight", (kvl + rope, h), "w"),
                (p + "attn_kv_a_norm.weight", (kvl,), "norm")]
        if split_kv:
            out += [(p + "attn_k_b.weight", (nh, kvl, nope), "w"),
                    (p + "attn_v_b.weight", (nh, v, kvl), "w")]
        else:
            out.append((p + "attn_kv_b.weight", (nh * (nope + v), kvl), "w"))
        out += [(p + "attn_output.weight", (h, nh * v), "w"),
                (p + "ffn_norm.weight", (h,), "norm")]
        if i < s["dense_layers"]:
            out += [(p + "ffn_gate.weight", (s["ffn"], h), "w"),
                    (p + "ffn_up.weight", (s["ffn"], h), "w"),
                    (p + "ffn_down.weight", (h, s["ffn"]), "w")]
            continue
        out.append((p + "ffn_gate_inp.weight", (E, h), "router"))
        if s["exp_probs_b"]:
            out.append((p + "exp_probs_b.bias", (E,), "f32"))
        out += [(p + "ffn_gate_exps.weight", (E, ef, h), "w"),
                (p + "ffn_up_exps.weight", (E, ef, h), "w"),
                (p + "ffn_down_exps.weight", (E, h, ef), "w"),
                (p + "ffn_gate_shexp.weight", (sh, h), "w"),
                (p + "ffn_up_shexp.weight", (sh, h), "w"),
                (p + "ffn_down_shexp.weight", (h, sh), "w")]
    out += [("output_norm.weight", (h,), "norm"), ("output.weight", (n_vocab, h), "output")]
    return out


def tensor_type(kind, ne0, base, k_fallback):
    """The GGML type of a tensor, following llama-quantize's choices (see the docstring)."""
    if kind not in ("w", "embd", "output"):
        return Q.F32
    if base == Q.F16:
        return Q.F16
    t = base
    if kind == "output" and base != Q.Q8_0:
        t = Q.Q6_K
    blk = gguf.GGML_QUANT_SIZES[t][0]
    if ne0 % blk:
        if blk == 256:  # k-quant: llama-quantize's fallback (Q6_K -> Q8_0)
            t = Q.Q8_0 if t == Q.Q6_K else k_fallback
        if ne0 % gguf.GGML_QUANT_SIZES[t][0]:
            t = Q.F16
    return t


def make_generator(kind, shape, qtype, rng, std):
    """A function producing the tensor's data (numpy array) when called."""
    if qtype == Q.F32:
        if kind == "norm":
            return lambda: np.ones(shape, np.float32)
        scale = {"router": std, "bias": std, "f32": 0.01}[kind]
        return lambda: rng.standard_normal(shape, dtype=np.float32) * np.float32(scale)
    if qtype == Q.F16:
        return lambda: (rng.standard_normal(shape, dtype=np.float32) * std).astype(np.float16)
    n_rows = int(np.prod(shape[:-1]))
    return lambda: random_blocks(qtype, n_rows, shape[-1], rng, std)


def qwen2_legacy_data(tensors, rng):
    """Generators reproducing the original F16 qwen2 writer draw for draw (same bytes for a
    given seed): mat() = normal * 0.02 in F16, vec() = 1 + 0 * normal or 0.02 * normal."""
    gens = []
    for name, shape, kind in tensors:
        if kind == "norm":
            gens.append(lambda shape=shape: (1.0 + 0.0 * rng.standard_normal(shape[0], dtype=np.float32)).astype(np.float32))
        elif kind == "bias":
            gens.append(lambda shape=shape: (0.0 + 0.02 * rng.standard_normal(shape[0], dtype=np.float32)).astype(np.float32))
        else:
            gens.append(lambda shape=shape: (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float16))
    return gens


# ---------------------------------------------------------------------------------------
# Metadata

def add_qwen2_kv(w, s):
    a = s["arch"]
    w.add_uint32(a + ".block_count", s["layers"])
    w.add_uint32(a + ".context_length", s["ctx"])
    w.add_uint32(a + ".embedding_length", s["hidden"])
    w.add_uint32(a + ".feed_forward_length", s["ffn"])
    w.add_uint32(a + ".attention.head_count", s["heads"])
    w.add_uint32(a + ".attention.head_count_kv", s["kv_heads"])
    w.add_float32(a + ".rope.freq_base", s["rope_base"])
    w.add_float32(a + ".attention.layer_norm_rms_epsilon", s["eps"])


def add_deepseek2_kv(w, s, n_vocab, split_kv):
    """Same keys and order as scripts/gen_deepseek_fixtures.py's write_gguf()."""
    w.add_block_count(s["layers"])
    w.add_context_length(s["ctx"])
    w.add_embedding_length(s["hidden"])
    w.add_feed_forward_length(s["ffn"])
    w.add_head_count(s["heads"])
    w.add_head_count_kv(1 if split_kv else s["heads"])
    y = s["yarn"]
    if y:
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(y["factor"])
        w.add_rope_scaling_orig_ctx_len(y["orig_ctx"])
        w.add_rope_scaling_yarn_beta_fast(y["beta_fast"])
        w.add_rope_scaling_yarn_beta_slow(y["beta_slow"])
    w.add_rope_freq_base(s["rope_base"])
    w.add_layer_norm_rms_eps(s["eps"])
    w.add_expert_count(s["experts"])
    w.add_expert_used_count(s["experts_used"])
    w.add_expert_group_count(s["groups"])
    w.add_expert_group_used_count(s["groups_used"])
    w.add_expert_gating_func(gguf.ExpertGatingFuncType.SOFTMAX if s["gating"] == "softmax"
                             else gguf.ExpertGatingFuncType.SIGMOID)
    w.add_leading_dense_block_count(s["dense_layers"])
    w.add_vocab_size(n_vocab)
    if s["q_lora"]:
        w.add_q_lora_rank(s["q_lora"])
    w.add_kv_lora_rank(s["kv_lora"])
    if split_kv:
        w.add_key_length(s["kv_lora"] + s["rope"])
        w.add_value_length(s["kv_lora"])
        w.add_key_length_mla(s["nope"] + s["rope"])
        w.add_value_length_mla(s["v"])
    else:
        w.add_key_length(s["nope"] + s["rope"])
        w.add_value_length(s["v"])
    w.add_expert_feed_forward_length(s["expert_ffn"])
    w.add_expert_shared_count(s["shared"])
    w.add_expert_weights_scale(s["weights_scale"])
    if s["weights_norm"]:  # the converter writes it only when true
        w.add_expert_weights_norm(True)
    w.add_rope_dimension_count(s["rope"])
    if y:
        w.add_rope_scaling_yarn_log_mul(0.1 * y["mscale_all_dim"])


# ---------------------------------------------------------------------------------------

def verify(path, types, std):
    """Reopens `path` and checks names, shapes and types; prints the std of a sample."""
    r = gguf.GGUFReader(path)
    assert len(r.tensors) == len(types), (len(r.tensors), len(types))
    seen = {}
    for t in r.tensors:
        want_shape, want_type = types[t.name]
        got_shape = tuple(int(x) for x in reversed(t.shape))  # reader gives ggml ne
        if got_shape != want_shape or t.tensor_type != want_type:
            sys.exit("verify: %s is %s %s, expected %s %s" % (t.name, t.tensor_type.name, got_shape,
                                                                 want_type.name, want_shape))
        if t.tensor_type not in seen and t.tensor_type not in (Q.F32,):
            rows = np.asarray(t.data).reshape(-1, np.asarray(t.data).shape[-1])[:64]
            x = gguf.quants.dequantize(rows, t.tensor_type) if t.tensor_type != Q.F16 else rows.astype(np.float32)
            seen[t.tensor_type] = (t.name, float(x.mean()), float(x.std()))
    print("verify: %d tensors, names / shapes / types as written" % len(r.tensors))
    for qt, (name, mean, sd) in seen.items():
        print("  %-5s sample of %s: mean %+.5f std %.5f (target %.3g)" % (qt.name, name, mean, sd, std))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", choices=sorted(SHAPES), required=True)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--vocab-from", help="a GGUF whose tokenizer.* fields are copied")
    src.add_argument("--tokenizer-json", metavar="DIR",
                     help="a Hugging Face tokenizer directory (tokenizer.json, tokenizer_config.json)")
    ap.add_argument("--tokenizer-pre", default="deepseek-v3",
                    help="tokenizer.ggml.pre for --tokenizer-json (default deepseek-v3)")
    ap.add_argument("--vocab-size", type=int,
                    help="model vocabulary (rows of token_embd/output) for --tokenizer-json; default: "
                         "129280 for deepseek-v3, else the tokenizer's id count")
    ap.add_argument("--type", choices=sorted(TYPES), help="matrix type (default: f16 for qwen2, q4_0 for deepseek2)")
    ap.add_argument("--k-fallback", choices=sorted(FALLBACKS), default="q5_0",
                    help="q4_k only: type of matrices whose rows are not a multiple of 256 (default q5_0, as "
                         "llama-quantize; deepbatch lacks Q5_0 matrix products: use q8_0)")
    ap.add_argument("--split-kv", action="store_true",
                    help="deepseek2: attn_k_b + attn_v_b (current llama.cpp layout) instead of attn_kv_b")
    ap.add_argument("--std", type=float, default=0.02, help="standard deviation of the weights (default 0.02)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--verify", action="store_true", help="reopen the file and check it")
    ap.add_argument("--layers", type=int,
                    help="keep only the first N layers of the shape (its widths unchanged; deepseek2: at least "
                         "one MoE layer after the dense ones), for per-layer measurements at a fraction of the size")
    args = ap.parse_args()
    s = SHAPES[args.shape]
    if args.layers is not None:
        first_moe = s.get("dense_layers", 0) + 1
        if not first_moe <= args.layers <= s["layers"]:
            ap.error(f"--layers {args.layers}: {args.shape} takes {first_moe} to {s['layers']}")
        s = dict(s, layers=args.layers)
    deepseek = s["arch"] == "deepseek2"
    if args.split_kv and not deepseek:
        ap.error("--split-kv applies to the deepseek2 shapes")
    qtype = TYPES[args.type or s["default_type"]]
    rng = np.random.default_rng(args.seed)
    t0 = time.time()

    w = gguf.GGUFWriter(args.out, s["arch"])
    w.add_name("random " + args.shape + (f", {args.layers} layers" if args.layers else ""))
    if args.vocab_from:
        n_vocab = copy_tokenizer(args.vocab_from, w)
    else:
        n_vocab = hf_tokenizer(args.tokenizer_json, w, args.tokenizer_pre, args.vocab_size)
    if deepseek:
        add_deepseek2_kv(w, s, n_vocab, args.split_kv)
        tensors = deepseek2_tensors(s, n_vocab, args.split_kv)
    else:
        add_qwen2_kv(w, s)
        tensors = qwen2_tensors(s, n_vocab)
    w.add_uint32("general.file_type", int(FILE_TYPES[qtype]))
    if qtype != Q.F16:
        w.add_quantization_version(gguf.GGML_QUANT_VERSION)

    legacy = None
    if not deepseek and qtype == Q.F16 and args.std == 0.02:
        legacy = qwen2_legacy_data(tensors, rng)  # byte-identical to the earlier F16 writer
    plan, types = [], {}
    n_params, by_type = 0, {}
    for j, (name, shape, kind) in enumerate(tensors):
        t = tensor_type(kind, shape[-1], qtype, FALLBACKS[args.k_fallback])
        blk, size = gguf.GGML_QUANT_SIZES[t]
        n = int(np.prod(shape))
        nbytes = n // blk * size
        if t in (Q.F32, Q.F16):
            w.add_tensor_info(name, shape, np.dtype(np.float32 if t == Q.F32 else np.float16), nbytes)
        else:
            w.add_tensor_info(name, (*shape[:-1], shape[-1] // blk * size), np.dtype(np.uint8), nbytes, raw_dtype=t)
        gen = legacy[j] if legacy else make_generator(kind, shape, t, rng, args.std)
        plan.append((name, nbytes, gen))
        types[name] = (tuple(shape), t)
        n_params += n
        cnt, b = by_type.get(t, (0, 0))
        by_type[t] = (cnt + 1, b + nbytes)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    # generate tensor i+1 while tensor i is written (numpy releases the GIL in both)
    with ThreadPoolExecutor(1) as pool:
        pending = None
        for name, nbytes, gen in plan:
            data = gen()
            assert data.nbytes == nbytes, (name, data.nbytes, nbytes)
            if pending is not None:
                pending.result()
            pending = pool.submit(w.write_tensor_data, data)
        if pending is not None:
            pending.result()
    w.close()
    dt = time.time() - t0

    size = os.path.getsize(args.out)
    print("wrote %s (%s, vocab %d%s) in %.1f s" % (args.out, args.shape, n_vocab,
                                                     ", split kv" if args.split_kv else "", dt))
    print("  %d tensors, %d parameters (%.2f B), file %d bytes (%.2f GiB, %.2f GB)"
          % (len(plan), n_params, n_params / 1e9, size, size / 2**30, size / 1e9))
    for t, (cnt, b) in sorted(by_type.items(), key=lambda kv: -kv[1][1]):
        print("  %-5s %4d tensors %8.1f MB" % (t.name, cnt, b / 1e6))
    if deepseek and s.get("real_vocab") and s["real_vocab"] != n_vocab:
        print("  note: the real model's vocabulary is %d, this file's %d" % (s["real_vocab"], n_vocab))
    if args.verify:
        verify(args.out, types, args.std)
    return 0


if __name__ == "__main__":
    sys.exit(main())
