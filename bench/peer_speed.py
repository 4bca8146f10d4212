#!/usr/bin/env python3
"""Time the llama.cpp peer (via llama-cpp-python) on one GGUF model.

Measures, each over --runs runs, reporting the median:
  - prompt processing: one llama_decode of a --prompt-tokens token prompt (tokens/s),
  - single-stream decode: --decode-tokens greedy steps of one token each (tokens/s).
Rates come from llama.cpp's own performance counters (llama_perf_context), so the
Python wrapper's per-call overhead is excluded; wall-clock rates are printed too.

Usage:
  python3 bench/peer_speed.py [--model PATH] [--threads 2] [--runs 5]
                              [--prompt-tokens 512] [--decode-tokens 128]
"""
import argparse
import os
import statistics
import time

import llama_cpp
import numpy as np
from llama_cpp import Llama

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODEL = os.path.join(REPO, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
FILLER = (
    "A lighthouse keeper trimmed the wick, polished the lens and wound the clockwork "
    "that turned the lamp through the long winter night, while ships passed far out at sea. "
)


def prompt_ids(llm, n):
    ids = []
    while len(ids) < n:
        ids += llm.tokenize(FILLER.encode(), add_bos=False, special=False)
    return ids[:n]


def perf(llm):
    """llama.cpp's counters; they are brought up to date when the context synchronizes."""
    llama_cpp.llama_synchronize(llm._ctx.ctx)
    return llama_cpp.llama_perf_context(llm._ctx.ctx)


def time_prompt(llm, ids):
    llm.reset()
    llama_cpp.llama_perf_context_reset(llm._ctx.ctx)
    t0 = time.perf_counter()
    llm.eval(ids)
    llama_cpp.llama_synchronize(llm._ctx.ctx)
    wall = time.perf_counter() - t0
    p = perf(llm)
    return p.n_p_eval / (p.t_p_eval_ms / 1e3), len(ids) / wall


def time_decode(llm, ids, steps):
    llm.reset()
    llm.eval(ids)
    llama_cpp.llama_perf_context_reset(llm._ctx.ctx)
    t0 = time.perf_counter()
    for _ in range(steps):
        logits = np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(llm.n_vocab(),))
        tok = int(np.argmax(logits))
        llm.eval([tok])
    wall = time.perf_counter() - t0
    p = perf(llm)
    return p.n_eval / (p.t_eval_ms / 1e3), steps / wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--prompt-tokens", type=int, default=512)
    ap.add_argument("--decode-tokens", type=int, default=128)
    args = ap.parse_args()

    llm = Llama(model_path=args.model, n_ctx=2048, n_batch=args.prompt_tokens, n_ubatch=args.prompt_tokens,
                n_threads=args.threads, n_threads_batch=args.threads, logits_all=False, verbose=False)
    long_prompt = prompt_ids(llm, args.prompt_tokens)
    short_prompt = prompt_ids(llm, 16)
    time_prompt(llm, long_prompt)  # warm-up: page in weights, size buffers

    pp = [time_prompt(llm, long_prompt) for _ in range(args.runs)]
    tg = [time_decode(llm, short_prompt, args.decode_tokens) for _ in range(args.runs)]
    med = lambda xs, i: statistics.median(x[i] for x in xs)
    best = lambda xs: max(x[0] for x in xs)
    print(f"llama-cpp-python {llama_cpp.__version__}, model {os.path.basename(args.model)}, threads {args.threads}, "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"prompt {args.prompt_tokens} tokens: median {med(pp, 0):.1f} tok/s (wall {med(pp, 1):.1f}, best {best(pp):.1f}) "
          f"runs {[round(x[0], 1) for x in pp]}")
    print(f"decode {args.decode_tokens} tokens: median {med(tg, 0):.1f} tok/s (wall {med(tg, 1):.1f}, best {best(tg):.1f}) "
          f"runs {[round(x[0], 1) for x in tg]}")


if __name__ == "__main__":
    main()
