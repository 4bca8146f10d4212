"""`deepbatch loadtest` against a real `deepbatch serve`:

1. an open-loop Poisson run: every request answered, the report's counts, rates and
   latency percentiles consistent with the workload (exact output lengths with
   --ignore-eos), the load generator's own CPU cost printed;
2. a closed-loop run at fixed concurrency on /v1/completions;
3. a capacity search on a TTFT SLO: it ends with a sustainable rate whose step met
   the SLO and a first bad rate whose step did not, within the stated precision;
4. bad input: a malformed --slo or --url fails with a message naming the option, and
   an unreachable server gives failed requests counted as connection errors.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
from e2e_main import check, parse_args, run_tests_on_server  # noqa: E402

ARGS = None


def loadtest(base, *extra, timeout=240):
    cmd = [ARGS.binary, "loadtest", "--url", base, "--input-len", "48", "--output-len", "12", "--ignore-eos", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def report_of(base, *extra):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "report.json")
        r = loadtest(base, *extra, "--output-json", path)
        check(r.returncode == 0, f"loadtest failed ({r.returncode}): {r.stderr[-2000:]}")
        with open(path) as f:
            return json.load(f), r.stdout


def test_open_loop_poisson_run(base):
    rep, out = report_of(base, "-n", "30", "--rate", "10", "--seed", "3", "--slo", "ttft:p99:30s")
    s = rep["summary"]
    check(s["requests"] >= 28 and s["succeeded"] == s["requests"] and s["failed"] == 0, f"counts {s}")
    check(s["good"] == s["succeeded"], f"a generous SLO is met by every request: {s}")
    check(abs(s["output_tokens_per_s"] - 12 * s["request_rate"]) < 0.01 * s["output_tokens_per_s"] + 1e-9,
          f"12 tokens per request: {s['output_tokens_per_s']} vs {s['request_rate']} req/s")
    for m in ("ttft", "tpot", "itl", "e2e"):
        d = s[m]
        check(0 < d["p50"] <= d["p90"] <= d["p99"] <= d["max"], f"{m} percentiles out of order: {d}")
    # A chunk may carry more than one token when the server's output side falls behind.
    check(s["ttft"]["count"] == s["succeeded"] and 8 * s["succeeded"] <= s["itl"]["count"] <= 11 * s["succeeded"],
          f"samples: ttft {s['ttft']['count']}, itl {s['itl']['count']}")
    check(s["e2e"]["p50"] > s["ttft"]["p50"], f"e2e after ttft: {s}")
    check(rep["settings"]["arrivals"]["process"].startswith("poisson"), f"settings {rep['settings']}")
    check("load generator:" in out and "CPU" in out, f"no CPU cost line:\n{out}")
    print(f"  {s['requests']} requests, {s['request_rate']:.2f} req/s, TTFT p99 {s['ttft']['p99'] * 1e3:.0f} ms")


def test_closed_loop_on_completions(base):
    rep, _ = report_of(base, "-n", "16", "--arrival", "closed", "--concurrency", "4", "--endpoint", "completions")
    s = rep["summary"]
    check(s["succeeded"] >= 15 and s["failed"] == 0, f"counts {s}")


def test_capacity_search_on_ttft(base):
    rep, out = report_of(base, "-n", "200", "--find-capacity", "--slo", "ttft:p90:0.15s", "--start-rate", "16",
                         "--min-step", "2", "--precision", "0.3", "--seed", "5")
    cap = rep["capacity"]
    steps = cap["steps"]
    check(cap["found"] and cap["converged"], f"capacity {cap['stop_reason']}: {steps}")
    good = [st for st in steps if st["met"]]
    bad = [st for st in steps if not st["met"]]
    check(abs(max(st["rate"] for st in good) - cap["sustainable_rate"]) < 1e-9, f"steps {steps}")
    check(cap["first_bad_rate"] is not None and abs(min(st["rate"] for st in bad) - cap["first_bad_rate"]) < 1e-9,
          f"steps {steps}")
    check((cap["first_bad_rate"] - cap["sustainable_rate"]) / cap["sustainable_rate"] <= 0.3 + 1e-9, f"cap {cap}")
    for st in steps:
        check(st["requests"] >= 100, f"a p90 step needs 100 requests: {st}")
    check("capacity:" in out, out)
    print(f"  capacity {cap['sustainable_rate']:.2f} req/s (first bad {cap['first_bad_rate']:.2f}), "
          f"{len(steps)} steps")


def test_bad_input(base):
    r = loadtest(base, "--slo", "ttft:99:1s")
    check(r.returncode != 0 and "--slo" in r.stderr, f"malformed --slo: {r.returncode} {r.stderr}")
    r = loadtest("ftp://nowhere")
    check(r.returncode != 0 and "--url" in r.stderr, f"malformed --url: {r.returncode} {r.stderr}")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.json")
        r = loadtest(f"http://127.0.0.1:{port}", "--model", "m", "-n", "3", "--rate", "50", "--output-json", path)
        check(r.returncode == 0, f"unreachable server: {r.returncode} {r.stderr}")
        with open(path) as f:
            s = json.load(f)["summary"]
        check(s["failed"] == s["requests"] and s["errors"].get("connection") == s["requests"], f"errors {s}")


# Run time (one of the suite's slowest, tests/README.md): the capacity search sends 200
# requests in real time at each rate it tries (up to about 12 s a step from 16 req/s),
# and takes several rates to bracket the capacity within 30%.
def main():
    global ARGS
    ARGS = parse_args()
    return run_tests_on_server(ARGS, ["--no-batch-api", "--max-num-seqs", "16"],
                               [test_open_loop_poisson_run, test_closed_loop_on_completions,
                                test_capacity_search_on_ttft, test_bad_input])


if __name__ == "__main__":
    sys.exit(main())
