#!/usr/bin/env python3
"""Single-stream speed of `deepbatch generate` beside llama.cpp, same GGUF, same run.

Rounds alternate between the two engines so that both see the same machine
conditions; each round measures prompt processing (a --prompt-tokens prompt) and
greedy decode (--decode-tokens tokens). Prints the median of each engine over the
rounds and the ratio deepbatch / llama.cpp.

The peer comes from bench/peer/install_llama_cpp_python.sh; pass its interpreter
with --peer-python.

Usage:
  python3 bench/compare_single_stream.py [--model PATH] [--threads 2] [--rounds 5]
         [--prompt-tokens 512] [--decode-tokens 128] [--peer-python build-peer/venv/bin/python]
"""
import argparse
import os
import re
import statistics
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILLER = (
    "A lighthouse keeper trimmed the wick, polished the lens and wound the clockwork "
    "that turned the lamp through the long winter night, while ships passed far out at sea. "
)


def deepbatch_round(args, prompt):
    """(prompt tok/s, decode tok/s) of one deepbatch generate run."""
    out = subprocess.run(
        [args.binary, "generate", "-m", args.model, "-t", str(args.threads), "-q", "--ignore-eos",
         "-n", str(args.decode_tokens + 1), "--max-batched-tokens", str(args.prompt_tokens), "-p", prompt],
        check=True, capture_output=True, text=True).stderr
    m = re.search(r"prompt (\d+) tokens in [\d.]+ s \(([\d.]+) tok/s\).*decode ([\d.]+) tok/s", out)
    if not m:
        raise SystemExit("unexpected deepbatch output:\n" + out)
    return float(m.group(2)), float(m.group(3)), int(m.group(1))


def peer_round(args):
    out = subprocess.run(
        [args.peer_python, os.path.join(REPO, "bench", "peer_speed.py"), "--model", args.model,
         "--threads", str(args.threads), "--runs", "1", "--prompt-tokens", str(args.prompt_tokens),
         "--decode-tokens", str(args.decode_tokens)],
        check=True, capture_output=True, text=True).stdout
    p = re.search(r"^prompt .*?median ([\d.]+) tok/s", out, re.M)
    d = re.search(r"^decode .*?median ([\d.]+) tok/s", out, re.M)
    if not (p and d):
        raise SystemExit("unexpected peer output:\n" + out)
    return float(p.group(1)), float(d.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.path.join(REPO, "models", "SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--binary", default=os.path.join(REPO, "build", "deepbatch"))
    ap.add_argument("--peer-python", default=os.path.join(REPO, "build-peer", "venv", "bin", "python"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--prompt-tokens", type=int, default=512)
    ap.add_argument("--decode-tokens", type=int, default=128)
    args = ap.parse_args()

    # A prompt of about --prompt-tokens tokens: the filler repeated, its count calibrated
    # with one short run (deepbatch reports the prompt length it tokenized).
    _, _, per_filler = deepbatch_round(args, FILLER)
    prompt = FILLER * max(1, round(args.prompt_tokens / per_filler))
    db_p, db_d, peer_p, peer_d = [], [], [], []
    n_prompt = 0
    for r in range(args.rounds):
        p, d, n_prompt = deepbatch_round(args, prompt)
        db_p.append(p)
        db_d.append(d)
        p, d = peer_round(args)
        peer_p.append(p)
        peer_d.append(d)
        print(f"round {r + 1}: deepbatch prompt {db_p[-1]:.1f} decode {db_d[-1]:.1f} | "
              f"llama.cpp prompt {peer_p[-1]:.1f} decode {peer_d[-1]:.1f} tok/s", flush=True)
    mp, md = statistics.median(db_p), statistics.median(db_d)
    pp, pd = statistics.median(peer_p), statistics.median(peer_d)
    print(f"\nmedians over {args.rounds} rounds, {args.threads} threads ({n_prompt}-token prompt in deepbatch):")
    print(f"  prompt  deepbatch {mp:8.1f} tok/s   llama.cpp {pp:8.1f} tok/s   ratio {mp / pp:.2f}x")
    print(f"  decode  deepbatch {md:8.1f} tok/s   llama.cpp {pd:8.1f} tok/s   ratio {md / pd:.2f}x")


if __name__ == "__main__":
    main()
