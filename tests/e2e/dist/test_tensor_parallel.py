"""Tensor parallelism under real mpirun jobs (`deepbatch run --tensor-parallel-size T`):
the same batch of mixed completions requests (prompt lengths 1 to 60 words,
max_tokens 1 to 24) run by one process and by T ranks must give the same greedy
tokens on the default model (SmolLM2-135M, Q4_1, 3 KV heads: split 2 + 1 at two
ranks, 1 + 1 + 1 at three). The default join (gather) computes bitwise what one
process computes, so the log probabilities must match exactly too; the largest
difference is printed. Sizes the model or the job cannot take must fail fast with a
clear message. (The tiny llama fixtures have no tokenizer, so `run` cannot load them;
model_tensor_parallel_test splits them in one process.)"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from test_collective_faults import check, mpirun_env  # the same job environment and failure report

WORDS = ("the quick brown fox jumps over a lazy dog while seven tired engineers count "
         "primes under the old bridge near the river and write short notes about it").split()


def write_requests(path, n):
    """n completions requests: prompts of 1 to 60 words, max_tokens 1 to 24, greedy, two logprobs."""
    with open(path, "w") as f:
        for i in range(n):
            words = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(1 + (i * 13) % 60)]
            body = {"prompt": " ".join(words), "max_tokens": 1 + (i * 5) % 24, "temperature": 0, "logprobs": 2}
            f.write(json.dumps({"custom_id": f"r{i}", "method": "POST", "url": "/v1/completions", "body": body}))
            f.write("\n")


def read_outputs(path):
    """custom_id -> (tokens, token_logprobs) of each record."""
    out = {}
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            check(rec.get("error") is None and rec["response"]["status_code"] == 200, f"failed record: {line}")
            lp = rec["response"]["body"]["choices"][0]["logprobs"]
            out[rec["custom_id"]] = (lp["tokens"], lp["token_logprobs"])
    return out


def run_job(args, model, np, tp, workdir, name, extra=()):
    out = os.path.join(workdir, name + ".jsonl")
    cmd = [args.deepbatch, "run", "-m", model, "-i", os.path.join(workdir, "in.jsonl"), "-o", out, "-t", "1",
           "--kv-cache-memory", str(64 << 20), "--no-progress", *extra]
    if np > 1:
        cmd = [args.mpirun, "-np", str(np), "--oversubscribe", "--bind-to", "none", *cmd,
               "--tensor-parallel-size", str(tp), "--collective-timeout", "60"]
    start = time.monotonic()
    proc = subprocess.run(cmd, env=mpirun_env(), capture_output=True, text=True, timeout=240)
    return proc, out, time.monotonic() - start


BASELINES = {}  # model -> (output file, seconds) of its single-process run


def compare(args, model, label, np, workdir, exact=True):
    """The model's batch through one process (run once per model) and through np ranks: identical tokens."""
    if model not in BASELINES:
        one, one_out, t1 = run_job(args, model, 1, 1, workdir, label + "-one")
        check(one.returncode == 0, f"{label}: the single-process run failed", one)
        BASELINES[model] = (one_out, t1)
    one_out, t1 = BASELINES[model]
    tp, tp_out, t2 = run_job(args, model, np, np, workdir, f"{label}-tp{np}")
    check(tp.returncode == 0, f"{label}: the run at --tensor-parallel-size {np} failed", tp)
    check(f"tensor parallel: {np} ranks" in tp.stderr, f"{label}: rank 0 did not report the split", tp)
    a, b = read_outputs(one_out), read_outputs(tp_out)
    check(sorted(a) == sorted(b) and len(a) == args.requests, f"{label}: the runs answered different requests")
    worst, tokens = 0.0, 0
    for cid in a:
        check(a[cid][0] == b[cid][0], f"{label}: {cid}: tokens differ:\n one process: {a[cid][0]}\n"
              f" {np} ranks:    {b[cid][0]}")
        tokens += len(a[cid][0])
        worst = max([worst] + [abs(x - y) for x, y in zip(a[cid][1], b[cid][1])])
    check(not exact or worst == 0.0, f"{label}: log probabilities differ by up to {worst} at {np} ranks")
    print(f"{label}: {args.requests} requests, {tokens} tokens identical at {np} ranks; largest log-probability "
          f"difference {worst:.3g}; {t1:.1f} s one process, {t2:.1f} s {np} ranks")


def expect_refused(args, model, np, tp, needle, workdir, label):
    proc, _, took = run_job(args, model, np, tp, workdir, "refused")
    check(proc.returncode != 0 and needle in proc.stderr, f"{label}: expected a failure saying '{needle}'", proc)
    print(f"{label}: refused in {took:.1f} s: {needle}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--deepbatch", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--requests", type=int, default=64)
    ap.add_argument("--default-model-ranks", default="2,3", help="comma-separated rank counts for the default model")
    args = ap.parse_args()
    default_model = os.path.join(args.source_dir, "models/SmolLM2-135M-Instruct.Q4_1.gguf")
    qwen_tiny = os.path.join(args.source_dir, "tests/data/model/qwen2_tiny/model-f32.gguf")
    check(os.path.exists(default_model), f"{default_model} is missing: run scripts/setup.sh")
    with tempfile.TemporaryDirectory() as workdir:
        write_requests(os.path.join(workdir, "in.jsonl"), args.requests)
        for np in (int(x) for x in args.default_model_ranks.split(",")):
            compare(args, default_model, "SmolLM2-135M Q4_1", np, workdir)
        expect_refused(args, qwen_tiny, 2, 2, "--tensor-parallel-size 2 is above the model's 1 KV heads", workdir,
                       "qwen2_tiny (1 KV head) at 2 ranks")
        expect_refused(args, default_model, 2, 3, "--tensor-parallel-size 3 x --expert-parallel-size 1 = 3 ranks, "
                       "but the job has 2 processes", workdir, "--tensor-parallel-size 3 on 2 ranks")
    print("tensor parallel: all checks passed")


if __name__ == "__main__":
    sys.exit(main())
