#!/usr/bin/env python3
"""Decode speed of B sequences that share one long prompt, through `deepbatch serve`.

One server per --kv-dtypes entry is started (all at once, or one after the other with
--one-server-at-a-time for models that do not fit twice in memory). Each server first
computes the shared prompt (--context random token ids) once; every measured request is
that prompt plus one token of its own, so its blocks come from the prefix cache and the
request computes one prompt token before it decodes. A measurement of batch B sends B
such requests at once (streamed, greedy, EOS ignored, --gen new tokens each) and reports
decode tokens/s as `deepbatch bench --phase decode` defines it: the tokens received after
every request of the batch had its first token, over the time from that moment to the
last token. Rounds alternate the dtypes within each batch size, so load on a shared
machine falls on both alike; the medians and the per-round ratios to the first dtype
are printed.
"""
import argparse
import http.client
import json
import random
import statistics
import subprocess
import tempfile
import os
import sys
import threading
import time


MODEL_ID = {}


def wait_ready(port, proc, timeout_s=1800):
    """Waits for the server's /v1/models; records the model id it serves."""
    t0 = time.time()
    while time.time() - t0 < timeout_s:
        if proc.poll() is not None:
            sys.exit("server on port %d exited with %d" % (port, proc.returncode))
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/v1/models")
            r = c.getresponse()
            if r.status == 200:
                MODEL_ID[port] = json.loads(r.read())["data"][0]["id"]
                return
        except OSError:
            pass
        time.sleep(1)
    sys.exit("server on port %d not ready" % port)


def stream(port, prompt, gen, times, errors):
    """One streamed completion; appends (arrival time, tokens in the chunk) to `times`."""
    try:
        stream_into(port, prompt, gen, times)
    except Exception as e:  # reported by measure()
        errors.append(repr(e))


def stream_into(port, prompt, gen, times):
    body = json.dumps({"model": MODEL_ID[port], "prompt": prompt, "max_tokens": gen, "temperature": 0,
                       "ignore_eos": True, "stream": True, "logprobs": 1})
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    c.request("POST", "/v1/completions", body=body, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        raise RuntimeError("HTTP %d: %s" % (r.status, r.read()[:500]))
    for line in r:
        line = line.strip()
        if not line.startswith(b"data: ") or line == b"data: [DONE]":
            continue
        chunk = json.loads(line[6:])
        for ch in chunk.get("choices", []):
            lp = ch.get("logprobs") or {}
            n = len(lp.get("tokens") or [])
            if n:
                times.append((time.time(), n))


def measure(port, prefix, batch, gen, tail_base):
    per_request = [[] for _ in range(batch)]
    errors = []
    threads = [threading.Thread(target=stream, args=(port, prefix + [tail_base + i], gen, per_request[i], errors))
               for i in range(batch)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        sys.exit("request failed: " + errors[0])
    if any(sum(n for _, n in r) != gen for r in per_request):
        sys.exit("a request did not return %d tokens" % gen)
    t_all_started = max(r[0][0] for r in per_request)
    t_end = max(r[-1][0] for r in per_request)
    if gen == 1:
        return 0.0
    tokens = sum(n for r in per_request for (t, n) in r if t > t_all_started)
    return tokens / (t_end - t_all_started)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True, help="deepbatch binary")
    ap.add_argument("--model", required=True)
    ap.add_argument("--kv-dtypes", default="f16,q8_0")
    ap.add_argument("--context", type=int, default=8192, help="shared prompt tokens")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--gen", type=int, default=32, help="new tokens per request")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--kv-cache-memory", default="2G")
    ap.add_argument("--port", type=int, default=18300, help="first server's port")
    ap.add_argument("--one-server-at-a-time", action="store_true",
                    help="run every round of one dtype before starting the next server")
    ap.add_argument("--server-args", default="", help="extra `deepbatch serve` arguments")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    prefix = [rng.randrange(1000, 100000) for _ in range(args.context)]
    dtypes = args.kv_dtypes.split(",")
    batches = [int(b) for b in args.batches.split(",")]
    results = {(d, b): [] for d in dtypes for b in batches}

    procs = []

    def start(i, d):
        cmd = [args.binary, "serve", "-m", args.model, "-t", str(args.threads), "--port", str(args.port + i),
               "--kv-dtype", d, "--kv-cache-memory", args.kv_cache_memory,
               "--max-num-seqs", str(max(batches)), "--no-batch-api"] + args.server_args.split()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(os.path.join(tempfile.gettempdir(), "long_context_decode-serve-%s.log" % d), "w"))
        procs.append(p)
        wait_ready(args.port + i, p)
        t0 = time.time()
        measure(args.port + i, prefix, 1, 1, 99999)  # computes the shared prompt once (tails: ids 99999+)
        print("[%s] shared prompt of %d tokens computed in %.1f s" % (d, args.context, time.time() - t0),
              flush=True)
        return p

    def run_round(r, which):
        for b in batches:
            for i, d in which:
                tps = measure(args.port + i, prefix, b, args.gen, 100000 + 100 * r)
                results[(d, b)].append(tps)
                print("round %d  %-5s batch %3d: %8.2f tok/s" % (r + 1, d, b, tps), flush=True)

    try:
        if args.one_server_at_a_time:
            for i, d in enumerate(dtypes):
                p = start(i, d)
                for r in range(args.rounds):
                    run_round(r, [(i, d)])
                p.terminate()
                p.wait()
        else:
            for i, d in enumerate(dtypes):
                start(i, d)
            for r in range(args.rounds):
                run_round(r, list(enumerate(dtypes)))
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                p.wait()

    print("\nmedians (tok/s) over %d rounds; ratio: per-round %s/%s, median" % (args.rounds, "/".join(dtypes[1:]),
                                                                              dtypes[0]))
    for b in batches:
        row = ["batch %3d" % b]
        for d in dtypes:
            row.append("%s %.2f" % (d, statistics.median(results[(d, b)])))
        for d in dtypes[1:]:
            ratios = [x / y for x, y in zip(results[(d, b)], results[(dtypes[0], b)])]
            row.append("%s/%s %.3f (%s)" % (d, dtypes[0], statistics.median(ratios),
                                            " ".join("%.3f" % x for x in ratios)))
        print("  ".join(row))


if __name__ == "__main__":
    main()
