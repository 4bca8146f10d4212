"""The tokenizer.* fields of a GGUF written by bench/make_random_gguf.py: copied from
another GGUF, or converted from a Hugging Face byte-level BPE tokenizer directory the way
llama.cpp's converter writes them, so that llama.cpp-family engines load the file too."""
import json
import os
import sys

import gguf

# tokenizer.ggml.pre -> the model's (padded) vocabulary size, when the tokenizer has fewer ids
PADDED_VOCAB = {"deepseek-v3": 129280}

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


def _looks_special(tok):
    """llama.cpp convert_hf_to_gguf.py's does_token_look_special()."""
    return (tok in ("<pad>", "<mask>", "<2mass>", "[@BOS@]")
            or (tok.startswith("<|") and tok.endswith("|>"))
            or (tok.startswith("<\uff5c") and tok.endswith("\uff5c>"))
            or (tok.startswith("<unused") and tok.endswith(">")))


def hf_tokenizer(dir_path, writer, pre, vocab_size=None):
    """Writes the tokenizer.* fields from a Hugging Face tokenizer.json (byte-level BPE) and
    tokenizer_config.json the way llama.cpp's converter does; returns the vocabulary size.

    Ids the tokenizer lacks up to the model's vocabulary size become "[PAD<id>]" UNUSED;
    added tokens are CONTROL when special or when they look special, else USER_DEFINED."""
    with open(os.path.join(dir_path, "tokenizer.json"), encoding="utf-8") as f:
        tj = json.load(f)
    cfg_path = os.path.join(dir_path, "tokenizer_config.json")
    cfg = {}
    if os.path.exists(cfg_path):
        with open(cfg_path, encoding="utf-8") as f:
            cfg = json.load(f)
    model = tj["model"]
    if model.get("type") != "BPE":
        sys.exit("%s: tokenizer model %r is not BPE" % (dir_path, model.get("type")))
    by_id = {i: t for t, i in model["vocab"].items()}
    added = {a["id"]: a for a in tj.get("added_tokens", [])}
    for i, a in added.items():
        by_id[i] = a["content"]
    n_ids = max(by_id) + 1
    if vocab_size is None:
        vocab_size = max(n_ids, PADDED_VOCAB.get(pre, 0))
    if vocab_size < n_ids:
        sys.exit("--vocab-size %d is below the tokenizer's %d ids" % (vocab_size, n_ids))
    tokens, types = [], []
    for i in range(vocab_size):
        if i not in by_id:
            tokens.append("[PAD%d]" % i)
            types.append(gguf.TokenType.UNUSED)
            continue
        tok = by_id[i]
        if i in added:
            if added[i].get("special") or _looks_special(tok):
                types.append(gguf.TokenType.CONTROL)
            else:
                tok = tok.replace("\u2581", " ")
                types.append(gguf.TokenType.USER_DEFINED)
        else:
            types.append(gguf.TokenType.NORMAL)
        tokens.append(tok)
    merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]

    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    ids = {t: i for i, t in enumerate(tokens)}

    def special_id(key):
        v = cfg.get(key)
        if isinstance(v, dict):
            v = v.get("content")
        return ids.get(v) if v is not None else None

    for key, add in (("bos_token", writer.add_bos_token_id), ("eos_token", writer.add_eos_token_id),
                     ("unk_token", writer.add_unk_token_id), ("pad_token", writer.add_pad_token_id)):
        tid = special_id(key)
        if tid is not None:
            add(tid)
    if "add_bos_token" in cfg:
        writer.add_add_bos_token(bool(cfg["add_bos_token"]))
    if "add_eos_token" in cfg:
        writer.add_add_eos_token(bool(cfg["add_eos_token"]))
    if isinstance(cfg.get("chat_template"), str):
        writer.add_chat_template(cfg["chat_template"])
    return vocab_size
