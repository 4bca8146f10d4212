#!/usr/bin/env python3
"""Writes quantized checkpoints in the released tools' formats from the tiny fixtures.

From the bf16/f16 tiny checkpoints under tests/data/model/ it writes, with numpy only:
  deepseek_v3_tiny_fp8/    FP8 as DeepSeek-V3/R1 are released: every linear weight
                           of the decoder layers F8_E4M3 with float32 block scales
                           `<name>.weight_scale_inv` over 128 x 128 blocks (the tiny
                           matrices are one partial block), embeddings, lm_head,
                           norms and router in their original types;
                           quantization_config {quant_method fp8, fmt e4m3,
                           activation_scheme dynamic, weight_block_size [128, 128]}.
  qwen2_tiny_awq/          AutoAWQ GEMM: qweight int32 [in, out/8] and qzeros int32
                           [in/g, out/8] with the interleaved nibble order
                           [0, 2, 4, 6, 1, 3, 5, 7], scales f16 [in/g, out];
                           asymmetric, group 32.
  llama_tiny_gptq/         GPTQ (checkpoint_format "gptq", zeros stored minus one):
                           qweight int32 [in/8, out] packed along the input,
                           qzeros int32 [in/g, out/8], scales f16, g_idx = i / g;
                           symmetric, group 32, desc_act false.
  llama_tiny_gptq_act/     The same with desc_act true: asymmetric, and g_idx groups
                           the inputs by a random permutation (as activation order
                           does), so the groups are not contiguous.
Each directory gets config.json, model.safetensors, tokenizer.json (byte-level BPE
with the 256 bytes as the whole vocabulary and no merges, so that `deepbatch run`,
`serve` and Python's LLM can load the checkpoint; the tiny models' vocabulary is 256
ids) and reference.json: the token
sequences of the source fixture and, for every quantized matrix, two checksums of its
dequantized float32 values (FP8: fp8 * scale_inv; int4: (q - z) * s, row-major
{out, in}): "sum" = sum of the values and "weighted" = sum of value * (k % 7 + 1) over
the flat index k, both in float64. A loader that converts the checkpoint to F32 must
reproduce them; its F32 logits are then the reference of the quantized ones.

Usage: python3 scripts/gen_quant_checkpoint_fixtures.py (from the repository root;
needs numpy). Deterministic.
"""
import json
import os
import re
import struct

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "model"))
AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]  # nibble k of a word holds output 8j + AWQ_ORDER[k]


# ---- safetensors, by hand (no torch) ----

def read_safetensors(path):
    """name -> (dtype string, float32 array or raw array)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        b, e = spec["data_offsets"]
        raw = data[b:e]
        dt = spec["dtype"]
        if dt == "BF16":
            a = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        elif dt == "F16":
            a = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        elif dt == "F32":
            a = np.frombuffer(raw, dtype="<f4").copy()
        else:
            raise ValueError(f"{path}: {name}: unexpected dtype {dt}")
        out[name] = (dt, a.reshape(spec["shape"]))
    return out


def encode(dtype, a):
    if dtype == "BF16":
        u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
        return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2").tobytes()  # round to nearest even
    return np.ascontiguousarray(a).astype({"F16": "<f2", "F32": "<f4", "I32": "<i4"}.get(dtype, None)
                                          or a.dtype).tobytes()


def write_safetensors(path, tensors):
    """tensors: name -> (dtype string, shape, bytes), written in sorted order."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        dt, shape, blob = tensors[name]
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


# ---- FP8 E4M3 ----

def e4m3_values():
    """float32 value of codes 0..126 (the non-negative finite ones), increasing."""
    v = []
    for code in range(127):
        e, m = code >> 3, code & 7
        v.append(np.ldexp(m, -9) if e == 0 else np.ldexp(8 + m, e - 10))
    return np.array(v, dtype=np.float32)


E4M3 = e4m3_values()


def to_e4m3(x):
    """Nearest E4M3 code of each value (ties to the even code), magnitudes clipped to 448."""
    a = np.minimum(np.abs(x), 448.0).astype(np.float32)
    hi = np.clip(np.searchsorted(E4M3, a), 1, 126)
    lo = hi - 1
    d_lo, d_hi = a - E4M3[lo], E4M3[hi] - a
    code = np.where((d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0)), hi, lo).astype(np.uint8)
    return code | np.where(np.signbit(x) & (code != 0), 0x80, 0).astype(np.uint8)


def from_e4m3(code):
    v = E4M3[code & 0x7F]
    return np.where(code & 0x80, -v, v).astype(np.float32)


def fp8_block_quantize(w, bm, bn):
    """DeepSeek's block quantization: scale_inv = amax / 448 per block, fp8 = w / scale_inv."""
    rows, cols = w.shape
    sr, sc = -(-rows // bm), -(-cols // bn)
    scale = np.zeros((sr, sc), dtype=np.float32)
    codes = np.zeros(w.shape, dtype=np.uint8)
    for i in range(sr):
        for j in range(sc):
            blk = w[i * bm:(i + 1) * bm, j * bn:(j + 1) * bn]
            s = np.float32(max(float(np.abs(blk).max()), 1e-12) / 448.0)
            scale[i, j] = s
            codes[i * bm:(i + 1) * bm, j * bn:(j + 1) * bn] = to_e4m3(blk / s)
    deq = from_e4m3(codes) * np.repeat(np.repeat(scale, bm, 0), bn, 1)[:rows, :cols]
    return codes, scale, deq.astype(np.float32)


# ---- 4-bit AWQ / GPTQ ----

def int4_quantize(w, group_of, n_groups, sym, min_zero=0):
    """Codes q [out, in], zeros z and f16 scales s [n_groups, out]: w ~ (q - z) * s.
    min_zero: the smallest zero point the format stores (GPTQ's "gptq" format keeps
    z - 1 in four bits, so its quantizers never produce z = 0)."""
    out_f, _ = w.shape
    s = np.zeros((n_groups, out_f), dtype=np.float16)
    z = np.zeros((n_groups, out_f), dtype=np.int64)
    for g in range(n_groups):
        cols = w[:, group_of == g]
        if sym:
            amax = np.maximum(np.abs(cols).max(axis=1), 1e-5)
            s[g] = (2 * amax / 15).astype(np.float16)
            z[g] = 8
        else:
            lo, hi = np.minimum(cols.min(axis=1), 0), np.maximum(cols.max(axis=1), 0)
            s[g] = np.maximum((hi - lo) / 15, 1e-5).astype(np.float16)
            z[g] = np.clip(np.round(-lo / s[g].astype(np.float32)), min_zero, 15)
    sf = s.astype(np.float32)[group_of].T  # [out, in]
    zf = z[group_of].T
    q = np.clip(np.round(w / sf) + zf, 0, 15).astype(np.int64)
    deq = ((q - zf).astype(np.float32) * sf).astype(np.float32)
    return q, z, s, deq


def pack_rows(vals, order):
    """Packs [n, 8k] nibbles along the last axis: nibble i of word j holds column 8j + order[i]."""
    n, m = vals.shape
    words = np.zeros((n, m // 8), dtype=np.uint32)
    for i, col in enumerate(order):
        words |= (vals[:, col::8].astype(np.uint32) & 0xF) << np.uint32(4 * i)
    return words.view(np.int32)


def awq_tensors(prefix, w, group):
    out_f, in_f = w.shape
    group_of = np.arange(in_f) // group
    q, z, s, deq = int4_quantize(w, group_of, in_f // group, sym=False)
    return {prefix + "qweight": ("I32", (in_f, out_f // 8), pack_rows(q.T, AWQ_ORDER).tobytes()),
            prefix + "qzeros": ("I32", (in_f // group, out_f // 8), pack_rows(z, AWQ_ORDER).tobytes()),
            prefix + "scales": ("F16", (in_f // group, out_f), s.astype("<f2").tobytes())}, deq


def gptq_tensors(prefix, w, group, desc_act, rng):
    out_f, in_f = w.shape
    n_groups = -(-in_f // group)
    if desc_act:  # activation order: the k-th input of a random permutation is in group k // g
        perm = rng.permutation(in_f)
        group_of = np.empty(in_f, dtype=np.int64)
        group_of[perm] = np.arange(in_f) // group
    else:
        group_of = np.arange(in_f) // group
    q, z, s, deq = int4_quantize(w, group_of, n_groups, sym=not desc_act, min_zero=1)
    qweight = pack_rows(q, range(8)).T.copy()  # [in/8, out]: packed along the input
    stored_z = z - 1  # checkpoint_format "gptq"
    return {prefix + "qweight": ("I32", qweight.shape, qweight.astype("<i4").tobytes()),
            prefix + "qzeros": ("I32", (n_groups, out_f // 8), pack_rows(stored_z, range(8)).tobytes()),
            prefix + "scales": ("F16", (n_groups, out_f), s.astype("<f2").tobytes()),
            prefix + "g_idx": ("I32", (in_f,), group_of.astype("<i4").tobytes())}, deq


# ---- fixtures ----

def checksums(deq):
    flat = deq.astype(np.float64).ravel()
    return {"sum": float(flat.sum()), "weighted": float((flat * (np.arange(flat.size) % 7 + 1)).sum())}


def bytes_to_unicode():
    """GPT-2's byte-level alphabet: byte -> the printable character standing for it."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\u00a1"), ord("\u00ac") + 1)) + \
        list(range(ord("\u00ae"), ord("\u00ff") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


def byte_tokenizer():
    chars = bytes_to_unicode()
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                              "use_regex": True},
            "post_processor": None, "decoder": {"type": "ByteLevel", "add_prefix_space": True,
                                                "trim_offsets": True, "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                      "vocab": {chars[b]: b for b in range(256)}, "merges": []}}


def write_fixture(name, source, config_update, tensors, dequantized):
    out_dir = os.path.join(ROOT, name)
    os.makedirs(out_dir, exist_ok=True)
    src_dir = os.path.join(ROOT, source)
    with open(os.path.join(src_dir, "config.json")) as f:
        config = json.load(f)
    config.update(config_update)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    write_safetensors(os.path.join(out_dir, "model.safetensors"), tensors)
    with open(os.path.join(out_dir, "tokenizer.json"), "w") as f:
        json.dump(byte_tokenizer(), f, ensure_ascii=False, sort_keys=True)
        f.write("\n")
    with open(os.path.join(src_dir, "reference.json")) as f:
        ref = json.load(f)
    reference = {"name": name, "source": source, "arch": ref["arch"], "vocab": ref["vocab"],
                 "sequences": ref["sequences"], "quantization_config": config["quantization_config"],
                 "dequantized": {k: checksums(v) for k, v in sorted(dequantized.items())}}
    with open(os.path.join(out_dir, "reference.json"), "w") as f:
        json.dump(reference, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{out_dir}: {len(dequantized)} quantized matrices, "
          f"{os.path.getsize(os.path.join(out_dir, 'model.safetensors'))} bytes")


LINEAR = re.compile(r"model\.layers\.\d+\.(self_attn|mlp)\..*(proj|proj_with_mqa)\.weight$")


def passthrough(dt, a):
    return (dt, a.shape, encode(dt, a))


def make_fp8(source, name, block):
    tensors, deq = {}, {}
    for tname, (dt, a) in read_safetensors(os.path.join(ROOT, source, "model.safetensors")).items():
        if LINEAR.match(tname):
            codes, scale, d = fp8_block_quantize(a, block[0], block[1])
            tensors[tname] = ("F8_E4M3", a.shape, codes.tobytes())
            tensors[tname + "_scale_inv"] = ("F32", scale.shape, scale.astype("<f4").tobytes())
            deq[tname] = d
        else:
            tensors[tname] = passthrough(dt, a)
    qc = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": list(block)}
    write_fixture(name, source, {"quantization_config": qc, "torch_dtype": "bfloat16"}, tensors, deq)


def make_int4(source, name, method, group, desc_act=False, seed=0):
    rng = np.random.default_rng(seed)
    tensors, deq = {}, {}
    for tname, (dt, a) in read_safetensors(os.path.join(ROOT, source, "model.safetensors")).items():
        if LINEAR.match(tname):
            prefix = tname[:-len("weight")]
            if method == "awq":
                t, d = awq_tensors(prefix, a, group)
            else:
                t, d = gptq_tensors(prefix, a, group, desc_act, rng)
            tensors.update(t)
            deq[tname] = d
        else:
            tensors[tname] = passthrough("F16", a) if dt != "F32" else passthrough(dt, a)
    if method == "awq":
        qc = {"quant_method": "awq", "bits": 4, "group_size": group, "version": "gemm", "zero_point": True}
    else:
        qc = {"quant_method": "gptq", "bits": 4, "group_size": group, "desc_act": desc_act, "sym": not desc_act,
              "checkpoint_format": "gptq", "static_groups": False, "true_sequential": True, "damp_percent": 0.01}
    write_fixture(name, source, {"quantization_config": qc, "torch_dtype": "float16"}, tensors, deq)


def main():
    make_fp8("deepseek_v3_tiny", "deepseek_v3_tiny_fp8", (128, 128))
    make_int4("qwen2_tiny", "qwen2_tiny_awq", "awq", 32)
    make_int4("llama_tiny", "llama_tiny_gptq", "gptq", 32)
    make_int4("llama_tiny", "llama_tiny_gptq_act", "gptq", 32, desc_act=True, seed=53)


if __name__ == "__main__":
    main()
