"""The server under a real memory cgroup limit (root only; exits 77, skipped, elsewhere).

1. The default KV pool is a share of the headroom under the cgroup's limit, not of the
   host's memory.
2. Under 600 MiB, 64 concurrent long requests (about 1500-token prompts, a few hundred
   tokens out, half of them streamed): the server is never OOM-killed, every request is
   answered (200, or 429/503 with Retry-After), and the cgroup's peak usage and the
   server's peak RSS stay under the limit.
"""
import http.client
import json
import os
import random
import sys
import tempfile
import threading
import time
import urllib.request
from urllib.parse import urlparse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
from cgroup_util import ChildMemoryCgroup, skip_unless_cgroups  # noqa: E402
from e2e_main import check, metric_value, parse_args, run_tests  # noqa: E402
from server_fixture import start_server, stop_server  # noqa: E402

# Run time (one of the suite's slowest, tests/README.md): the stress part serves every
# request it admits (the running ones and MAX_QUEUED more) in full, ~1,500 prompt tokens
# and MAX_TOKENS out each, so that the KV pool, the queue and the answers being written
# are at their largest at once inside the limit; that pressure is what it checks.
MiB = 2**20
KV_FRACTION = 0.25      # EngineConfig::kv_cache_fraction, the share of available memory
CALIBRATION_KV = 64 * MiB
STRESS_LIMIT = 600 * MiB
NUM_REQUESTS = 64
PROMPT_WORDS = 1150     # about 1500 tokens
MAX_TOKENS = 160
MAX_QUEUED = 16         # the rest is answered 429: at 2 cores the whole load would take minutes
CLIENT_TIMEOUT = 300    # generous: a slow answer on a busy 2-core machine is still an answer


def kv_total_blocks(base):
    with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
        return metric_value(r.read().decode(), "deepbatch:kv_cache_total_blocks")


def peak_rss(pid):
    """VmHWM of a live process, in bytes."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for pid {pid}")


def block_bytes_bounds(args):
    """(low, high] bounds of one KV block's bytes: an explicit budget C holds floor(C / bytes) blocks."""
    proc, base = start_server(args.binary, args.source_dir, ["-t", "2", "--kv-cache-memory", str(CALIBRATION_KV)])
    try:
        n = kv_total_blocks(base)
    finally:
        stop_server(proc)
    return CALIBRATION_KV / (n + 1), CALIBRATION_KV / n


def start_in_cgroup(args, cg, server_args):
    """Starts the server inside cg; returns (proc, base, launcher dir)."""
    tmp = tempfile.TemporaryDirectory(prefix="deepbatch_cgroup_")
    proc, base = start_server(cg.launcher(args.binary, tmp.name), args.source_dir, server_args)
    return proc, base, tmp


def test_kv_pool_sized_under_the_limit(args):
    low, high = block_bytes_bounds(args)
    limit = 400 * MiB
    cg = ChildMemoryCgroup.create("deepbatch_e2e_kv", limit)
    try:
        proc, base, tmp = start_in_cgroup(args, cg, ["-t", "2"])
        try:
            blocks = kv_total_blocks(base)
            usage = cg.stats()["usage"]
        finally:
            stop_server(proc)
            tmp.cleanup()
    finally:
        cg.remove()
    print(f"  {cg.version} cgroup limit {limit / MiB:.0f} MiB, usage {usage / MiB:.0f} MiB after start: "
          f"KV pool {blocks:.0f} blocks = {blocks * low / MiB:.0f}-{blocks * high / MiB:.0f} MiB")
    check(blocks * high <= KV_FRACTION * limit, f"KV pool of {blocks * low / MiB:.0f} MiB or more ignores the limit")
    check(blocks * high >= 0.8 * KV_FRACTION * (limit - usage), "KV pool far below its share of the headroom")


def prompt(i):
    rng = random.Random(i)
    words = ["river", "stone", "lantern", "orbit", "meadow", "copper", "signal", "harbor", "ember", "glacier",
             "violet", "thunder", "archive", "compass", "falcon", "quartz", "willow", "canyon", "ripple", "saddle"]
    return f"Story {i}: " + " ".join(rng.choice(words) for _ in range(PROMPT_WORDS)) + "\nContinue the story:"


def one_request(base, i):
    """(status, headers, complete): complete is True when a 200 carried all MAX_TOKENS tokens / [DONE]."""
    stream = i % 2 == 1
    body = {"prompt": prompt(i), "max_tokens": MAX_TOKENS, "ignore_eos": True, "stream": stream}
    u = urlparse(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=CLIENT_TIMEOUT)
    try:
        conn.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
        r = conn.getresponse()
        headers = {k.lower(): v for k, v in r.getheaders()}
        data = r.read().decode()
        if r.status != 200:
            return r.status, headers, False
        if stream:
            return 200, headers, data.endswith("data: [DONE]\n\n")
        return 200, headers, json.loads(data)["usage"]["completion_tokens"] == MAX_TOKENS
    finally:
        conn.close()


def fire(base):
    results = [None] * NUM_REQUESTS
    start = threading.Barrier(NUM_REQUESTS)

    def run(i):
        start.wait(30)
        try:
            results[i] = one_request(base, i)
        except Exception as e:  # noqa: BLE001 - reported as an unanswered request
            results[i] = (None, {}, repr(e))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(NUM_REQUESTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(CLIENT_TIMEOUT + 30)
    return results


def check_answers(results):
    codes = [r[0] for r in results]
    unanswered = [r for r in results if r[0] not in (200, 429, 503)]
    check(not unanswered, f"{len(unanswered)} requests unanswered or failed, e.g. {unanswered[:3]}")
    check(codes.count(200) >= 1, "no request was served")
    for status, headers, complete in results:
        if status == 200:
            check(complete, "a 200 answer was cut short")
        else:
            check("retry-after" in headers, f"{status} without Retry-After: {headers}")


def test_64_long_requests_under_600_mib(args):
    cg = ChildMemoryCgroup.create("deepbatch_e2e_stress", STRESS_LIMIT)
    try:
        proc, base, tmp = start_in_cgroup(args, cg, ["-t", "2", "--max-queued-requests", str(MAX_QUEUED)])
        try:
            start = time.monotonic()
            results = fire(base)
            elapsed = time.monotonic() - start
            alive = proc.poll() is None
            hwm = peak_rss(proc.pid) if alive else None
            stats = cg.stats()
        finally:
            rc = stop_server(proc)
            tmp.cleanup()
    finally:
        cg.remove()
    print(f"  {cg.version} cgroup limit {STRESS_LIMIT / MiB:.0f} MiB: peak usage {stats['peak'] / MiB:.1f} MiB, "
          f"server peak RSS {(hwm or 0) / MiB:.1f} MiB, OOM kills {stats['oom_kills']}, "
          f"times at the limit {stats['failcnt']}, {elapsed:.1f} s for {NUM_REQUESTS} requests, exit code {rc}")
    codes = [r[0] for r in results]
    print(f"  answers (status: count): {', '.join(f'{c}: {codes.count(c)}' for c in sorted(set(codes), key=str))}")
    check(alive, f"the server died under load (exit {proc.returncode})")
    check(stats["oom_kills"] == 0, f"{stats['oom_kills']} OOM kills in the cgroup")
    check_answers(results)
    check(stats["peak"] < STRESS_LIMIT, f"cgroup peak usage {stats['peak']} reached the limit")
    check(hwm < STRESS_LIMIT, f"server peak RSS {hwm} reached the limit")
    check(rc == 0, f"server exited with {rc} after SIGTERM")


def main():
    args = parse_args()
    skipped = skip_unless_cgroups(STRESS_LIMIT)
    if skipped:
        return skipped
    return run_tests([test_kv_pool_sized_under_the_limit, test_64_long_requests_under_600_mib], args)


if __name__ == "__main__":
    sys.exit(main())
