#!/usr/bin/env python3
"""Load time and peak memory of a multi-shard FP8 DeepSeek-V3-shaped checkpoint.

Writes a random deepseek_v3 checkpoint in DeepSeek's FP8 release format (F8_E4M3
weights, float32 128 x 128 block scales `weight_scale_inv`, quantization_config
fp8) split into shards of about --shard-mb, then runs `deepbatch generate` on it
once per --quantize type under /usr/bin/time and prints, per type: the load's
conversion line, wall time, and peak RSS beside the checkpoint's FP8 bytes, its
largest shard, and what the same weights would take in BF16. The converter holds
about one converted matrix at a time, so the peak should sit near the converted
model plus one shard's pages, well below the BF16 size.

With --convert it also converts the checkpoint once into a pre-packed GGUF file
(`deepbatch convert DIR -o OUT.gguf --pack`, default type) and prints that
conversion's wall time and peak RSS (one matrix at a time: far below the
converted model), then the load of the written file.

Usage: python3 bench/quant/fp8_load_bench.py --binary build/deepbatch [--layers 6]
       [--hidden 1024] [--experts 32] [--shard-mb 64] [--types Q8_0,Q4_0] [--convert]
Needs numpy. Benchmarks are not tests: it prints numbers and checks nothing.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from gen_quant_checkpoint_fixtures import ROOT, byte_tokenizer, write_safetensors  # noqa: E402


def e4m3_random(rng, shape):
    """Random E4M3 codes of a roughly normal weight (no NaN codes)."""
    codes = rng.integers(0, 0x70, size=shape, dtype=np.uint8)  # magnitudes up to 2^7
    return codes | (rng.integers(0, 2, size=shape, dtype=np.uint8) << 7)


def model_tensors(cfg, rng):
    """name -> (dtype, shape, bytes) of a deepseek_v3 checkpoint with FP8 linear layers."""
    h, inter, moe, e = cfg["hidden_size"], cfg["intermediate_size"], cfg["moe_intermediate_size"], cfg["n_routed_experts"]
    q_lora, kv_lora = cfg["q_lora_rank"], cfg["kv_lora_rank"]
    nope, rope, v, heads = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"], cfg["num_attention_heads"]
    out = {}

    def bf16(name, shape, std=0.02):
        a = (rng.standard_normal(shape, dtype=np.float32) * std).view(np.uint32) >> 16
        out[name] = ("BF16", shape, a.astype("<u2").tobytes())

    def fp8(name, shape):
        out[name] = ("F8_E4M3", shape, e4m3_random(rng, shape).tobytes())
        sshape = (-(-shape[0] // 128), -(-shape[1] // 128))
        out[name + "_scale_inv"] = ("F32", sshape, np.full(sshape, 1e-4, dtype="<f4").tobytes())

    bf16("model.embed_tokens.weight", (cfg["vocab_size"], h))
    bf16("lm_head.weight", (cfg["vocab_size"], h))
    bf16("model.norm.weight", (h,), 0.0)
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        for n, dim in [("input_layernorm", h), ("post_attention_layernorm", h), ("self_attn.q_a_layernorm", q_lora),
                       ("self_attn.kv_a_layernorm", kv_lora)]:
            out[p + n + ".weight"] = ("BF16", (dim,), np.full(dim, 0x3F80, dtype="<u2").tobytes())
        fp8(p + "self_attn.q_a_proj.weight", (q_lora, h))
        fp8(p + "self_attn.q_b_proj.weight", (heads * (nope + rope), q_lora))
        fp8(p + "self_attn.kv_a_proj_with_mqa.weight", (kv_lora + rope, h))
        fp8(p + "self_attn.kv_b_proj.weight", (heads * (nope + v), kv_lora))
        fp8(p + "self_attn.o_proj.weight", (h, heads * v))
        if layer < cfg["first_k_dense_replace"]:
            for n, shape in [("gate_proj", (inter, h)), ("up_proj", (inter, h)), ("down_proj", (h, inter))]:
                fp8(p + "mlp." + n + ".weight", shape)
            continue
        bf16(p + "mlp.gate.weight", (e, h))
        out[p + "mlp.gate.e_score_correction_bias"] = ("F32", (e,), np.zeros(e, dtype="<f4").tobytes())
        for x in [f"experts.{k}." for k in range(e)] + ["shared_experts."]:
            for n, shape in [("gate_proj", (moe, h)), ("up_proj", (moe, h)), ("down_proj", (h, moe))]:
                fp8(p + "mlp." + x + n + ".weight", shape)
    return out


def write_checkpoint(out_dir, cfg, shard_bytes, rng):
    tensors = model_tensors(cfg, rng)
    shards, current, size = [], {}, 0
    for name in sorted(tensors):
        if current and size + len(tensors[name][2]) > shard_bytes:
            shards.append(current)
            current, size = {}, 0
        current[name] = tensors[name]
        size += len(tensors[name][2])
    shards.append(current)
    weight_map = {}
    for i, shard in enumerate(shards):
        fname = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        write_safetensors(os.path.join(out_dir, fname), shard)
        weight_map.update({n: fname for n in shard})
    with open(os.path.join(out_dir, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": weight_map}, f)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    with open(os.path.join(out_dir, "tokenizer.json"), "w") as f:
        json.dump(byte_tokenizer(), f, ensure_ascii=False)
    fp8 = sum(len(b) for d, _, b in tensors.values() if d == "F8_E4M3")
    bf16_equiv = sum(len(b) * (2 if d == "F8_E4M3" else 1) for d, _, b in tensors.values() if d != "F32")
    largest = max(sum(len(t[2]) for t in s.values()) for s in shards)
    return fp8, bf16_equiv, largest, len(shards)


def timed(cmd):
    """Runs cmd under /usr/bin/time: (completed process, wall s, peak RSS MiB)."""
    r = subprocess.run(["/usr/bin/time", "-f", "TIME %e s RSS %M KiB", *cmd], capture_output=True, text=True)
    m = re.search(r"TIME ([\d.]+) s RSS (\d+) KiB", r.stderr)
    return r, (float(m.group(1)) if m else float("nan")), (int(m.group(2)) / 1024 if m else float("nan"))


def convert_once(args, ckpt):
    """`convert --pack` of the checkpoint, then `generate` on the written file."""
    out = os.path.join(ckpt, "converted.packed.gguf")
    r, wall, rss = timed([args.binary, "convert", ckpt, "-o", out, "--pack", "-t", str(args.threads)])
    if r.returncode != 0:
        print(f"convert failed: {r.stderr[-400:]}")
        return
    print(f"convert --pack: {os.path.getsize(out) / 2 ** 20:.1f} MiB written, wall {wall} s, peak RSS {rss:.1f} MiB")
    r, wall, rss = timed([args.binary, "generate", "-m", out, "-p", "hi", "-n", "1", "-t", str(args.threads),
                          "--kv-cache-memory", str(16 << 20)])
    ready = next((line for line in r.stderr.splitlines() if "weights ready" in line), r.stderr[-400:])
    print(f"packed file: {ready.split(': ', 1)[-1]}")
    print(f"packed file: process wall {wall} s, peak RSS {rss:.1f} MiB")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--experts", type=int, default=32)
    ap.add_argument("--shard-mb", type=float, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--types", default="Q8_0,Q4_0")
    ap.add_argument("--convert", action="store_true", help="also time `convert --pack` and the written file's load")
    args = ap.parse_args()
    with open(os.path.join(ROOT, "deepseek_v3_tiny_fp8", "config.json")) as f:
        cfg = json.load(f)
    h = args.hidden
    cfg.update({"hidden_size": h, "intermediate_size": 3 * h, "moe_intermediate_size": h // 2, "num_hidden_layers":
                args.layers, "n_routed_experts": args.experts, "num_experts_per_tok": 4, "n_group": 4, "topk_group": 2,
                "q_lora_rank": h // 2, "kv_lora_rank": h // 4, "num_attention_heads": 8, "num_key_value_heads": 8,
                "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "v_head_dim": 64, "vocab_size": 256})
    tmp = tempfile.mkdtemp(prefix="db_fp8_bench_")
    try:
        fp8, bf16, largest, n = write_checkpoint(tmp, cfg, int(args.shard_mb * 2 ** 20), np.random.default_rng(0))
        mib = 2.0 ** 20
        print(f"checkpoint: {n} shards, FP8 weights {fp8 / mib:.1f} MiB, largest shard {largest / mib:.1f} MiB, "
              f"the same weights in BF16 {bf16 / mib:.1f} MiB")
        for t in args.types.split(","):
            cmd = ["/usr/bin/time", "-f", "TIME %e s RSS %M KiB", args.binary, "generate", "-m", tmp, "-p", "hi", "-n",
                   "1", "-t", str(args.threads), "--kv-cache-memory", str(16 << 20), "--quantize", t]
            r = subprocess.run(cmd, capture_output=True, text=True)
            conv = next((line for line in r.stderr.splitlines() if "FP8 checkpoint" in line), r.stderr[-400:])
            m = re.search(r"TIME ([\d.]+) s RSS (\d+) KiB", r.stderr)
            print(f"{t}: {conv.split(': ', 1)[-1]}")
            if m:
                print(f"{t}: process wall {m.group(1)} s, peak RSS {int(m.group(2)) / 1024:.1f} MiB")
        if args.convert:
            convert_once(args, tmp)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
