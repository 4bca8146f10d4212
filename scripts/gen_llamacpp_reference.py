#!/usr/bin/env python3
"""Record llama.cpp's tokenization and pure greedy continuations as reference data.

For every prompt in tests/data/reference/prompts.json this writes, into
tests/data/reference/smollm2_q4_1_greedy.json:
  - prompt_ids: the prompt as llama.cpp tokenizes it (special tokens parsed,
    BOS added only when the model's metadata asks for it),
  - greedy_ids: the first N tokens chosen by argmax over the raw logits (no
    sampler chain, no penalties; generation does not stop at EOS),
  - first_eos_index: index in greedy_ids of the first end-of-generation token, or -1,
  - top1_logits: the winning logit for the first few steps,
  - top1_margins: winning logit minus runner-up logit at every step (a small
    margin marks a step where another implementation may legitimately differ).

With --vocab-only the model is loaded without weights (a metadata-only GGUF is
enough) and only prompt_ids are recorded.

Requires the PyPI package llama-cpp-python (see bench/peer/README.md).

Usage:
  python3 scripts/gen_llamacpp_reference.py [--model PATH] [--prompts PATH] [--out PATH]
                                            [--steps 64] [--threads 2] [--vocab-only]
  # DeepSeek-R1-Distill-Qwen-7B tokenization (after scripts/fetch_deepseek_r1_qwen7b.sh --vocab-only):
  python3 scripts/gen_llamacpp_reference.py --vocab-only \
      --model models/DeepSeek-R1-Distill-Qwen-7B.vocab.gguf \
      --prompts tests/data/reference/r1_qwen7b_prompts.json \
      --out tests/data/reference/r1_qwen7b_tokenize.json
"""
import argparse
import json
import os
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODEL = os.path.join(REPO, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
DEFAULT_PROMPTS = os.path.join(REPO, "tests", "data", "reference", "prompts.json")
DEFAULT_OUT = os.path.join(REPO, "tests", "data", "reference", "smollm2_q4_1_greedy.json")
LOGIT_STEPS = 8  # steps for which the winning logit value is recorded


def load_model(path, n_ctx, threads, vocab_only):
    from llama_cpp import Llama

    if not os.path.exists(path):
        sys.exit(f"model not found: {path} (run scripts/setup.sh to download it)")
    return Llama(
        model_path=path,
        vocab_only=vocab_only,
        n_ctx=n_ctx,
        n_batch=512,
        n_threads=threads,
        n_threads_batch=threads,
        seed=1234,
        logits_all=False,
        verbose=False,
    )


def model_adds_bos(llm):
    import llama_cpp

    return bool(llama_cpp.llama_vocab_get_add_bos(llama_cpp.llama_model_get_vocab(llm.model)))


def end_of_generation_ids(llm):
    import llama_cpp

    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    return {t for t in range(llm.n_vocab()) if llama_cpp.llama_vocab_is_eog(vocab, t)}


def last_logits(llm):
    """Logits of the last token of the latest decode, read from llama.cpp's context."""
    row = np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(llm.n_vocab(),))
    return np.array(row, dtype=np.float32)


def greedy(llm, prompt_ids, steps):
    """Pure argmax decoding from raw logits; returns (ids, top1 logits, top1-top2 margins)."""
    llm.reset()
    llm.eval(prompt_ids)
    ids, top1, margins = [], [], []
    for _ in range(steps):
        logits = last_logits(llm)
        best = int(np.argmax(logits))
        runner_up = float(np.partition(logits, -2)[-2])
        ids.append(best)
        top1.append(float(logits[best]))
        margins.append(float(logits[best]) - runner_up)
        llm.eval([best])
    return ids, top1, margins


def to_json(value, indent=0):
    """JSON text with one key per line and lists of scalars kept on a single line."""
    pad, inner = " " * indent, " " * (indent + 1)
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: {to_json(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        return "[\n" + ",\n".join(inner + to_json(v, indent + 1) for v in value) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--prompts", default=DEFAULT_PROMPTS)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n-ctx", type=int, default=2048)
    ap.add_argument("--vocab-only", action="store_true", help="record tokenization only")
    args = ap.parse_args()

    import llama_cpp

    with open(args.prompts, encoding="utf-8") as f:
        prompts = json.load(f)["prompts"]
    llm = load_model(args.model, args.n_ctx, args.threads, args.vocab_only)
    add_bos = model_adds_bos(llm)
    eog = end_of_generation_ids(llm)

    cases = []
    for p in prompts:
        prompt_ids = llm.tokenize(p["text"].encode("utf-8"), add_bos=add_bos, special=True)
        if args.vocab_only:
            cases.append({"id": p["id"], "prompt": p["text"], "prompt_ids": prompt_ids})
            continue
        ids, top1, margins = greedy(llm, prompt_ids, args.steps)
        first_eos = next((i for i, t in enumerate(ids) if t in eog), -1)
        cases.append({
            "id": p["id"],
            "prompt": p["text"],
            "prompt_ids": prompt_ids,
            "greedy_ids": ids,
            "greedy_text": llm.detokenize(ids, special=True).decode("utf-8", errors="replace"),
            "first_eos_index": first_eos,
            "top1_logits": [round(v, 4) for v in top1[:LOGIT_STEPS]],
            "top1_margins": [round(v, 4) for v in margins],
        })
        print(f"{p['id']}: {len(prompt_ids)} prompt tokens, min margin {min(margins):.4f}", file=sys.stderr)

    settings = {"add_bos": add_bos, "special_tokens_parsed": True}
    if not args.vocab_only:
        settings.update({
            "n_ctx": args.n_ctx,
            "n_threads": args.threads,
            "n_batch": 512,
            "decoding": "argmax of raw logits, no penalties, does not stop at EOS",
        })
    out = {
        "generator": "scripts/gen_llamacpp_reference.py",
        "peer": f"llama-cpp-python {llama_cpp.__version__}",
        "model": os.path.basename(args.model),
        "settings": settings,
        "eog_ids": sorted(eog),
        "cases": cases,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(to_json(out) + "\n")
    print(f"wrote {args.out} ({len(cases)} cases)", file=sys.stderr)


if __name__ == "__main__":
    main()
