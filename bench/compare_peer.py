#!/usr/bin/env python3
"""CPU step speed beside a llama.cpp-family peer (llama-bench and llama-batched-bench of
a llama.cpp or ik_llama.cpp build), on the same GGUF files, in one run: each measurement
runs on every engine back to back, the engines' order alternating by round. Prints medians,
the ratio of the medians (deepbatch / peer) and the median of the per-round ratios
('paired': each from two runs minutes apart at most, so the steadier one on a host whose
speed drifts).

Measurements (2 threads by default):
  prompt 512     peer: llama-bench -p 512            deepbatch bench --phase prefill --input-len 512
  decode b1      peer: llama-bench -n 128            deepbatch bench --phase decode --output-len 128, 1 sequence
  batched B      peer: llama-batched-bench -npp 128 -ntg 128 -npl B (S_TG t/s)
                 deepbatch bench --phase decode --input-len 128 --output-len 128, B sequences (decode tok/s)
(--tg-tokens, --batched-prompt and --batched-gen change the 128s, for models slow to run.)
Peer options go through --peer-bench-flags and --peer-batched-flags (one string each,
split on spaces), e.g. ik_llama.cpp's MLA and fused-MoE settings for DeepSeek files.

With --baseline, a second deepbatch build (say, the commit before a change) runs in
the same rounds, and its medians and the ratio deepbatch / baseline are printed too.

The peer is not part of this repository: pass the folder holding its binaries
(--peer-bin). Models: any GGUF both engines load; bench/make_random_gguf.py writes
one with random weights in the DeepSeek-R1-Distill-Qwen-1.5B shape, and the peer's
llama-quantize turns it into Q4_0.

Example:
  python3 bench/compare_peer.py --binary build/deepbatch --peer-bin PEER/bin \
      --model smollm2=models/SmolLM2-135M-Instruct.Q4_0.gguf --rounds 3 --batches 1,8,32,64
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def run(cmd, timeout=3600, both=False):
    """Runs `cmd`; returns its stdout (with `both`, stdout and stderr: the peer's batched bench
    prints its table to either, depending on its logging set-up)."""
    # The peer writes a log file into its working directory: keep it out of the checkout.
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout,
                       cwd=tempfile.gettempdir())
    if p.returncode != 0:
        sys.exit("command failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-2000:]))
    return p.stdout + "\n" + p.stderr if both else p.stdout


def peer_bench(args, model, what):
    """llama-bench: tokens/s of a 512-token prompt ('pp') or --tg-tokens decode steps ('tg')."""
    flags = ["-p", "512", "-n", "0"] if what == "pp" else ["-p", "0", "-n", str(args.tg_tokens)]
    out = run([os.path.join(args.peer_bin, "llama-bench"), "-m", model, "-t", str(args.threads), "-r", "1",
               "-o", "json"] + flags + args.peer_bench_flags.split())
    return float(json.loads(out)[0]["avg_ts"])


ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|" + r"\s*([\d.]+)\s*\|" * 6)


def peer_batched(args, model, batch):
    """llama-batched-bench: decode tokens/s (S_TG) of `batch` sequences, prompt --batched-prompt,
    --batched-gen new tokens each."""
    ctx = batch * (args.batched_prompt + args.batched_gen) + 256
    out = run([os.path.join(args.peer_bin, "llama-batched-bench"), "-m", model, "-t", str(args.threads),
               "-c", str(ctx), "-b", "2048", "-ub", "512", "-npp", str(args.batched_prompt),
               "-ntg", str(args.batched_gen), "-npl", str(batch)] + args.peer_batched_flags.split(), both=True)
    for line in out.splitlines():
        m = ROW.match(line.strip())
        if m and int(m.group(3)) == batch:
            return float(m.group(8))  # S_TG t/s
    sys.exit("no result row in llama-batched-bench output:\n" + out[-2000:])


def ours(binary, args, model, phase, input_len, output_len, seqs, requests):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        run([binary, "bench", "-m", model, "-t", str(args.threads), "--phase", phase,
             "--input-len", str(input_len), "--output-len", str(output_len), "--num-requests", str(requests),
             "--batch-sizes", str(seqs), "--no-enable-prefix-caching", "--output-json", f.name]
            + args.binary_flags.split())
        r = json.load(open(f.name))["runs"][0]
    if phase == "prefill":
        return r["prompt_tokens_per_s"]
    return r["decode_tokens_per_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True, help="the deepbatch binary")
    ap.add_argument("--peer-bin", required=True, help="folder with llama-bench and llama-batched-bench")
    ap.add_argument("--model", action="append", required=True, help="NAME=PATH.gguf (repeatable)")
    ap.add_argument("--baseline", help="a second deepbatch binary measured in the same rounds")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batches", default="1,8,32,64", help="sequence counts of the batched decode")
    ap.add_argument("--skip", default="", help="comma list of measurements to skip: pp,tg,batched")
    ap.add_argument("--tg-tokens", type=int, default=128, help="decode steps of 'decode b1'")
    ap.add_argument("--batched-prompt", type=int, default=128, help="prompt tokens per sequence of 'batched B'")
    ap.add_argument("--batched-gen", type=int, default=128, help="generated tokens per sequence of 'batched B'")
    ap.add_argument("--binary-flags", default="", help="extra `deepbatch bench` flags, e.g. --pack")
    ap.add_argument("--peer-bench-flags", default="", help="extra llama-bench flags")
    ap.add_argument("--peer-batched-flags", default="", help="extra llama-batched-bench flags")
    ap.add_argument("--json", help="write all samples here")
    args = ap.parse_args()
    args.binary = os.path.abspath(args.binary)
    args.peer_bin = os.path.abspath(args.peer_bin)
    binaries = {"deepbatch": args.binary}
    if args.baseline:
        binaries["baseline"] = os.path.abspath(args.baseline)
    skip = set(filter(None, args.skip.split(",")))
    batches = [int(b) for b in args.batches.split(",")]

    samples = {}  # (model, measurement) -> {"deepbatch": [...], "peer": [...], "baseline": [...]}

    def add(key, engine, value):
        samples.setdefault(key, {e: [] for e in ["peer"] + list(binaries)})[engine].append(value)
        print("  %-10s %-16s %-9s %9.1f tok/s" % (key[0], key[1], engine, value), flush=True)

    # Each measurement runs on every engine back to back, so that the machine's
    # speed, which on a shared host can shift by tens of percent within minutes,
    # is about the same for the engines a ratio compares.
    measurements = []
    if "pp" not in skip:
        measurements.append(("prompt 512", lambda p: peer_bench(args, p, "pp"),
                             lambda b, p: ours(b, args, p, "prefill", 512, 1, 1, 2)))
    if "tg" not in skip:
        measurements.append(("decode b1", lambda p: peer_bench(args, p, "tg"),
                             lambda b, p: ours(b, args, p, "decode", 16, args.tg_tokens, 1, 1)))
    if "batched" not in skip:
        for n in batches:
            measurements.append(("batched %d" % n, lambda p, n=n: peer_batched(args, p, n),
                                 lambda b, p, n=n: ours(b, args, p, "decode", args.batched_prompt,
                                                        args.batched_gen, n, n)))

    for rnd in range(args.rounds):
        print("round %d" % (rnd + 1), flush=True)
        # Alternate which engine goes first so that drift hits them alike.
        order = ["peer"] + list(binaries)
        if rnd % 2:
            order.reverse()
        for spec in args.model:
            name, path = spec.split("=", 1)
            path = os.path.abspath(path)
            for what, run_peer, run_ours in measurements:
                for engine in order:
                    add((name, what), engine, run_peer(path) if engine == "peer" else run_ours(binaries[engine], path))

    print("\nmedians over %d rounds, %d threads (tok/s):" % (args.rounds, args.threads))
    base = "baseline" in binaries
    print("%-10s %-16s %12s %12s %8s %8s" % ("model", "measurement", "deepbatch", "peer", "ratio", "paired") +
          ("%12s %8s" % ("baseline", "vs base") if base else ""))
    for (name, what), s in samples.items():
        d, p = statistics.median(s["deepbatch"]), statistics.median(s["peer"])
        paired = statistics.median(x / y for x, y in zip(s["deepbatch"], s["peer"]))
        line = "%-10s %-16s %12.1f %12.1f %7.2fx %7.2fx" % (name, what, d, p, d / p, paired)
        if base:
            b = statistics.median(s["baseline"])
            line += "%12.1f %7.2fx" % (b, d / b)
        print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"model": k[0], "measurement": k[1], **v} for k, v in samples.items()], f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
