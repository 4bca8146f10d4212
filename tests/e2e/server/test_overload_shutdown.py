"""Overload and shutdown: 429 with Retry-After once the waiting queue reaches
--max-queued-requests; SIGTERM lets an in-flight stream finish, refuses new work
and exits 0; past --shutdown-timeout the rest is aborted and the server still exits 0."""
import http.client
import json
import os
import signal
import sys
import threading
import time
from urllib.parse import urlparse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
from e2e_main import check, parse_args, run_tests  # noqa: E402
from server_fixture import start_server, stop_server  # noqa: E402


def post(base, path, body, timeout=60):
    """(status, headers dict, body bytes) of one POST."""
    u = urlparse(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def open_stream(base, body):
    u = urlparse(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    conn.request("POST", "/v1/completions", json.dumps(dict(body, stream=True)), {"Content-Type": "application/json"})
    r = conn.getresponse()
    check(r.status == 200, f"stream status {r.status}")
    return conn, r


def test_429_when_queue_full(args):
    proc, base = start_server(args.binary, args.source_dir,
                              ["--max-num-seqs", "1", "--max-queued-requests", "2", "-t", "2",
                               "--kv-cache-memory", "32M"])
    try:
        results = []
        lock = threading.Lock()
        start = threading.Barrier(24)  # all requests arrive together, whatever the machine's speed

        def one(i):
            start.wait(30)
            res = post(base, "/v1/completions", {"prompt": f"Request {i}: count", "max_tokens": 32,
                                                 "ignore_eos": True})
            with lock:
                results.append(res)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(24)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        codes = [r[0] for r in results]
        check(len(results) == 24, f"{len(results)} answers")
        check(codes.count(200) >= 1 and codes.count(429) >= 1, f"codes {sorted(codes)}")
        check(set(codes) <= {200, 429}, f"codes {sorted(codes)}")
        for status, headers, body in results:
            if status == 429:
                check(headers.get("retry-after") == "1", f"Retry-After {headers}")
                err = json.loads(body)["error"]
                check(err["type"] == "rate_limit_error" and err["code"] == "rate_limit_exceeded", f"{err}")
    finally:
        check(stop_server(proc) == 0, "exit code")


def test_sigterm_finishes_in_flight_stream(args):
    proc, base = start_server(args.binary, args.source_dir, ["-t", "2", "--kv-cache-memory", "32M"])
    try:
        conn, r = open_stream(base, {"prompt": "Once upon a time", "max_tokens": 48, "ignore_eos": True})
        first = r.readline()
        check(first.startswith(b"data: "), f"first line {first!r}")
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        try:
            status, _, body = post(base, "/v1/completions", {"prompt": "late", "max_tokens": 2}, timeout=10)
            check(status == 503, f"new request during shutdown got {status}: {body[:200]!r}")
        except (ConnectionError, OSError):
            pass  # the listener is closed: refusing the connection is fine too
        rest = r.read().decode()
        conn.close()
        check(rest.endswith("data: [DONE]\n\n"), f"stream tail {rest[-80:]!r}")
        chunks = [json.loads(ev[6:]) for ev in rest.split("\n\n") if ev.startswith("data: {")]
        check(chunks[-1]["choices"][0]["finish_reason"] == "length", f"last chunk {chunks[-1]}")
        check(proc.wait(timeout=30) == 0, f"exit code {proc.returncode}")
    finally:
        stop_server(proc)


def test_shutdown_timeout_aborts_the_rest(args):
    proc, base = start_server(args.binary, args.source_dir,
                              ["-t", "2", "--kv-cache-memory", "64M", "--shutdown-timeout", "1"])
    try:
        conn, r = open_stream(base, {"prompt": "Once upon a time", "max_tokens": 2000, "ignore_eos": True})
        r.readline()
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        check(proc.wait(timeout=30) == 0, f"exit code {proc.returncode}")
        check(time.monotonic() - start < 15, "shutdown took too long")
        try:  # the stream ends (finish_reason "abort", or the connection closes); it must not hang
            r.read()
        except (http.client.IncompleteRead, ConnectionError):
            pass
        conn.close()
    finally:
        stop_server(proc)


def main():
    args = parse_args()
    return run_tests([test_429_when_queue_full, test_sigterm_finishes_in_flight_stream,
                      test_shutdown_timeout_aborts_the_rest], args)


if __name__ == "__main__":
    sys.exit(main())
