#!/usr/bin/env python3
"""Offline batch throughput, side by side in one run, on the same requests:

  batched      `deepbatch run` (continuous batching, all requests submitted at once)
  no-prefix    the same with prefix caching off
  one-at-a-time `deepbatch run --max-num-seqs 1` (static: one request after another)
  serve        (--serve) `deepbatch serve --max-num-seqs N` driven exactly like the peer below
  llama-server a llama.cpp-family server with parallel slots (-np N, continuous batching),
               driven with the same request bodies by N concurrent clients (it serves one
               choice per request, so a request with n > 1 is sent as n requests)

Each run's wall time covers the whole file; generated and prompt tokens are read
from the `usage` of every response. Outputs of sampled requests differ between
engines (and so do their lengths), so compare tokens/s as well as requests/s.

Example:
  python3 bench/compare_batch_serving.py --binary build/deepbatch \
      --model models/SmolLM2-135M-Instruct.Q4_1.gguf --input examples/requests.jsonl \
      --peer-server PATH/TO/llama-server --concurrency 64
"""
import argparse
import concurrent.futures
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time


def read_requests(path, limit):
    reqs = []
    with open(path) as f:
        for line in f:
            if line.strip():
                reqs.append(json.loads(line))
    return reqs[:limit] if limit else reqs


def usage_totals(bodies):
    prompt = sum(b["usage"]["prompt_tokens"] for b in bodies)
    gen = sum(b["usage"]["completion_tokens"] for b in bodies)
    return prompt, gen


def run_deepbatch(args, reqs, extra, label):
    with tempfile.TemporaryDirectory() as tmp:
        inp = os.path.join(tmp, "in.jsonl")
        out = os.path.join(tmp, "out.jsonl")
        with open(inp, "w") as f:
            for r in reqs:
                f.write(json.dumps(r) + "\n")
        cmd = [args.binary, "run", "-m", args.model, "-i", inp, "-o", out, "-t", str(args.threads),
               "--no-progress"] + extra
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        bodies, errors = [], 0
        with open(out) as f:
            for line in f:
                rec = json.loads(line)
                if rec.get("error") or rec["response"]["status_code"] != 200:
                    errors += 1
                else:
                    bodies.append(rec["response"]["body"])
    prompt, gen = usage_totals(bodies)
    return {"label": label, "wall_s": wall, "requests": len(bodies), "errors": errors,
            "prompt_tokens": prompt, "generated_tokens": gen}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_health(port, proc, timeout=300, label="peer server", log_path=None):
    """Waits until GET /health on 127.0.0.1:port answers 200; raises when `proc` exits first
    or `timeout` seconds pass (naming `label` and, when given, its log file)."""
    where = "; log: %s" % log_path if log_path else ""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("%s exited with %d before it was ready%s" % (label, proc.returncode, where))
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/health")
            if c.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError("%s was not ready after %d s%s" % (label, timeout, where))


def post(port, url, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    c.request("POST", url, json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    if r.status != 200:
        raise RuntimeError("peer answered %d: %s" % (r.status, data[:200]))
    return json.loads(data)


def peer_jobs(reqs):
    """The peer serves one choice per request: a request with n > 1 becomes n requests
    with n = 1 (its prompt tokens are counted once)."""
    jobs = []
    for r in reqs:
        n = int(r["body"].get("n", 1) or 1)
        for i in range(n):
            body = dict(r["body"], n=1)
            jobs.append((r["url"], body, i == 0))
    return jobs


def run_peer_server(args, reqs):
    port = free_port()
    slots = args.concurrency
    cmd = [args.peer_server, "-m", args.model, "-np", str(slots), "-c", str(slots * args.peer_slot_ctx),
           "-t", str(args.threads), "--host", "127.0.0.1", "--port", str(port)]
    return drive_server(cmd, port, reqs, slots, "llama-server -np %d" % slots)


def run_deepbatch_server(args, reqs):
    port = free_port()
    names = {r["body"].get("model") for r in reqs} - {None}
    cmd = [args.binary, "serve", "-m", args.model, "-t", str(args.threads), "--max-num-seqs", str(args.concurrency),
           "--host", "127.0.0.1", "--port", str(port)]
    if len(names) == 1:  # serve under the name the requests use
        cmd += ["--served-model-name", names.pop()]
    return drive_server(cmd, port, reqs, args.concurrency, "deepbatch serve, %d clients" % args.concurrency)


def drive_server(cmd, port, reqs, clients, label):
    """Starts a server, sends every request by `clients` concurrent clients, stops it."""
    log = open(os.path.join(tempfile.gettempdir(), "bench_server.log"), "w")
    # Servers may write log files where they run (the peer does): run them outside
    # the checkout, with the paths given relative to here made absolute.
    cmd = [os.path.abspath(c) if os.path.exists(c) else c for c in cmd]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=tempfile.gettempdir())
    try:
        wait_health(port, proc)
        t0 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(max_workers=clients) as pool:
            answers = list(pool.map(lambda job: (post(port, job[0], job[1]), job[2]), peer_jobs(reqs)))
        wall = time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    prompt = sum(b["usage"]["prompt_tokens"] for b, first in answers if first)
    gen = sum(b["usage"]["completion_tokens"] for b, _ in answers)
    bodies = [b for b, first in answers if first]
    return {"label": label, "wall_s": wall, "requests": len(bodies), "errors": 0,
            "prompt_tokens": prompt, "generated_tokens": gen}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", default="examples/requests.jsonl")
    ap.add_argument("--limit", type=int, default=0, help="first N requests only (0 = all)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=64, help="--max-num-seqs of deepbatch and -np of the peer")
    ap.add_argument("--peer-server", help="llama-server binary (omit to skip the peer)")
    ap.add_argument("--peer-slot-ctx", type=int, default=2048, help="context per peer slot")
    ap.add_argument("--skip-static", action="store_true", help="skip the one-at-a-time run")
    ap.add_argument("--serve", action="store_true",
                    help="also run `deepbatch serve` driven exactly like the peer server (same clients, same requests)")
    ap.add_argument("--skip-no-prefix", action="store_true", help="skip the prefix-caching-off run")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()

    reqs = read_requests(args.input, args.limit)
    seqs = ["--max-num-seqs", str(args.concurrency)]
    runs = [lambda: run_deepbatch(args, reqs, seqs, "deepbatch run (batched)")]
    if not args.skip_no_prefix:
        runs.append(lambda: run_deepbatch(args, reqs, seqs + ["--no-enable-prefix-caching"],
                                          "deepbatch run, no prefix cache"))
    if args.serve:
        runs.append(lambda: run_deepbatch_server(args, reqs))
    if args.peer_server:
        runs.append(lambda: run_peer_server(args, reqs))
    if not args.skip_static:
        runs.append(lambda: run_deepbatch(args, reqs, ["--max-num-seqs", "1"], "deepbatch one at a time"))

    results = []
    for run in runs:
        res = run()
        res["req_per_s"] = res["requests"] / res["wall_s"]
        res["gen_tok_per_s"] = res["generated_tokens"] / res["wall_s"]
        results.append(res)
        print("%-34s %8.1f s  %6.2f req/s  %7.1f gen tok/s  (%d requests, %d errors, %d prompt + %d generated tokens)"
              % (res["label"], res["wall_s"], res["req_per_s"], res["gen_tok_per_s"], res["requests"], res["errors"],
                 res["prompt_tokens"], res["generated_tokens"]), flush=True)

    base = results[0]
    print("\nratios (batched deepbatch / other):")
    for r in results[1:]:
        print("  vs %-32s wall %.2fx   req/s %.2fx   gen tok/s %.2fx"
              % (r["label"], r["wall_s"] / base["wall_s"], base["req_per_s"] / r["req_per_s"],
                 base["gen_tok_per_s"] / r["gen_tok_per_s"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
