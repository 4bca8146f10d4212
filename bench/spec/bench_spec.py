#!/usr/bin/env python3
"""Speculative decoding against plain decoding through `deepbatch generate --chat`: the
same greedy requests with and without `--speculative ngram` (adaptive, the default), or
with `--speculative-model FILE` given --draft-model FILE,
runs alternating (plain first), --repeats times per workload; prints each run's mean
per-sequence decode speed ((tokens - 1) / (end - first token)) and throughput (generated
tokens over the batch's wall time, prompts included, model load excluded), their median
ratios, the acceptance figures, and checks that both runs printed the same text.

Workloads:
  rewrite   batch 1: rewrite / fix / rename-in-code / quote-extraction prompts whose answer
            repeats much of the prompt (where prompt lookup pays)
  chat      batch 1: open questions whose answers do not repeat the prompt
  chat64    batch 64: 64 open questions at once (where a step is compute-bound)

    python3 bench/spec/bench_spec.py [--binary build/deepbatch] [--model M] [--repeats 3] [--workloads rewrite,chat]
                                     [--draft-model D] [--adaptive on|off]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

STORY = ("The river bends twice before it reaches the old mill, where the water slows and turns green. "
         "Farmers bring their grain there every autumn, and the miller counts each sack by hand. "
         "In winter the wheel stops, the pond freezes, and children skate across it after school. "
         "Nobody remembers who built the mill, but the stones of its walls carry the marks of many tools.")
TYPOS = ("Teh meeting wil start at nine oclock on monday. Please bring you laptop and the quartely report. "
         "We will discus the budjet for next year and the new hiring plan, and we will finsh by noon.")
CODE = '''def total_price(items, tax):
    x = 0
    for item in items:
        x += item.price * item.quantity
    if x > 100:
        x = x * 0.95
    return x * (1 + tax)
'''
CODE2 = '''class Inventory:
    def __init__(self):
        self.items = {}

    def add(self, name, count):
        self.items[name] = self.items.get(name, 0) + count

    def remove(self, name, count):
        if self.items.get(name, 0) < count:
            raise ValueError("not enough " + name)
        self.items[name] -= count
'''
REWRITE = [
    "Rewrite the following text exactly, but in all lowercase letters:\n\n" + STORY,
    "Fix the spelling mistakes in this text and return the corrected text only:\n\n" + TYPOS,
    "Rename the variable x to subtotal in this function and return the whole function:\n\n" + CODE,
    "Add a docstring to each method of this class and return the whole class:\n\n" + CODE2,
    "Copy the second and third sentences of this text word for word:\n\n" + STORY,
    "Repeat this text, replacing 'mill' with 'bakery':\n\n" + STORY,
    "Return this code unchanged, then explain it in one sentence:\n\n" + CODE,
    "Rewrite this email politely, keeping all the facts:\n\n" + TYPOS,
]
CHAT = [
    "What are three good reasons to learn a second language?",
    "Explain how a rainbow forms, in simple words.",
    "Give me five ideas for a birthday party for a ten-year-old.",
    "Why do cats purr?",
    "Describe a healthy breakfast and why it is healthy.",
    "What is the difference between weather and climate?",
    "Suggest a plan for learning to play the guitar in three months.",
    "How do airplanes stay in the air?",
]


def run(args, prompts, seqs, speculative):
    """(decode tok/s per sequence, generated tok/s over the batch's wall time, spec figures, output text)."""
    cmd = [args.binary, "generate", "-m", args.model, "-t", str(args.threads), "--chat", "-n", str(args.max_tokens),
           "--max-num-seqs", str(seqs)]
    if speculative:
        cmd += ["--speculative-model", args.draft_model] if args.draft_model else ["--speculative", "ngram"]
        cmd += ["--num-speculative-tokens", str(args.k), "--speculative-adaptive", args.adaptive]
    for p in prompts:
        cmd += ["-p", p]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    m = re.search(r"generated ([0-9]+) tokens in ([0-9.]+) s, decode ([0-9.]+) tok/s", r.stderr)
    generated, wall, decode = int(m.group(1)), float(m.group(2)), float(m.group(3))
    m = re.search(r"speculative decoding \(\w+\): ([0-9]+) drafts, ([0-9]+) draft tokens, ([0-9]+) accepted "
                  r"\(([0-9.]+)%\), mean accepted length ([0-9.]+), ([0-9]+) paused.*proposer ([0-9.]+) s", r.stderr)
    spec = None if not m else {"drafts": int(m.group(1)), "draft_tokens": int(m.group(2)),
                               "accepted": int(m.group(3)), "rate": float(m.group(4)),
                               "mean_length": float(m.group(5)), "paused": int(m.group(6)),
                               "proposer_s": float(m.group(7))}
    return decode, generated / wall, spec, r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="build/deepbatch")
    ap.add_argument("--model", default="models/SmolLM2-135M-Instruct.Q4_1.gguf")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--k", type=int, default=5, help="--num-speculative-tokens")
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--workloads", default="rewrite,chat,chat64")
    ap.add_argument("--draft-model", help="draft with this model instead of prompt lookup")
    ap.add_argument("--adaptive", choices=["on", "off"], default="on", help="--speculative-adaptive")
    args = ap.parse_args()
    workloads = {"rewrite": (REWRITE, 1), "chat": (CHAT, 1),
                 "chat64": ([f"{q} (Question {i + 1}.)" for i in range(8) for q in CHAT], 64)}
    failed = False
    for name in args.workloads.split(","):
        prompts, seqs = workloads[name]
        rows = []
        for rep in range(args.repeats):
            p_dec, p_tput, _, p_out = run(args, prompts, seqs, False)
            s_dec, s_tput, spec, s_out = run(args, prompts, seqs, True)
            same = p_out == s_out
            failed |= not same
            rows.append((p_dec, s_dec, p_tput, s_tput))
            print(f"{name} run {rep}: decode {p_dec:.1f} -> {s_dec:.1f} tok/s per sequence ({s_dec / p_dec:.3f}x), "
                  f"throughput {p_tput:.1f} -> {s_tput:.1f} tok/s ({s_tput / p_tput:.3f}x); accepted "
                  f"{spec['rate']:.1f}% of {spec['draft_tokens']} draft tokens, mean length {spec['mean_length']:.2f}, "
                  f"{spec['paused']} paused decodes, {spec['proposer_s']:.2f} s drafting; same outputs: {same}", flush=True)
        med = lambda i: statistics.median(r[i] for r in rows)  # noqa: E731
        dec_ratio = statistics.median(r[1] / r[0] for r in rows)
        tput_ratio = statistics.median(r[3] / r[2] for r in rows)
        print(f"{name} ({len(prompts)} requests, batch {seqs}): median decode {med(0):.1f} -> {med(1):.1f} tok/s per "
              f"sequence, ratio **{dec_ratio:.3f}**; throughput {med(2):.1f} -> {med(3):.1f} tok/s, ratio "
              f"**{tput_ratio:.3f}**", flush=True)
    if failed:
        print("outputs differ between plain and speculative runs", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
