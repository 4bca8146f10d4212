"""Expert parallelism under real mpirun jobs (`deepbatch run --expert-parallel-size E`):
the same batch of mixed completions requests (tensor parallelism's: prompt lengths 1
to 60 words, max_tokens 1 to 24, every eighth request forked into 3 choices) run by one
process and by E ranks (one thread each) must give the same greedy tokens and log
probabilities on test-sized random deepseek2 models in V2's and V3's form (8 routed
experts: 4 + 4 at two ranks). The combine adds each token's expert rows in one process's
order, so the log probabilities must match exactly. Each rank must report holding only
its experts. `serve` at two ranks must answer with the same text and stop cleanly. Sizes the model or the job cannot take must fail fast with a clear message."""
import json
import os
import urllib.request
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "deepseek"))

from deepseek_models import Scratch  # noqa: E402 - the random-weight deepseek2 models
from expert_rank_metrics import check_rank_load  # noqa: E402 - the per-rank series of /metrics
from test_collective_faults import check, mpirun_env  # noqa: E402 - the job environment and failure report
from test_tensor_parallel import (arg_parser, http_status, rank_pid, read_outputs, wait_listening,  # noqa: E402
                                  write_requests)


def run_job(args, model, np, workdir, name, extra=()):
    out = os.path.join(workdir, name + ".jsonl")
    cmd = [args.deepbatch, "run", "-m", model, "-i", os.path.join(workdir, "in.jsonl"), "-o", out, "-t", "1",
           "--kv-cache-memory", str(64 << 20), "--no-progress", *extra]
    if np > 1:
        cmd = [args.mpirun, "-np", str(np), "--oversubscribe", "--bind-to", "none", *getattr(args, "mpirun_extra", ()),
               *cmd, "--collective-timeout", "60"]
    start = time.monotonic()
    proc = subprocess.run(cmd, env=mpirun_env(), capture_output=True, text=True, timeout=120)
    return proc, out, time.monotonic() - start


def compare(args, model, label, ep, workdir, split_args=None, reports=None, one_out=None):
    """Runs the batch in one process (unless one_out holds that run's output) and at `ep` ranks with `split_args`
    (default: --expert-parallel-size ep); every line of `reports` (default: each rank's experts) must be on stderr,
    and the tokens and log probabilities identical. Returns the single-process output."""
    if split_args is None:
        split_args = ("--expert-parallel-size", str(ep))
        reports = [f"expert parallel: rank {r} of {ep} holds routed experts [{r * 8 // ep}, {(r + 1) * 8 // ep}) of 8"
                   for r in range(ep)] + [f"expert parallel: {ep} ranks; KV pool"]
    t1 = 0.0
    if one_out is None:
        one, one_out, t1 = run_job(args, model, 1, workdir, label + "-one")
        check(one.returncode == 0, f"{label}: the single-process run failed", one)
    split, split_out, t2 = run_job(args, model, ep, workdir, f"{label}-np{ep}", split_args)
    check(split.returncode == 0, f"{label}: the run with {' '.join(split_args)} failed", split)
    for line in reports:
        check(line in split.stderr, f"{label}: stderr lacks '{line}'", split)
    a, b = read_outputs(one_out), read_outputs(split_out)
    check(sorted(a) == sorted(b) and len(a) == args.requests, f"{label}: the runs answered different requests")
    tokens = 0
    for cid in a:
        check(a[cid][0] == b[cid][0], f"{label}: {cid}: tokens differ:\n one process: {a[cid][0]}\n"
              f" {ep} ranks:    {b[cid][0]}")
        check(a[cid][1] == b[cid][1], f"{label}: {cid}: log probabilities differ")
        tokens += len(a[cid][1])
    print(f"{label}: {args.requests} requests, {tokens} tokens and log probabilities identical at {ep} ranks "
          f"({' '.join(split_args)}); {t1:.1f} s one process, {t2:.1f} s {ep} ranks")
    return one_out


def serve_matches_run(args, model, ep, one_out, workdir, n_requests=4, split_args=None, np=None):
    """`serve` at `np` ranks (default: ep) split as `split_args` say (default: --expert-parallel-size ep; ep
    is the expert-parallel size) answers /v1/completions with the single-process run's text, counts every
    routed token in /metrics, and stops cleanly on SIGTERM to rank 0."""
    split_args = split_args or ("--expert-parallel-size", str(ep))
    np = np or ep
    cmd = [args.mpirun, "-np", str(np), "--oversubscribe", "--bind-to", "none", args.deepbatch, "serve", "-m", model,
           "--host", "127.0.0.1", "--port", "0", "--no-batch-api", "-t", "1", "--kv-cache-memory", str(64 << 20),
           *split_args, "--collective-timeout", "30"]
    proc = subprocess.Popen(cmd, env=mpirun_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url, seen = wait_listening(proc)
        want = read_outputs(one_out)
        with open(os.path.join(workdir, "in.jsonl")) as f:
            requests = [json.loads(line) for line in f][:n_requests]
        for r in requests:
            body = {k: v for k, v in r["body"].items() if k not in ("logprobs", "n")}
            status, got = http_status(url + "/v1/completions", body)
            check(status == 200 and got["choices"][0]["text"] == want[r["custom_id"]][2],
                  f"serve at {np} ranks, {r['custom_id']}: {got} != {want[r['custom_id']][2]!r}")
        with urllib.request.urlopen(url + "/metrics", timeout=30) as resp:
            metrics = resp.read().decode()
        routed = sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
                     if line.startswith("deepbatch:moe_routed_tokens_total{"))
        check(routed > 0, f"serve at {np} ranks: no routed tokens in /metrics")
        if ep > 1:
            per_rank = check_rank_load(metrics, ep, 8)
        else:  # every expert on each rank (tensor parallelism alone): no per-rank expert load
            check("expert_parallel_rank" not in metrics, f"serve at {np} ranks, expert-parallel size 1: {metrics}")
            per_rank = "no expert split"
        os.kill(rank_pid(proc.pid), signal.SIGTERM)
        rest, _ = proc.communicate(timeout=60)
        check(proc.returncode == 0, f"serve at {np} ranks exited {proc.returncode} on SIGTERM:\n{''.join(seen)}{rest}")
        print(f"serve at {np} ranks: {n_requests} completions identical to the single-process run; "
              f"{routed:.0f} routed tokens in /metrics, {per_rank} per rank; stopped cleanly")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def expect_refused(args, model, np, extra, needle, workdir, label):
    proc, _, took = run_job(args, model, np, workdir, "refused", extra)
    check(proc.returncode != 0 and needle in proc.stderr, f"{label}: expected a failure saying '{needle}'", proc)
    print(f"{label}: refused in {took:.1f} s: {needle}")


def main():
    ap = arg_parser()
    args = ap.parse_args()
    args.work_dir = None
    smollm = os.path.join(args.source_dir, "models/SmolLM2-135M-Instruct.Q4_1.gguf")
    with Scratch(args, "expert_parallel") as scratch, tempfile.TemporaryDirectory() as workdir:
        write_requests(os.path.join(workdir, "in.jsonl"), args.requests)
        v2 = scratch.write_model("deepseek-v2-mini")
        serve_matches_run(args, v2, 2, compare(args, v2, "deepseek-v2-mini", 2, workdir), workdir)
        compare(args, scratch.write_model("deepseek-v3-mini"), "deepseek-v3-mini", 2, workdir)
        ep = ("--expert-parallel-size", "2")
        expect_refused(args, v2, 3, ep, "--tensor-parallel-size 1 x --expert-parallel-size 2 = 2 ranks, but the "
                       "job has 3 processes", workdir, "--expert-parallel-size 2 on 3 ranks")
        expect_refused(args, v2, 9, ("--expert-parallel-size", "9"), "--expert-parallel-size 9 is above the model's "
                       "8 routed experts per layer", workdir, "--expert-parallel-size 9 on 8 experts")
        expect_refused(args, smollm, 2, ep, "expert parallelism splits the routed experts of deepseek2 models; this "
                       "one is llama", workdir, "a llama model")
    print("expert parallel: all checks passed")


if __name__ == "__main__":
    sys.exit(main())
