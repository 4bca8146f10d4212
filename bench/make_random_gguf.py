#!/usr/bin/env python3
"""Writes a GGUF with random weights in the shape of a real model, for speed
measurements where the real weights are not at hand. The tokenizer (vocabulary,
merges, special ids, chat template) is copied from a GGUF that has one, so both
engines load the file as they would the real model.

Shapes:
  r1-qwen-1.5b   qwen2, DeepSeek-R1-Distill-Qwen-1.5B: 28 layers, hidden 1536, 12 heads,
                 2 KV heads, FFN 8960, QKV bias, untied output (about 1.8 B parameters)

Weights are F16 (norms F32); quantize the result with the peer's quantizer, e.g.
  llama-quantize random-r1-qwen-1.5b-f16.gguf random-r1-qwen-1.5b-q4_0.gguf Q4_0

Example:
  python3 bench/make_random_gguf.py --shape r1-qwen-1.5b \
      --vocab-from tests/data/tokenizer/deepseek-r1-distill-qwen/vocab.gguf --out random-r1-qwen-1.5b-f16.gguf
"""
import argparse
import sys

import numpy as np
import gguf

SHAPES = {
    "r1-qwen-1.5b": dict(arch="qwen2", layers=28, hidden=1536, heads=12, kv_heads=2, ffn=8960,
                         qkv_bias=True, ctx=131072, rope_base=10000.0, eps=1e-6),
}


def copy_tokenizer(src_path, writer):
    """Copies every tokenizer.* field of `src_path`; returns the vocabulary size."""
    src = gguf.GGUFReader(src_path)
    n_vocab = 0
    for name, field in src.fields.items():
        if not name.startswith("tokenizer."):
            continue
        vtype = field.types[0]
        if vtype == gguf.GGUFValueType.ARRAY:
            sub = field.types[1]
            if sub == gguf.GGUFValueType.STRING:
                vals = [bytes(field.parts[i]).decode("utf-8", errors="surrogateescape") for i in field.data]
            else:
                vals = [field.parts[i][0].item() for i in field.data]
            writer.add_array(name, vals)
            if name == "tokenizer.ggml.tokens":
                n_vocab = len(vals)
        elif vtype == gguf.GGUFValueType.STRING:
            writer.add_string(name, bytes(field.parts[field.data[0]]).decode("utf-8"))
        elif vtype == gguf.GGUFValueType.BOOL:
            writer.add_bool(name, bool(field.parts[field.data[0]][0]))
        else:
            writer.add_uint32(name, int(field.parts[field.data[0]][0]))
    if not n_vocab:
        sys.exit("%s has no tokenizer.ggml.tokens" % src_path)
    return n_vocab


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", choices=sorted(SHAPES), required=True)
    ap.add_argument("--vocab-from", required=True, help="a GGUF whose tokenizer.* fields are copied")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    s = SHAPES[args.shape]
    rng = np.random.default_rng(args.seed)

    w = gguf.GGUFWriter(args.out, s["arch"])
    w.add_name("random " + args.shape)
    n_vocab = copy_tokenizer(args.vocab_from, w)
    a = s["arch"]
    w.add_uint32(a + ".block_count", s["layers"])
    w.add_uint32(a + ".context_length", s["ctx"])
    w.add_uint32(a + ".embedding_length", s["hidden"])
    w.add_uint32(a + ".feed_forward_length", s["ffn"])
    w.add_uint32(a + ".attention.head_count", s["heads"])
    w.add_uint32(a + ".attention.head_count_kv", s["kv_heads"])
    w.add_float32(a + ".rope.freq_base", s["rope_base"])
    w.add_float32(a + ".attention.layer_norm_rms_epsilon", s["eps"])
    w.add_uint32("general.file_type", 1)  # mostly F16

    h, head_dim = s["hidden"], s["hidden"] // s["heads"]
    kv = s["kv_heads"] * head_dim

    def mat(rows, cols):  # GGUF shapes are given outermost-first in numpy: (rows, cols)
        return (rng.standard_normal((rows, cols), dtype=np.float32) * 0.02).astype(np.float16)

    def vec(n, scale=0.0, base=1.0):
        return (base + scale * rng.standard_normal(n, dtype=np.float32)).astype(np.float32)

    w.add_tensor("token_embd.weight", mat(n_vocab, h))
    for i in range(s["layers"]):
        p = "blk.%d." % i
        w.add_tensor(p + "attn_norm.weight", vec(h))
        w.add_tensor(p + "attn_q.weight", mat(h, h))
        w.add_tensor(p + "attn_k.weight", mat(kv, h))
        w.add_tensor(p + "attn_v.weight", mat(kv, h))
        if s["qkv_bias"]:
            w.add_tensor(p + "attn_q.bias", vec(h, 0.02, 0.0))
            w.add_tensor(p + "attn_k.bias", vec(kv, 0.02, 0.0))
            w.add_tensor(p + "attn_v.bias", vec(kv, 0.02, 0.0))
        w.add_tensor(p + "attn_output.weight", mat(h, h))
        w.add_tensor(p + "ffn_norm.weight", vec(h))
        w.add_tensor(p + "ffn_gate.weight", mat(s["ffn"], h))
        w.add_tensor(p + "ffn_up.weight", mat(s["ffn"], h))
        w.add_tensor(p + "ffn_down.weight", mat(h, s["ffn"]))
    w.add_tensor("output_norm.weight", vec(h))
    w.add_tensor("output.weight", mat(n_vocab, h))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print("wrote %s (%s, vocab %d)" % (args.out, args.shape, n_vocab))
    return 0


if __name__ == "__main__":
    sys.exit(main())
