#!/usr/bin/env python3
"""Generates the tokenizer conformance fixtures in tests/data/tokenizer/.

For every string of tests/data/tokenizer/corpus.json, the Hugging Face `tokenizers`
library (the reference implementation) gives the expected ids of several tokenizers:

  smollm2            SmolLM2's tokenizer: the vocabulary and merges of the GGUF file,
                     with the pre-tokenizer of the model's tokenizer.json
                     (Digits(individual) then ByteLevel with the GPT-2 regex).
  smollm2_gpt2       The same vocabulary with ByteLevel alone (GGUF pre "gpt-2").
  deepseek_v3        DeepSeek-V3's tokenizer.json as published.
  deepseek_v3_qwen2  DeepSeek-V3's vocabulary with Qwen2's pre-tokenizer (GGUF pre
                     "qwen2" / "deepseek-r1-qwen").
  deepseek_v3_llama3 DeepSeek-V3's vocabulary with Llama-3's pre-tokenizer and
                     ignore_merges (GGUF pre "llama-bpe").

Each fixture records the tokenizer.json parts the C++ tests need to rebuild the same
tokenizer (pre_tokenizer, ignore_merges), the ids with special tokens parsed, and the
ids with special tokens treated as text. Ids exclude BOS/EOS. A second corpus of
random strings (tests/data/tokenizer/corpus_random.json, made here from a fixed seed
out of fragments that stress the pre-tokenizer patterns) is encoded the same way.
Characters assigned after Unicode 14 are left out: the PCRE2 of Debian 12 knows
Unicode 14, so their category differs from the reference's.

Usage (from the repository root):
  python3 scripts/gen_tokenizer_fixtures.py \
      [--gguf models/SmolLM2-135M-Instruct.Q4_1.gguf] \
      [--deepseek-dir tests/data/tokenizer/deepseek-v3]
"""
import argparse
import copy
import json
import os
import random
import sys

from gguf import GGUFReader, GGUFValueType
from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "tokenizer")

QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                 r"\s*[\r\n]+|\s+(?!\S)|\s+")
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                  r"\s*[\r\n]+|\s+(?!\S)|\s+")


# Fragments the random corpus is made of: white space of every kind, contractions,
# punctuation, digits of several scripts, letters, marks, emoji, special tokens.
FRAGMENTS = [
    " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u0085", "\u2028", "\u200b", "\u200d", "\ufeff",
    "\x0b", "\x0c", "a", "Z", "hello", "World", "'s", "'S", "'re", "'ll", "'d", "n't", "'", "\"", ".", ",", "!",
    "?", "...", "-", "--", "_", "/", "\\", "@", "#", "$", "%", "^", "&", "*", "(", ")", "[", "]", "{", "}", "<",
    ">", "|", "~", "`", "+", "=", ":", ";", "0", "1", "12", "123", "1234", "98765", "\u0663", "\u00b2", "\u00bd",
    "\u216b", "\u2460", "\U0001d7d9", "\u4e2d", "\u6587", "\u4eba\u5de5\u667a\u80fd", "\u65e5\u672c",
    "\u3072\u3089\u304c\u306a", "\u30ab\u30bf\u30ab\u30ca", "\u30fc", "\ud55c\uad6d\uc5b4", "\uac00",
    "\u3131", "\u00e9", "e\u0301", "\u00df", "\u03a9", "\u0416", "\u0436", "\u0639", "\u05e9", "\u0939",
    "\u093f", "\u0e44", "\u0e17", "\U0001f600", "\U0001f44d\U0001f3fd", "\u2764\ufe0f",
    "\U0001f1fa\U0001f1f8", "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "\U0001f3f3\ufe0f\u200d\U0001f308", "\u00a9", "\u00ae", "\u2122", "\u20ac", "\u00a3", "\u00a5",
    "\u00a7", "\u00b6", "\u2022", "\u2026", "\u2014", "\u2013", "\u201c", "\u201d", "\u2018", "\u2019",
    "\u00ab", "\u00bb", "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<\uff5cbegin\u2581of\u2581sentence\uff5c>",
    "<\uff5cUser\uff5c>", "<\uff5cend\u2581of\u2581sentence\uff5c>", "<|", "|>", "<\uff5c", "\uff5c>",
    "\U0001f9cc", "\u0378", "\U000e0001", "\ue000", "\u00ad",
]


def random_corpus(n=200, seed=20240601):
    rng = random.Random(seed)
    return ["".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 30))) for _ in range(n)]


def byte_level(use_regex):
    return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": use_regex}


def split_then_byte_level(pattern):
    return {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
        byte_level(False)]}


SMOLLM2_PRE = {"type": "Sequence", "pretokenizers": [
    {"type": "Digits", "individual_digits": True}, byte_level(True)]}


def gguf_field(reader, key):
    f = reader.fields[key]
    if f.types[0] == GGUFValueType.ARRAY:
        if f.types[-1] == GGUFValueType.STRING:
            return [bytes(f.parts[i]).decode("utf-8") for i in f.data]
        return [int(f.parts[i][0]) for i in f.data]
    if f.types[0] == GGUFValueType.STRING:
        return bytes(f.parts[f.data[0]]).decode("utf-8")
    return f.parts[f.data[0]].tolist()[0]


def tokenizer_json_from_gguf(path, pre_tokenizer):
    """A tokenizer.json for a byte-level BPE GGUF: CONTROL tokens become special added tokens."""
    r = GGUFReader(path)
    tokens = gguf_field(r, "tokenizer.ggml.tokens")
    types = gguf_field(r, "tokenizer.ggml.token_type")
    merges = gguf_field(r, "tokenizer.ggml.merges")
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, (t, ty) in enumerate(zip(tokens, types)) if ty == 3]
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
        "pre_tokenizer": pre_tokenizer, "post_processor": byte_level(True), "decoder": byte_level(True),
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {t: i for i, t in enumerate(tokens)}, "merges": merges},
    }


def with_pre(tokenizer_json, pre_tokenizer, ignore_merges=False):
    j = copy.deepcopy(tokenizer_json)
    j["pre_tokenizer"] = pre_tokenizer
    j["model"]["ignore_merges"] = ignore_merges
    return j


def encode_all(tokenizer_json, corpus, random_texts):
    tok = Tokenizer.from_str(json.dumps(tokenizer_json))
    ids = [tok.encode(t, add_special_tokens=False).ids for t in corpus]
    random_ids = [tok.encode(t, add_special_tokens=False).ids for t in random_texts]
    tok.encode_special_tokens = True
    ids_text_specials = [tok.encode(t, add_special_tokens=False).ids for t in corpus]
    return ids, ids_text_specials, random_ids


def fixture(name, description, gguf_pre, tokenizer_json, corpus):
    texts, random_texts = corpus
    ids, ids_text, random_ids = encode_all(tokenizer_json, texts, random_texts)
    out = {
        "name": name,
        "description": description,
        "gguf_pre": gguf_pre,
        "pre_tokenizer": tokenizer_json["pre_tokenizer"],
        "ignore_merges": tokenizer_json["model"].get("ignore_merges", False),
        "ids": ids,
        "ids_specials_as_text": ids_text,
        "random_ids": random_ids,
    }
    return out


def write(name, data):
    path = os.path.join(DATA, f"expected_{name}.json")
    with open(path, "w", encoding="utf-8") as f:
        # One line per corpus entry keeps diffs readable.
        f.write("{\n")
        keys = list(data.keys())
        for k in keys:
            v = data[k]
            if k in ("ids", "ids_specials_as_text", "random_ids"):
                rows = ",\n    ".join(json.dumps(row) for row in v)
                f.write(f'  "{k}": [\n    {rows}\n  ]')
            else:
                f.write(f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}")
            f.write(",\n" if k != keys[-1] else "\n")
        f.write("}\n")
    print(f"wrote {os.path.relpath(path, ROOT)} ({os.path.getsize(path)} bytes)")


def check_smollm2_against_transformers(gguf_path, smollm2_json, corpus):
    """Reports where transformers' own GGUF conversion (plain ByteLevel) differs from SmolLM2's tokenizer."""
    try:
        from transformers import AutoTokenizer
    except ImportError:
        return
    t = AutoTokenizer.from_pretrained(os.path.dirname(gguf_path), gguf_file=os.path.basename(gguf_path))
    ref = Tokenizer.from_str(json.dumps(smollm2_json))
    diffs = sum(1 for s in corpus if t(s, add_special_tokens=False).input_ids != ref.encode(s, add_special_tokens=False).ids)
    print(f"transformers GGUF conversion differs from the SmolLM2 tokenizer on {diffs}/{len(corpus)} corpus strings")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gguf", default=os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--deepseek-dir", default=os.path.join(ROOT, "tests", "data", "tokenizer", "deepseek-v3"))
    args = ap.parse_args()
    for p in (args.gguf, os.path.join(args.deepseek_dir, "tokenizer.json")):
        if not os.path.exists(p):
            sys.exit(f"missing {p}")

    with open(os.path.join(DATA, "corpus.json"), encoding="utf-8") as f:
        texts = json.load(f)
    random_texts = random_corpus()
    with open(os.path.join(DATA, "corpus_random.json"), "w", encoding="utf-8") as f:
        f.write("[\n " + ",\n ".join(json.dumps(t) for t in random_texts) + "\n]\n")
    corpus = (texts, random_texts)

    smollm2 = tokenizer_json_from_gguf(args.gguf, SMOLLM2_PRE)
    check_smollm2_against_transformers(args.gguf, smollm2, texts)
    write("smollm2", fixture("smollm2", "SmolLM2-135M-Instruct: GGUF vocabulary, Digits + ByteLevel(GPT-2 regex)",
                             ["smollm"], smollm2, corpus))
    write("smollm2_gpt2", fixture("smollm2_gpt2", "SmolLM2 vocabulary, ByteLevel(GPT-2 regex) only",
                                  ["gpt-2"], with_pre(smollm2, byte_level(True)), corpus))

    with open(os.path.join(args.deepseek_dir, "tokenizer.json"), encoding="utf-8") as f:
        deepseek = json.load(f)
    write("deepseek_v3", fixture("deepseek_v3", "DeepSeek-V3 tokenizer.json as published", ["deepseek-v3"],
                                 deepseek, corpus))
    write("deepseek_v3_qwen2", fixture("deepseek_v3_qwen2", "DeepSeek-V3 vocabulary, Qwen2 pre-tokenizer",
                                       ["qwen2", "deepseek-r1-qwen"], with_pre(deepseek, split_then_byte_level(QWEN2_PATTERN)), corpus))
    write("deepseek_v3_llama3", fixture("deepseek_v3_llama3",
                                        "DeepSeek-V3 vocabulary, Llama-3 pre-tokenizer, ignore_merges",
                                        ["llama-bpe"], with_pre(deepseek, split_then_byte_level(LLAMA3_PATTERN), True), corpus))


if __name__ == "__main__":
    main()
