"""A long prompt does not hold up a short request: while an 8,000-token prompt
prefills, a 16-token greedy request sent during it gets its first token within
two of the long prompt's full-threshold steps, and all 16 tokens far sooner than
the long prompt's prefill takes; its text is the same as when it runs alone.

A full-threshold step is measured as the long prompt's prefill time divided by
its number of threshold-sized chunks (LONG_TOKENS / THRESHOLD)."""
import http.client
import json
import math
import os
import random
import sys
import threading
import time
import urllib.request
from urllib.parse import urlparse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
from e2e_main import check, metric_value, parse_args, run_tests_on_server  # noqa: E402

LONG_TOKENS = 8000
THRESHOLD = 512       # --long-prefill-threshold: the long prompt's chunk when it runs alone
SHORT_TOKENS = 16
SHORT_MAX_TOKENS = 16
HTTP_SLACK_S = 0.5    # request parsing, tokenization and streaming around the two steps


def stream(base, body, out):
    """Streams a completion; sets out["sent"] (monotonic), out["times"] (seconds from sending to each
    chunk with text), out["text"]."""
    u = urlparse(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
    try:
        out["sent"] = time.monotonic()
        conn.request("POST", "/v1/completions", json.dumps(dict(body, stream=True)),
                     {"Content-Type": "application/json"})
        r = conn.getresponse()
        check(r.status == 200, f"status {r.status}")
        times, text = [], ""
        for line in r:
            if not line.startswith(b"data: {"):
                continue
            choice = json.loads(line[len(b"data: "):])["choices"][0]
            if choice.get("text"):
                times.append(time.monotonic() - out["sent"])
                text += choice["text"]
        out["times"], out["text"] = times, text
    finally:
        conn.close()


def num_running(base):
    with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
        return metric_value(r.read().decode(), "deepbatch:num_requests_running")


def wait_running(base, timeout=60):
    deadline = time.monotonic() + timeout
    while (num_running(base) or 0) < 1:
        check(time.monotonic() < deadline, f"the long prompt was not running after {timeout} s")
        time.sleep(0.02)


def token_ids(seed, n):
    rng = random.Random(seed)
    return [rng.randrange(300, 40000) for _ in range(n)]


def test_short_request_is_not_held_up_by_a_long_prompt(base):
    long_body = {"prompt": token_ids(1, LONG_TOKENS), "max_tokens": 2, "temperature": 0, "ignore_eos": True}
    short_body = {"prompt": token_ids(2, SHORT_TOKENS), "max_tokens": SHORT_MAX_TOKENS, "temperature": 0,
                  "ignore_eos": True}
    long_out, short_out = {}, {}
    long_thread = threading.Thread(target=stream, args=(base, long_body, long_out))
    long_thread.start()
    wait_running(base)  # its first chunk is done: it is prefilling
    stream(base, short_body, short_out)
    long_thread.join(300)
    check(len(long_out.get("times", [])) >= 1, f"the long prompt produced nothing: {long_out}")
    check(len(short_out["times"]) >= SHORT_MAX_TOKENS // 2, f"short request chunks: {short_out['times']}")

    prefill_s = long_out["times"][0]
    step_s = prefill_s / math.ceil(LONG_TOKENS / THRESHOLD)
    ttft_s, total_s = short_out["times"][0], short_out["times"][-1]
    print(f"long prompt: prefill {prefill_s:.2f} s, full-threshold step {step_s:.3f} s; "
          f"short request sent {short_out['sent'] - long_out['sent']:.2f} s after it: "
          f"first token {ttft_s:.3f} s, {SHORT_MAX_TOKENS} tokens {total_s:.3f} s", flush=True)
    check(short_out["sent"] < long_out["sent"] + prefill_s, "the short request was sent after the long prefill")
    check(ttft_s < 2 * step_s + HTTP_SLACK_S,
          f"short request's first token after {ttft_s:.3f} s, over two steps ({step_s:.3f} s each)")
    check(total_s < prefill_s / 3,
          f"short request took {total_s:.3f} s, not far below the long prompt's prefill ({prefill_s:.2f} s)")

    alone = {}
    stream(base, short_body, alone)
    check(alone["text"] == short_out["text"],
          f"greedy text differs beside the long prompt: {short_out['text']!r} vs alone {alone['text']!r}")


def main():
    return run_tests_on_server(parse_args(), ["-t", "2", "--max-num-seqs", "8", "--kv-cache-memory", "512M",
                                              "--max-num-batched-tokens", "2048",
                                              "--long-prefill-threshold", str(THRESHOLD)],
                               [test_short_request_is_not_held_up_by_a_long_prompt])


if __name__ == "__main__":
    sys.exit(main())
