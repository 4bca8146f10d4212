"""The memory guard under a real memory cgroup limit (root only; exits 77, skipped, elsewhere).

`deepbatch run` runs an offline batch inside a child memory cgroup whose limit is well
below the batch's KV demand, with an explicit --kv-cache-memory larger than the limit:
the KV store is committed page by page as blocks are first used, so without the guard
the resident KV memory grows until the kernel OOM-kills the process.

1. With the guard on (the default): the run exits 0, nothing in the cgroup is
   OOM-killed, every request has exactly one successful output record, and the guard
   backed off at least once (its "memory guard:" lines on stderr).
2. With DB_SHOW_OOM=1 only (kept out of CI: it ends in an OOM kill by design): the same
   run with --memory-guard off, expected to be OOM-killed; its outcome is printed.
"""
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
from cgroup_util import ChildMemoryCgroup, skip_unless_cgroups  # noqa: E402
from e2e_main import check, parse_args, run_tests  # noqa: E402

# Run time (one of the suite's slowest, and alone: tests/e2e/memory_guard/CMakeLists.txt):
# the batch's prompts must need more KV memory than the limit (checked below), i.e.
# about 48,000 prompt tokens to prefill on 2 threads.
MiB = 2**20
LIMIT = 448 * MiB        # the child cgroup's memory limit
KV_CACHE_MEMORY = "2G"   # the KV pool: far more than the limit allows to be resident
NUM_REQUESTS = 40
PROMPT_WORDS = 900       # about 1200 tokens each: about 26 MiB of f16 KV per request for SmolLM2-135M
MAX_TOKENS = 4
RUN_TIMEOUT = 240        # seconds for one run, inside ctest's TIMEOUT of 300
MODEL = os.path.join("models", "SmolLM2-135M-Instruct.Q4_1.gguf")
WORDS = ["river", "stone", "lantern", "orbit", "meadow", "copper", "signal", "harbor", "ember", "glacier",
         "violet", "thunder", "archive", "compass", "falcon", "quartz", "willow", "canyon", "ripple", "saddle"]


def write_batch(path):
    """NUM_REQUESTS completion requests with distinct long prompts (no shared prefix past a few tokens)."""
    with open(path, "w") as f:
        for i in range(NUM_REQUESTS):
            rng = random.Random(i)
            prompt = f"Story {i}: " + " ".join(rng.choice(WORDS) for _ in range(PROMPT_WORDS)) + "\nThe end:"
            body = {"prompt": prompt, "max_tokens": MAX_TOKENS, "temperature": 0, "ignore_eos": True}
            f.write(json.dumps({"custom_id": f"req-{i}", "method": "POST", "url": "/v1/completions",
                                "body": body}) + "\n")


def run_in_cgroup(args, name, guard):
    """Runs the batch in a fresh child cgroup; returns a dict of what happened."""
    cg = ChildMemoryCgroup.create(name, LIMIT)
    try:
        with tempfile.TemporaryDirectory(prefix="deepbatch_memory_guard_") as tmp:
            inp, out = os.path.join(tmp, "in.jsonl"), os.path.join(tmp, "out.jsonl")
            write_batch(inp)
            cmd = [cg.launcher(args.binary, tmp), "run", "-m", os.path.join(args.source_dir, MODEL), "-i", inp,
                   "-o", out, "-t", "2", "--kv-cache-memory", KV_CACHE_MEMORY, "--memory-guard", guard]
            start = time.monotonic()
            try:
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   timeout=RUN_TIMEOUT)
                rc, stderr = p.returncode, p.stderr
            except subprocess.TimeoutExpired as e:
                rc, stderr = "timeout", (e.stderr.decode() if isinstance(e.stderr, bytes) else e.stderr) or ""
            elapsed = time.monotonic() - start
            stats = cg.stats()
            records = []
            if os.path.exists(out):
                with open(out) as f:
                    records = [json.loads(line) for line in f if line.strip()]
    finally:
        cg.remove()
    guard_lines = [line for line in stderr.splitlines() if "memory guard:" in line]
    m = re.search(r"(\d+) bytes/token", stderr)
    return {"rc": rc, "stderr": stderr, "elapsed": elapsed, "stats": stats, "records": records,
            "guard_lines": guard_lines, "bytes_per_token": int(m.group(1)) if m else None}


def describe(label, r):
    s = r["stats"]
    print(f"  {label}: exit {r['rc']} after {r['elapsed']:.1f} s; cgroup limit {LIMIT / MiB:.0f} MiB, "
          f"peak {s['peak'] / MiB:.1f} MiB, OOM kills {s['oom_kills']}, times at the limit {s['failcnt']}; "
          f"{len(r['records'])} output records, {len(r['guard_lines'])} memory guard lines", flush=True)
    for line in r["guard_lines"][:12]:
        print(f"    {line}")
    if len(r["guard_lines"]) > 12:
        print(f"    ... {len(r['guard_lines']) - 12} more")


def check_records(records):
    """Every request exactly once, each a success; returns the total prompt tokens."""
    ids = [r.get("custom_id") for r in records]
    want = {f"req-{i}" for i in range(NUM_REQUESTS)}
    dup = sorted({i for i in ids if ids.count(i) > 1})
    check(not dup, f"custom_ids written more than once: {dup[:5]}")
    check(set(ids) == want, f"missing {sorted(want - set(ids))[:5]}, unexpected {sorted(set(ids) - want)[:5]}")
    errors = [r for r in records if r.get("error") or (r.get("response") or {}).get("status_code") != 200]
    check(not errors, f"{len(errors)} error records, e.g. {errors[:1]}")
    return sum(r["response"]["body"]["usage"]["prompt_tokens"] for r in records)


def test_guard_keeps_the_batch_under_the_limit(args):
    r = run_in_cgroup(args, "deepbatch_e2e_guard", "on")
    describe("guard on", r)
    check(r["stats"]["oom_kills"] == 0, f"{r['stats']['oom_kills']} OOM kills in the cgroup")
    check(r["rc"] == 0, f"deepbatch run exited {r['rc']}; stderr tail:\n{r['stderr'][-2000:]}")
    prompt_tokens = check_records(r["records"])
    if r["bytes_per_token"]:  # the batch must really need more KV memory than the limit allows
        demand = prompt_tokens * r["bytes_per_token"]
        print(f"  KV demand of the batch: {demand / MiB:.0f} MiB ({prompt_tokens} prompt tokens)")
        check(demand > LIMIT, f"the batch's KV demand ({demand / MiB:.0f} MiB) does not exceed the limit")
    check(any("back-off" in line for line in r["guard_lines"]),
          "the memory guard never backed off:\n" + "\n".join(r["guard_lines"][:20]))


def test_without_the_guard_the_run_is_oom_killed(args):
    r = run_in_cgroup(args, "deepbatch_e2e_noguard", "off")
    describe("guard off", r)
    check(r["stats"]["oom_kills"] >= 1 or r["rc"] not in (0, "timeout"),
          "without the guard the run was not OOM-killed: the batch does not test the guard")


def main():
    args = parse_args()
    skipped = skip_unless_cgroups(LIMIT)
    if skipped:
        return skipped
    tests = [test_guard_keeps_the_batch_under_the_limit]
    if os.environ.get("DB_SHOW_OOM") == "1":
        tests.append(test_without_the_guard_the_run_is_oom_killed)
    return run_tests(tests, args)


if __name__ == "__main__":
    sys.exit(main())
