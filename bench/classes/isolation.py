#!/usr/bin/env python3
"""Class isolation under load: time to first token of interactive (priority 0) chat
requests on an idle server, and while a background batch floods it.

Five phases, each on a fresh `deepbatch serve`:
  idle         P0 probes only
  flood        P0 probes while a batch of --flood requests runs through /v1/batches
               (batch requests run at priority 2), default settings
  flood-nowm   the same with --kv-watermarks 0,0,0 (no KV kept free for P0)
  flood-nocap  the same with --interactive-step-tokens 0 (P2 decodes share every step)
  flood-off    both off

A probe is a streamed chat completion with priority 0; its TTFT is the time to the
first content chunk. Probes are sent one after another, --probe-gap seconds apart.
Prints p50 / p99 per phase, the ratios against idle, and the tokens/s generated
meanwhile (what the flood gets while the probes run).

  python3 bench/classes/isolation.py --binary build/deepbatch \
      --model models/SmolLM2-135M-Instruct.Q4_1.gguf --flood 500 --probes 40
"""
import argparse
import http.client
import json
import os
import socket
import subprocess
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args, extra, data_dir):
    port = free_port()
    cmd = [args.binary, "serve", "-m", args.model, "--port", str(port), "--data-dir", data_dir,
           "--max-num-seqs", str(args.max_num_seqs), "--kv-cache-memory", args.kv_cache_memory] + args.serve_args.split() + extra
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/health")
            if c.getresponse().status == 200:
                return proc, port
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("the server did not become healthy")


def request(port, method, path, body=None, headers=None, timeout=600):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    if r.status != 200:
        raise RuntimeError(f"{method} {path}: {r.status} {data[:200]!r}")
    return json.loads(data)


def model_id(port):
    return request(port, "GET", "/v1/models")["data"][0]["id"]


def start_flood(port, n, max_tokens):
    lines = []
    model = model_id(port)
    for i in range(n):
        body = {"model": model, "messages": [{"role": "user", "content": f"Write a long story about ship number {i}."}],
                "max_tokens": max_tokens, "ignore_eos": True}
        lines.append(json.dumps({"custom_id": f"r{i}", "method": "POST", "url": "/v1/chat/completions", "body": body}))
    boundary = "----isolation"
    payload = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n"
               f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"flood.jsonl\"\r\n"
               f"Content-Type: application/jsonl\r\n\r\n" + "\n".join(lines) + f"\r\n--{boundary}--\r\n")
    f = request(port, "POST", "/v1/files", payload.encode(),
                {"Content-Type": f"multipart/form-data; boundary={boundary}"})
    b = request(port, "POST", "/v1/batches", json.dumps(
        {"input_file_id": f["id"], "endpoint": "/v1/chat/completions", "completion_window": "24h"}),
        {"Content-Type": "application/json"})
    return b["id"]


def metric(port, name):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    c.request("GET", "/metrics")
    for line in c.getresponse().read().decode().splitlines():
        if line.split("{")[0].split(" ")[0] == name:
            return float(line.split()[-1])
    return 0.0


def probe(port, i, model):
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": f"Say hello to visitor {i}."}],
                       "max_tokens": 8, "priority": 0, "stream": True})
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    t0 = time.monotonic()
    c.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        raise RuntimeError(f"probe {i}: {r.status} {r.read()[:200]!r}")
    ttft = None
    for raw in r:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[6:])
        delta = chunk.get("choices", [{}])[0].get("delta", {})
        if ttft is None and delta.get("content"):
            ttft = time.monotonic() - t0
    return ttft if ttft is not None else time.monotonic() - t0


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def phase(args, label, extra, flood):
    with tempfile.TemporaryDirectory() as d:
        proc, port = start(args, extra, d)
        try:
            if flood:
                start_flood(port, args.flood, args.flood_tokens)
                deadline = time.monotonic() + 60
                while metric(port, "deepbatch:num_requests_running") < args.max_num_seqs / 2 and \
                        time.monotonic() < deadline:
                    time.sleep(0.2)
            ttfts = []
            model = model_id(port)
            tokens0, t0 = metric(port, "deepbatch:generation_tokens_total"), time.monotonic()
            for i in range(args.probes):
                ttfts.append(probe(port, i, model))
                time.sleep(args.probe_gap)
            rate = (metric(port, "deepbatch:generation_tokens_total") - tokens0) / (time.monotonic() - t0)
            return {"label": label, "p50": percentile(ttfts, 50), "p99": percentile(ttfts, 99), "rate": rate}
        finally:
            proc.terminate()
            proc.wait(timeout=60)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="build/deepbatch")
    ap.add_argument("--model", default="models/SmolLM2-135M-Instruct.Q4_1.gguf")
    ap.add_argument("--flood", type=int, default=500)
    ap.add_argument("--flood-tokens", type=int, default=128)
    ap.add_argument("--probes", type=int, default=40)
    ap.add_argument("--probe-gap", type=float, default=0.25)
    ap.add_argument("--max-num-seqs", type=int, default=64)
    ap.add_argument("--kv-cache-memory", default="256M")
    ap.add_argument("--serve-args", default="", help="more `deepbatch serve` options for every phase")
    ap.add_argument("--phases", default="idle,flood,flood-nowm,flood-nocap,flood-off")
    args = ap.parse_args()
    phases = {"idle": ([], False), "flood": ([], True), "flood-nowm": (["--kv-watermarks", "0,0,0"], True),
              "flood-nocap": (["--interactive-step-tokens", "0"], True),
              "flood-off": (["--kv-watermarks", "0,0,0", "--interactive-step-tokens", "0"], True)}
    rows = [phase(args, name, *phases[name]) for name in args.phases.split(",")]
    idle = rows[0]
    for r in rows:
        print(f"{r['label']:>12}: TTFT p50 {r['p50'] * 1000:7.1f} ms, p99 {r['p99'] * 1000:7.1f} ms"
              f"  (p99 / idle {r['p99'] / idle['p99']:.2f}x), {r['rate']:7.0f} generated tok/s")


if __name__ == "__main__":
    main()
