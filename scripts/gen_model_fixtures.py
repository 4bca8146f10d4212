#!/usr/bin/env python3
"""Generates the tiny model fixtures under tests/data/model/.

For each fixture (a random LlamaForCausalLM and a random Qwen2ForCausalLM) it writes:
  config.json, model.safetensors   a Hugging Face checkpoint
  model-f32.gguf, model-f16.gguf, model-q8_0.gguf
                                   the same weights converted the way llama.cpp's
                                   converter does it (llama q/k rows permuted so
                                   GGUF llama uses interleaved RoPE; 1-D tensors F32)
  reference.json                   token sequences, vocab size, dtype notes
  reference_logits.bin             float32 logits of every position of every
                                   sequence, sequences concatenated, row-major
                                   [sum(len)][vocab], from transformers in float32
                                   with each sequence run alone

When models/SmolLM2-135M-Instruct.Q4_1.gguf is present it also writes
tests/data/model/smollm2_reference.json: a chat prompt's token ids, transformers'
greedy continuation on the file's weights dequantized to float32 (q/k rows
un-permuted back to the Hugging Face layout), the top-1 / top-2 logit margin of
each greedy step, and the 32 largest logits after the prompt.

Weights are rounded to values that bfloat16 and float16 both represent exactly
(bf16 rounding, magnitudes below 2^-14 flushed to zero), so the F32, F16 and BF16
files hold identical numbers and only Q8_0 is lossy.

Usage: python3 scripts/gen_model_fixtures.py  (from the repository root; needs torch,
transformers, safetensors, gguf, numpy). Deterministic for a given torch version.
"""
import json
import os
import sys

import numpy as np
import torch
import gguf
from safetensors.torch import save_file
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

OUT_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "model")

SEQUENCE_LENGTHS = [1, 9, 70]  # 70 crosses a 64-token block and the llama3 original context


def fixture_specs():
    llama = LlamaConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=96, vocab_size=256, max_position_embeddings=256, rms_norm_eps=1e-5,
        rope_theta=50000.0, tie_word_embeddings=False,
        rope_scaling={"rope_type": "llama3", "factor": 4.0, "low_freq_factor": 1.0,
                      "high_freq_factor": 4.0, "original_max_position_embeddings": 64})
    qwen2 = Qwen2Config(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1,
        intermediate_size=96, vocab_size=256, max_position_embeddings=512, rms_norm_eps=1e-6,
        rope_theta=30000.0, tie_word_embeddings=True)
    return [
        # name, arch, config, model class, safetensors dtype, seed, legacy config.json keys, embedding std
        # (small when tied, so that logits stay in a realistic range)
        ("llama_tiny", "llama", llama, LlamaForCausalLM, torch.float16, 1234, False, 1.0),
        ("qwen2_tiny", "qwen2", qwen2, Qwen2ForCausalLM, torch.bfloat16, 5678, True, 0.3),
    ]


def head_dim(cfg):
    return getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads


def representable(t):
    """Rounds to bf16 and flushes |x| < 2^-14, so f32, f16 and bf16 all hold the value exactly."""
    t = t.to(torch.bfloat16).to(torch.float32)
    t[t.abs() < 2.0 ** -14] = 0.0
    return t


def randomize(model, seed, embed_std):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                v = 1.0 + 0.2 * torch.randn(p.shape, generator=g)
            elif name.endswith("embed_tokens.weight"):
                v = embed_std * torch.randn(p.shape, generator=g)
            elif name.endswith(".bias"):
                v = 0.2 * torch.randn(p.shape, generator=g)
            else:
                v = 0.1 * torch.randn(p.shape, generator=g)
            p.copy_(representable(v))


def write_hf(out_dir, model, cfg, st_dtype, legacy_keys):
    tensors = {}
    for name, p in model.state_dict().items():
        if cfg.tie_word_embeddings and name == "lm_head.weight":
            continue
        tensors[name] = p.detach().to(st_dtype).contiguous()
    save_file(tensors, os.path.join(out_dir, "model.safetensors"), metadata={"format": "pt"})
    conf = json.loads(cfg.to_json_string())
    conf["architectures"] = [type(model).__name__]
    conf["torch_dtype"] = str(st_dtype).replace("torch.", "")
    if legacy_keys:  # older transformers spelling: rope_theta / rope_scaling at top level
        params = conf.pop("rope_parameters")
        conf["rope_theta"] = params.pop("rope_theta")
        if params.get("rope_type", "default") != "default":
            conf["rope_scaling"] = params
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(conf, f, indent=2, sort_keys=True)
        f.write("\n")


def permute_rows_for_interleaved_rope(w, n_head):
    """llama.cpp's converter reorders q/k rows so that adjacent pairs rotate together."""
    rows = w.shape[0]
    return w.reshape(n_head, 2, rows // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def llama3_rope_factors(cfg):
    rs = cfg.rope_parameters
    base = rs["rope_theta"]
    dim = head_dim(cfg)
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    old_ctx = rs["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old_ctx / low, old_ctx / high
    out = []
    for f in freqs.tolist():
        wavelen = 2 * np.pi / f
        if wavelen < high_wavelen:
            out.append(1.0)
        elif wavelen > low_wavelen:
            out.append(factor)
        else:
            smooth = (old_ctx / wavelen - low) / (high - low)
            out.append(1.0 / ((1.0 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


HF_TO_GGUF_LAYER = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight", "self_attn.q_proj.bias": "attn_q.bias",
    "self_attn.k_proj.weight": "attn_k.weight", "self_attn.k_proj.bias": "attn_k.bias",
    "self_attn.v_proj.weight": "attn_v.weight", "self_attn.v_proj.bias": "attn_v.bias",
    "self_attn.o_proj.weight": "attn_output.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
}


def gguf_tensors(model, cfg, arch):
    """(gguf name, float32 numpy array) in the converter's order."""
    out = []
    for name, p in model.state_dict().items():
        w = p.detach().to(torch.float32).numpy()
        if name == "model.embed_tokens.weight":
            out.append(("token_embd.weight", w))
        elif name == "model.norm.weight":
            out.append(("output_norm.weight", w))
        elif name == "lm_head.weight":
            if not cfg.tie_word_embeddings:
                out.append(("output.weight", w))
        else:
            parts = name.split(".")  # model.layers.N.<rest>
            layer, rest = int(parts[2]), ".".join(parts[3:])
            if arch == "llama" and rest.startswith("self_attn.q_proj."):
                w = permute_rows_for_interleaved_rope(w, cfg.num_attention_heads)
            if arch == "llama" and rest.startswith("self_attn.k_proj."):
                w = permute_rows_for_interleaved_rope(w, cfg.num_key_value_heads)
            out.append((f"blk.{layer}.{HF_TO_GGUF_LAYER[rest]}", w))
    if arch == "llama" and cfg.rope_parameters.get("rope_type") == "llama3":
        out.insert(0, ("rope_freqs.weight", llama3_rope_factors(cfg)))
    return out


FILE_TYPES = {"f32": (gguf.LlamaFileType.ALL_F32, None),
              "f16": (gguf.LlamaFileType.MOSTLY_F16, gguf.GGMLQuantizationType.F16),
              "q8_0": (gguf.LlamaFileType.MOSTLY_Q8_0, gguf.GGMLQuantizationType.Q8_0)}


def write_gguf(path, name, arch, cfg, tensors, kind):
    file_type, qtype = FILE_TYPES[kind]
    w = gguf.GGUFWriter(path, arch)
    w.add_name(name)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_rope_dimension_count(head_dim(cfg))
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_rope_freq_base(cfg.rope_parameters["rope_theta"])
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_vocab_size(cfg.vocab_size)
    w.add_file_type(file_type)
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    for tname, data in tensors:
        if data.ndim == 1 or qtype is None:  # 1-D tensors (norms, biases, rope factors) stay F32
            w.add_tensor(tname, data.astype(np.float32))
        elif qtype == gguf.GGMLQuantizationType.F16:
            w.add_tensor(tname, data.astype(np.float16))
        else:
            w.add_tensor(tname, gguf.quants.quantize(data, qtype), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_reference(out_dir, name, arch, model, cfg, st_dtype, seed):
    g = torch.Generator().manual_seed(seed + 1)
    seqs = [torch.randint(0, cfg.vocab_size, (n,), generator=g).tolist() for n in SEQUENCE_LENGTHS]
    rows = []
    with torch.no_grad():
        for s in seqs:
            logits = model(torch.tensor([s])).logits[0]
            rows.append(logits.to(torch.float32).numpy())
    np.concatenate(rows).astype("<f4").tofile(os.path.join(out_dir, "reference_logits.bin"))
    manifest = {
        "name": name, "arch": arch, "vocab": cfg.vocab_size, "sequences": seqs,
        "logits_file": "reference_logits.bin",
        "safetensors_dtype": str(st_dtype).replace("torch.", ""),
        "gguf_files": {k: f"model-{k}.gguf" for k in FILE_TYPES},
    }
    with open(os.path.join(out_dir, "reference.json"), "w") as f:
        json.dump(manifest, f)
        f.write("\n")


SMOLLM2_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models",
                            "SmolLM2-135M-Instruct.Q4_1.gguf")


def gguf_scalar(reader, key):
    field = reader.fields[key]
    return field.parts[field.data[0]].tolist()[0]


def gguf_strings(reader, key):
    field = reader.fields[key]
    return [bytes(field.parts[i]).decode("utf-8") for i in field.data]


def smollm2_tokenizer(reader):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    vocab = {t: i for i, t in enumerate(gguf_strings(reader, "tokenizer.ggml.tokens"))}
    merges = [tuple(m.split(" ")) for m in gguf_strings(reader, "tokenizer.ggml.merges")]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False)])
    tok.decoder = decoders.ByteLevel()
    return tok


def unpermute_rows(w, n_head):
    rows = w.shape[0]
    return w.reshape(n_head, rows // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def smollm2_model(reader):
    a = "llama."
    cfg = LlamaConfig(
        vocab_size=int(gguf_scalar(reader, a + "vocab_size")), hidden_size=int(gguf_scalar(reader, a + "embedding_length")),
        intermediate_size=int(gguf_scalar(reader, a + "feed_forward_length")),
        num_hidden_layers=int(gguf_scalar(reader, a + "block_count")),
        num_attention_heads=int(gguf_scalar(reader, a + "attention.head_count")),
        num_key_value_heads=int(gguf_scalar(reader, a + "attention.head_count_kv")),
        rope_theta=float(gguf_scalar(reader, a + "rope.freq_base")),
        rms_norm_eps=float(gguf_scalar(reader, a + "attention.layer_norm_rms_epsilon")),
        max_position_embeddings=int(gguf_scalar(reader, a + "context_length")), tie_word_embeddings=True)
    cfg._attn_implementation = "eager"
    gguf_to_hf = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight"}
    for rest, g in HF_TO_GGUF_LAYER.items():
        for layer in range(cfg.num_hidden_layers):
            gguf_to_hf[f"blk.{layer}.{g}"] = f"model.layers.{layer}.{rest}"
    state = {}
    for t in reader.tensors:
        w = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        w = w.reshape([int(d) for d in reversed(t.shape.tolist())])
        if t.name.endswith("attn_q.weight"):
            w = unpermute_rows(w, cfg.num_attention_heads)
        if t.name.endswith("attn_k.weight"):
            w = unpermute_rows(w, cfg.num_key_value_heads)
        state[gguf_to_hf[t.name]] = torch.from_numpy(w.copy())
    model = LlamaForCausalLM(cfg).to(torch.float32).eval()
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected and set(missing) <= {"lm_head.weight"}, (missing, unexpected)
    model.tie_weights()
    return model


def write_smollm2_reference():
    if not os.path.exists(SMOLLM2_PATH):
        print(f"{SMOLLM2_PATH} missing: smollm2_reference.json not regenerated", file=sys.stderr)
        return
    reader = gguf.GGUFReader(SMOLLM2_PATH)
    tok = smollm2_tokenizer(reader)
    im_start, im_end = 1, 2  # <|im_start|>, <|im_end|>
    prompt = ([im_start] + tok.encode("user\nWhat is the capital of France?").ids + [im_end] +
              tok.encode("\n").ids + [im_start] + tok.encode("assistant\n").ids)
    model = smollm2_model(reader)
    ids, margins = list(prompt), []
    with torch.no_grad():
        for step in range(16):
            logits = model(torch.tensor([ids])).logits[0, -1]
            top = torch.topk(logits, 32)
            if step == 0:
                prompt_top = {"ids": top.indices.tolist(), "logits": top.values.tolist()}
            margins.append(float(top.values[0] - top.values[1]))
            ids.append(int(top.indices[0]))
    out = {"model": "models/SmolLM2-135M-Instruct.Q4_1.gguf", "prompt": prompt, "greedy": ids[len(prompt):],
           "greedy_text": tok.decode(ids[len(prompt):]), "greedy_margins": margins, "prompt_top_logits": prompt_top}
    with open(os.path.join(OUT_ROOT, "smollm2_reference.json"), "w") as f:
        json.dump(out, f)
        f.write("\n")
    print(f"smollm2 greedy: {out['greedy_text']!r}", file=sys.stderr)


def main():
    torch.set_num_threads(1)
    for name, arch, cfg, cls, st_dtype, seed, legacy, embed_std in fixture_specs():
        out_dir = os.path.normpath(os.path.join(OUT_ROOT, name))
        os.makedirs(out_dir, exist_ok=True)
        cfg._attn_implementation = "eager"
        torch.manual_seed(seed)
        model = cls(cfg).to(torch.float32).eval()
        randomize(model, seed, embed_std)
        if cfg.tie_word_embeddings:
            model.tie_weights()
            assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
        write_hf(out_dir, model, cfg, st_dtype, legacy)
        tensors = gguf_tensors(model, cfg, arch)
        for kind in FILE_TYPES:
            write_gguf(os.path.join(out_dir, f"model-{kind}.gguf"), name, arch, cfg, tensors, kind)
        write_reference(out_dir, name, arch, model, cfg, st_dtype, seed)
        print(f"{out_dir}: {sum(os.path.getsize(os.path.join(out_dir, f)) for f in os.listdir(out_dir))} bytes",
              file=sys.stderr)
    write_smollm2_reference()


if __name__ == "__main__":
    main()
