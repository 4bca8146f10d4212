"""100 streaming clients vanish mid-stream (half right after the response head,
while possibly still queued; half after their first tokens): every engine request is
aborted at once, so /metrics soon shows no running or waiting request and the
whole KV pool free, and the server keeps answering."""
import json
import os
import socket
import sys
import threading
import time
import urllib.request
from urllib.parse import urlparse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
from e2e_main import check, metric_value, parse_args, run_tests_on_server  # noqa: E402

CLIENTS = 100


def vanishing_client(host, port, i, after_tokens, outcomes):
    body = json.dumps({"prompt": f"Story {i}: once upon a time", "max_tokens": 200, "ignore_eos": True,
                       "stream": True}).encode()
    head = (f"POST /v1/completions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    s = socket.create_connection((host, port), timeout=60)
    try:
        s.sendall(head + body)
        data = b""
        want = b"data: {" if after_tokens else b"\r\n\r\n"
        while want not in data:
            got = s.recv(4096)
            if not got:
                break
            data += got
        outcomes[i] = data.startswith(b"HTTP/1.1 200") and want in data
    finally:
        s.close()  # vanish without reading the rest


def metrics(base):
    with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
        return r.read().decode()


def test_vanishing_stream_clients_free_the_pool(base):
    u = urlparse(base)
    outcomes = [False] * CLIENTS
    threads = [threading.Thread(target=vanishing_client, args=(u.hostname, u.port, i, i % 2 == 1, outcomes))
               for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    check(all(outcomes), f"{outcomes.count(False)} clients got no stream")
    deadline = time.monotonic() + 30
    while True:
        text = metrics(base)
        running = metric_value(text, "deepbatch:num_requests_running")
        waiting = metric_value(text, "deepbatch:num_requests_waiting")
        free = metric_value(text, "deepbatch:kv_cache_free_blocks")
        total = metric_value(text, "deepbatch:kv_cache_total_blocks")
        if (running, waiting, free) == (0, 0, total - 1):
            break
        check(time.monotonic() < deadline, f"after 30 s: running {running}, waiting {waiting}, free {free}/{total}")
        time.sleep(0.2)
    generated = metric_value(text, "deepbatch:generation_tokens_total")
    check(generated < CLIENTS * 200 / 2, f"{generated} tokens generated: the streams were not aborted")
    aborted = metric_value(text, "deepbatch:request_success_total", {"finished_reason": "abort"})
    check(aborted == CLIENTS, f"{aborted} samples finished as aborted, expected {CLIENTS}")
    req = urllib.request.Request(base + "/v1/completions", json.dumps({"prompt": "Hi", "max_tokens": 3}).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        check(r.status == 200 and json.loads(r.read())["usage"]["completion_tokens"] == 3, "server still answers")


def main():
    return run_tests_on_server(parse_args(), ["-t", "2", "--max-num-seqs", "32", "--kv-cache-memory", "64M"],
                               [test_vanishing_stream_clients_free_the_pool])


if __name__ == "__main__":
    sys.exit(main())
