"""`deepbatch bench` under a real mpirun job: at --tensor-parallel-size 2 on the default model
rank 0 runs the sweep (two engines, one per --batch-sizes value, over the same split model
and KV pool) and reports every request and token, as one process does; at
--expert-parallel-size 2 on a random deepseek2 model the router's tokens per layer and expert
are one process's; `generate` and
`chat`, which run in one process, refuse the option with a message naming the commands that
split a model."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "deepseek"))

from deepseek_models import Scratch  # noqa: E402 - the random-weight deepseek2 models
from test_collective_faults import check, mpirun_env  # noqa: E402
from test_tensor_parallel import arg_parser  # noqa: E402

REQUESTS, INPUT_LEN, OUTPUT_LEN = 6, 24, 6


def mpirun(args, np, cmd):
    full = [args.mpirun, "-np", str(np), "--oversubscribe", "--bind-to", "none", args.deepbatch, *cmd]
    start = time.monotonic()
    proc = subprocess.run(full, env=mpirun_env(), capture_output=True, text=True, timeout=120)
    return proc, time.monotonic() - start


def bench_reports_at_two_ranks(args, model, workdir):
    out = os.path.join(workdir, "bench.json")
    proc, took = mpirun(args, 2, ["bench", "-m", model, "-t", "1", "--kv-cache-memory", str(64 << 20),
                                  "--num-requests", str(REQUESTS), "--input-len", str(INPUT_LEN), "--output-len",
                                  str(OUTPUT_LEN), "--batch-sizes", "1,4", "--output-json", out,
                                  "--tensor-parallel-size", "2", "--collective-timeout", "60"])
    check(proc.returncode == 0, "bench at --tensor-parallel-size 2 failed", proc)
    check("tensor parallel: 2 ranks; KV pool" in proc.stderr, "rank 0 did not report the split", proc)
    rows = re.findall(rf"^ +([14]) mixed +{REQUESTS} +{REQUESTS * INPUT_LEN} +0 +{REQUESTS * OUTPUT_LEN} ", proc.stdout,
                      re.M)
    check(rows == ["1", "4"], "the throughput table lacks a row per batch size", proc)
    with open(out) as f:
        report = json.load(f)
    check(report["settings"]["tensor_parallel_size"] == 2, f"settings: {report['settings']}")
    check([r["max_num_seqs"] for r in report["runs"]] == [1, 4], f"runs: {report['runs']}")
    for r in report["runs"]:
        check(r["requests"] == REQUESTS and r["failed_requests"] == 0 and
              r["generated_tokens"] == REQUESTS * OUTPUT_LEN and r["prompt_tokens"] == REQUESTS * INPUT_LEN,
              f"run at max-num-seqs {r['max_num_seqs']} did not report every request and token: {r}")
    rates = ", ".join(f"{r['generated_tokens_per_s']:.1f}" for r in report["runs"])
    print(f"bench at 2 ranks: {REQUESTS} requests x 2 batch sizes, every token reported ({rates} gen tok/s); "
          f"{took:.1f} s in all")


def bench_json(args, np, model, workdir, name, extra):
    out = os.path.join(workdir, name + ".json")
    cmd = ["bench", "-m", model, "-t", "1", "--kv-cache-memory", str(64 << 20), "--num-requests", str(REQUESTS),
           "--input-len", str(INPUT_LEN), "--output-len", str(OUTPUT_LEN), "--batch-sizes", "4", "--output-json", out,
           *extra]
    proc, took = mpirun(args, np, cmd)
    check(proc.returncode == 0, f"bench {name} failed", proc)
    with open(out) as f:
        return json.load(f), proc, took


def expert_parallel_bench_routes_as_one_process(args, model, workdir):
    """bench --expert-parallel-size 2 on a random deepseek2 model: the router's tokens per layer and expert over
    the run are one process's (the split computes bitwise one process's hidden states, so it routes alike)."""
    one, _, t1 = bench_json(args, 1, model, workdir, "ep-one", [])
    split, proc, t2 = bench_json(args, 2, model, workdir, "ep-two", ["--expert-parallel-size", "2",
                                                                      "--collective-timeout", "60"])
    check("expert parallel: 2 ranks; KV pool" in proc.stderr, "rank 0 did not report the split", proc)
    check(split["settings"]["expert_parallel_size"] == 2, f"settings: {split['settings']}")
    a, b = one["runs"][0]["router"]["layers"], split["runs"][0]["router"]["layers"]
    check(a and [l["tokens_per_expert"] for l in a] == [l["tokens_per_expert"] for l in b],
          f"routed tokens per expert differ:\n one process: {a}\n 2 ranks: {b}")
    check(split["runs"][0]["generated_tokens"] == REQUESTS * OUTPUT_LEN, f"run: {split['runs'][0]}")
    print(f"bench at --expert-parallel-size 2: {sum(l['routed_tokens'] for l in b)} routed tokens over {len(b)} "
          f"layers, every expert's count one process's; {t1:.1f} s one process, {t2:.1f} s 2 ranks")


def refused_in_one_process(args, model, command, extra):
    proc, took = mpirun(args, 2, [command, "-m", model, *extra, "--tensor-parallel-size", "2"])
    needle = (": this command runs a model in one process; `deepbatch run`, `serve` and `bench` split it across "
              "ranks")
    check(proc.returncode != 0 and needle in proc.stderr, f"{command} did not refuse --tensor-parallel-size 2", proc)
    print(f"{command} at --tensor-parallel-size 2: refused in {took:.1f} s")


def main():
    args = arg_parser().parse_args()
    model = os.path.join(args.source_dir, "models/SmolLM2-135M-Instruct.Q4_1.gguf")
    check(os.path.exists(model), f"{model} is missing: run scripts/setup.sh")
    args.work_dir = None
    with Scratch(args, "bench_ranks") as scratch, tempfile.TemporaryDirectory() as workdir:
        bench_reports_at_two_ranks(args, model, workdir)
        expert_parallel_bench_routes_as_one_process(args, scratch.write_model("deepseek-v2-mini"), workdir)
    refused_in_one_process(args, model, "generate", ["-p", "hello"])
    refused_in_one_process(args, model, "chat", [])
    print("bench across ranks: all checks passed")


if __name__ == "__main__":
    sys.exit(main())
