#!/usr/bin/env python3
"""Serving capacity under an SLA beside a llama.cpp-family peer: `deepbatch serve` and the
peer's `llama-server` (parallel slots, continuous batching) are each started in turn (never
both at once), on 127.0.0.1 only, with the same GGUF and thread count, and driven by the same
`deepbatch loadtest --find-capacity` search: the same synthetic workload (same --seed, prompts
of --input-len tokens, --output-len tokens asked for with ignore_eos), Poisson arrivals, the
same SLOs (default ttft:p99:1s and tpot:p99:100ms). The search ramps x1.2 per step and
bisects until (bad - good) / good <= --precision; a step lasts --step-seconds at least (and
long enough for its percentile: 1000 requests for a p99 SLO).

After each search, a confirmation run at the found rate (a fresh workload seed, same for both
servers) measures the output tokens/s and the latencies at capacity; --no-confirm skips it.

Prints side by side: capacity (req/s) of each server and the ratio deepbatch / peer, the
search step's p99 TTFT / TPOT at capacity, and the confirmation run's achieved rate, output
tokens/s, latencies and mean tokens per request (the peer's ignore_eos bans only the EOS
token, so its answers may end early at another end-of-generation token: compare the
out tokens/req rows).

The peer is not part of this repository: pass the folder holding its binaries (--peer-bin),
as for bench/compare_peer.py. --np takes a comma list (the peer's slot count is its own
batch limit; its best value depends on the machine) and runs one peer search per value.

Example (full measurement, quiet machine):
  python3 bench/compare_serving.py --peer-bin PEER/build/bin --np 8,16
Smoke test:
  python3 bench/compare_serving.py --peer-bin PEER/build/bin --np 4 --step-seconds 4 \\
      --precision 0.5 --start-rate 2 --max-rate 2.5 --slo ttft:p50:1s --slo tpot:p50:100ms
"""
import argparse
import json
import math
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time

from compare_batch_serving import wait_health  # bench/ is on the path when run as a script

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
HOST = "127.0.0.1"  # every server binds here and only here
CONFIRM_SEED_OFFSET = 7919  # the confirmation run's workload seed is --seed + this


class Stop(Exception):
    """Raised by the signal handler so that every `finally` runs (servers are killed)."""


def on_signal(signum, _frame):
    raise Stop("signal %d" % signum)


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def percentile_requests(p):
    """Requests a step needs for percentile p (the loadtest's step sizing)."""
    return math.ceil(10.0 * 100.0 / (100.0 - p) - 1e-6)


def slo_percentile(slo):
    """'ttft:p99:1s' -> 99.0"""
    parts = slo.split(":")
    if len(parts) != 3 or not parts[1].startswith("p"):
        sys.exit("bad --slo %r (expected METRIC:pNN:LIMIT)" % slo)
    return float(parts[1][1:])


class Server:
    """A server process in its own process group; stop() kills the group on every path."""

    def __init__(self, label, cmd, port, log_path):
        self.label, self.cmd, self.port, self.log_path = label, cmd, port, log_path
        self.proc = None

    def start(self, timeout):
        self.log = open(self.log_path, "w")
        print("[%s] %s" % (self.label, " ".join(shlex.quote(c) for c in self.cmd)), flush=True)
        # Run outside the checkout (the peer writes a log file where it runs).
        self.proc = subprocess.Popen(self.cmd, stdout=self.log, stderr=subprocess.STDOUT, cwd=tempfile.gettempdir(),
                                     start_new_session=True)
        wait_health(self.port, self.proc, timeout, self.label, self.log_path)

    def stop(self):
        if self.proc is None:
            return
        # A second Ctrl-C must not cut the clean-up short.
        saved = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
        try:
            self._stop()
        finally:
            for s, h in saved.items():
                signal.signal(s, h)

    def _stop(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=20)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
            if self.proc.poll() is None:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait()
        self.proc = None
        self.log.close()


def run_child(cmd):
    """Runs a loadtest, killing it if we are interrupted; returns its exit status."""
    print("  $ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    p = subprocess.Popen(cmd, start_new_session=True)
    try:
        return p.wait()
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def loadtest_base(args, port, seed):
    cmd = [args.binary, "loadtest", "--url", "http://%s:%d" % (HOST, port), "--endpoint", "chat",
           "--input-len", args.input_len, "--output-len", args.output_len, "--seed", str(seed),
           "--arrival", "poisson"]
    if not args.no_ignore_eos:
        cmd.append("--ignore-eos")
    for s in args.slo:
        cmd += ["--slo", s]
    return cmd


def measure(args, label, server):
    """Starts `server`, searches its capacity, confirms it, stops it; returns the results."""
    stem = os.path.join(args.out_dir, label.replace(" ", "_"))
    res = {"label": label, "command": server.cmd, "log": server.log_path}
    try:
        server.start(args.ready_timeout)
        cap_json = stem + ".capacity.json"
        cmd = loadtest_base(args, server.port, args.seed) + [
            "-n", str(args.num_requests), "--find-capacity", "--min-step", str(args.step_seconds),
            "--precision", str(args.precision), "--start-rate", str(args.start_rate), "--output-json", cap_json]
        if args.max_rate > 0:
            cmd += ["--max-rate", str(args.max_rate)]
        if args.step_requests > 0:
            cmd += ["--step-requests", str(args.step_requests)]
        print("[%s] capacity search" % label, flush=True)
        if run_child(cmd) != 0:
            raise RuntimeError("the capacity search against %s failed" % label)
        with open(cap_json) as f:
            res["capacity_report"] = cap_json
            cap = json.load(f)["capacity"]
        res["capacity"] = cap
        rate = cap["sustainable_rate"] if cap["found"] else 0.0
        res["rate"] = rate
        good = [s for s in cap["steps"] if s["met"] and abs(s["rate"] - rate) <= 1e-9 * max(rate, 1)]
        res["cap_step"] = good[-1] if good else None
        if rate > 0 and not args.no_confirm:
            p = max(slo_percentile(s) for s in args.slo)
            n = max(math.ceil(rate * args.step_seconds),
                    args.step_requests if args.step_requests > 0 else percentile_requests(max(p, 50)))
            conf_json = stem + ".confirm.json"
            cmd = loadtest_base(args, server.port, args.seed + CONFIRM_SEED_OFFSET) + [
                "-n", str(n), "--rate", repr(rate), "--output-json", conf_json]
            print("[%s] confirmation run at %.3f req/s, %d requests" % (label, rate, n), flush=True)
            if run_child(cmd) != 0:
                raise RuntimeError("the confirmation run against %s failed" % label)
            with open(conf_json) as f:
                res["confirm_report"] = conf_json
                res["confirm"] = json.load(f)["summary"]
    finally:
        server.stop()
    return res


def deepbatch_server(args):
    port = free_port()
    cmd = [args.binary, "serve", "-m", args.model, "-t", str(args.threads), "--host", HOST, "--port", str(port)]
    cmd += shlex.split(args.extra_serve_args)
    return Server("deepbatch", cmd, port, os.path.join(args.out_dir, "deepbatch.log"))


def peer_server(args, np_):
    port = free_port()
    exe = os.path.join(args.peer_bin, "llama-server")
    if not os.access(exe, os.X_OK):
        sys.exit("no llama-server in --peer-bin %s" % args.peer_bin)
    # Continuous batching is the peer's default (-cb); said explicitly all the same.
    cmd = [exe, "-m", args.model, "-np", str(np_), "-c", str(np_ * args.peer_slot_ctx), "-t", str(args.threads),
           "-cb", "--host", HOST, "--port", str(port)]
    cmd += shlex.split(args.extra_peer_args)
    return Server("peer np %d" % np_, cmd, port, os.path.join(args.out_dir, "peer_np%d.log" % np_))


def slo_observed(step, metric):
    if not step:
        return None
    for c in step["slos"]:
        if c["metric"] == metric:
            return c["observed"]
    return None


def fmt(v, spec="%.2f", scale=1.0):
    return "-" if v is None else spec % (v * scale)


def ratio(a, b):
    return "-" if a is None or b is None or b <= 0 else "%.2fx" % (a / b)


def print_table(results, args):
    db = next((r for r in results if r["label"] == "deepbatch"), None)
    peers = [r for r in results if r["label"] != "deepbatch"]
    best_peer = max(peers, key=lambda r: r["rate"]) if peers else None
    cols = results + ([{"label": "db/peer"}] if db and best_peer else [])

    def conf(r, key, sub=None):
        c = r.get("confirm")
        if not c:
            return None
        return c[key][sub] if sub else c[key]

    def per_req(r, key):
        c = r.get("confirm")
        return c[key] / c["request_rate"] if c and c["request_rate"] > 0 else None

    rows = [
        ("capacity (req/s)", lambda r: r["rate"], "%.3f", 1, True),
        ("first bad rate (req/s)", lambda r: r["capacity"]["first_bad_rate"], "%.3f", 1, False),
        ("converged / steps", None, None, None, False),
        ("search TTFT at cap (ms) [1]", lambda r: slo_observed(r["cap_step"], "ttft"), "%.1f", 1e3, False),
        ("search TPOT at cap (ms) [1]", lambda r: slo_observed(r["cap_step"], "tpot"), "%.1f", 1e3, False),
        ("confirm: achieved req/s", lambda r: conf(r, "request_rate"), "%.3f", 1, True),
        ("confirm: output tok/s", lambda r: conf(r, "output_tokens_per_s"), "%.1f", 1, True),
        ("confirm: p99 TTFT (ms)", lambda r: conf(r, "ttft", "p99"), "%.1f", 1e3, False),
        ("confirm: p99 TPOT (ms)", lambda r: conf(r, "tpot", "p99"), "%.1f", 1e3, False),
        ("confirm: good / requests", None, None, None, False),
        ("confirm: in tokens/req", lambda r: per_req(r, "input_tokens_per_s"), "%.1f", 1, False),
        ("confirm: out tokens/req", lambda r: per_req(r, "output_tokens_per_s"), "%.1f", 1, False),
    ]
    w0, w = 30, 18
    print("\nSLOs: %s; workload: input %s, output %s%s, seed %d; %d threads"
          % (", ".join(args.slo), args.input_len, args.output_len, "" if args.no_ignore_eos else " (ignore_eos)",
             args.seed, args.threads))
    print("%-*s" % (w0, "") + "".join("%*s" % (w, c["label"]) for c in cols))
    for name, get, spec, scale, with_ratio in rows:
        cells = []
        for r in results:
            if name == "converged / steps":
                c = r["capacity"]
                cells.append("%s / %d" % ("yes" if c["converged"] else "no", len(c["steps"])))
            elif name == "confirm: good / requests":
                c = r.get("confirm")
                cells.append("%d / %d" % (c["good"], c["requests"]) if c else "-")
            else:
                cells.append(fmt(get(r), spec, scale))
        if len(cols) > len(results):
            cells.append(ratio(get(db), get(best_peer)) if with_ratio else "")
        print("%-*s" % (w0, name) + "".join("%*s" % (w, c) for c in cells))
    print("[1] the capacity step's value at each SLO's percentile; db/peer compares with %s (the best peer)"
          % (best_peer["label"] if best_peer else "-"))
    for r in results:
        c = r["capacity"]
        if not c["found"]:
            print("%s: no rate met the SLOs (%s)" % (r["label"], c["stop_reason"]))
        elif not c["converged"]:
            print("%s: search did not converge (%s)" % (r["label"], c["stop_reason"]))
        want = None
        try:
            want = float(args.output_len)
        except ValueError:
            pass
        out = per_req(r, "output_tokens_per_s")
        if want and out is not None and out < 0.98 * want:
            print("%s: answers averaged %.1f of %g requested tokens (ignore_eos not fully honoured?)"
                  % (r["label"], out, want))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(REPO, "build", "deepbatch"),
                    help="the deepbatch binary (serve, and loadtest for both servers)")
    ap.add_argument("--peer-bin", help="folder with the peer's llama-server (needed unless --only deepbatch)")
    ap.add_argument("--model", default=os.path.join(REPO, "models", "SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--np", default="16", help="peer slots (-np), a comma list runs one peer search per value")
    ap.add_argument("--peer-slot-ctx", type=int, default=1024, help="context per peer slot (-c is np times this)")
    ap.add_argument("--only", choices=["deepbatch", "peer"], help="measure one server only")
    ap.add_argument("--extra-serve-args", default="", help="extra `deepbatch serve` flags (one string)")
    ap.add_argument("--extra-peer-args", default="", help="extra llama-server flags (one string)")
    ap.add_argument("--slo", action="append", help="METRIC:pNN:LIMIT, repeatable (default ttft:p99:1s, tpot:p99:100ms)")
    ap.add_argument("--step-seconds", type=float, default=10, help="capacity search: seconds per step at least (--min-step)")
    ap.add_argument("--step-requests", type=int, default=0,
                    help="capacity search: requests per step (0: 10 beyond the SLO percentile, 1000 for p99)")
    ap.add_argument("--precision", type=float, default=0.05, help="capacity search: stop at (bad - good) / good <= this")
    ap.add_argument("--start-rate", type=float, default=1, help="capacity search: first rate (req/s)")
    ap.add_argument("--max-rate", type=float, default=0, help="capacity search: highest rate tried (0: no limit)")
    ap.add_argument("--input-len", default="uniform:100:400", help="prompt tokens (loadtest --input-len)")
    ap.add_argument("--output-len", default="64", help="max_tokens (loadtest --output-len)")
    ap.add_argument("--no-ignore-eos", action="store_true", help="let answers end at end-of-generation")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--num-requests", type=int, default=20000,
                    help="workload pool the search samples from (large, so that prompts seldom repeat and "
                         "neither server's prompt cache serves whole prompts)")
    ap.add_argument("--no-confirm", action="store_true", help="skip the confirmation run at the found rate")
    ap.add_argument("--ready-timeout", type=float, default=300, help="seconds a server may take to start")
    ap.add_argument("--out-dir", help="folder for the reports and server logs (default: a new temporary folder)")
    ap.add_argument("--json", help="write all results here")
    args = ap.parse_args()

    args.slo = args.slo or ["ttft:p99:1s", "tpot:p99:100ms"]
    for s in args.slo:
        slo_percentile(s)
    if args.only != "deepbatch" and not args.peer_bin:
        sys.exit("--peer-bin is required (or --only deepbatch)")
    nps = [int(x) for x in args.np.split(",") if x.strip()]
    args.binary = os.path.abspath(args.binary)
    args.model = os.path.abspath(args.model)
    if args.peer_bin:
        args.peer_bin = os.path.abspath(args.peer_bin)
    for path in (args.binary, args.model):
        if not os.path.exists(path):
            sys.exit("not found: " + path)
    args.out_dir = os.path.abspath(args.out_dir) if args.out_dir else tempfile.mkdtemp(prefix="compare_serving_")
    os.makedirs(args.out_dir, exist_ok=True)
    print("reports and logs in " + args.out_dir, flush=True)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    runs = []
    if args.only != "peer":
        runs.append(lambda: measure(args, "deepbatch", deepbatch_server(args)))
    if args.only != "deepbatch":
        for n in nps:
            runs.append(lambda n=n: measure(args, "peer np %d" % n, peer_server(args, n)))
    results = []
    try:
        for run in runs:
            results.append(run())
    except Stop as e:
        sys.exit("stopped (%s); servers killed" % e)
    print_table(results, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"settings": {k: v for k, v in vars(args).items()}, "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
