"""Hundreds of malformed requests (broken JSON, wrong types, huge numbers, invalid
UTF-8, oversized bodies, broken chunked encodings, protocol garbage, slowloris
heads) each get a 4xx OpenAI error JSON, or a clean close where HTTP allows nothing
else, while a well-formed client alongside keeps getting the right answer; the
server then shuts down cleanly (exit 0, so no sanitizer report either)."""
import json
import os
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlparse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
from e2e_main import check, parse_args, run_tests_on_server  # noqa: E402

MAX_BODY = 256 * 1024
GOOD = {"prompt": "The capital of France is", "max_tokens": 4, "temperature": 0}


def exchange(addr, data, pause_after=None, timeout=30, half_close=False):
    """Sends `data` (bytes, or a list of pieces with pauses), reads until the server closes or one full
    response arrived; returns (status or None, body bytes)."""
    s = socket.create_connection(addr, timeout=timeout)
    raw = b""
    try:
        try:
            for piece in data if isinstance(data, list) else [data]:
                s.sendall(piece)
                if pause_after:
                    time.sleep(pause_after)
            if half_close:
                s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server may answer and close before it read everything
        while True:
            try:
                got = s.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not got:
                break
            raw += got
            status, body, complete = parse_response(raw)
            if complete:
                return status, body
    finally:
        s.close()
    status, body, _ = parse_response(raw)
    return status, body


def parse_response(raw):
    head, sep, rest = raw.partition(b"\r\n\r\n")
    if not sep:
        return None, b"", False
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    if "content-length" in headers:
        n = int(headers["content-length"])
        return status, rest[:n], len(rest) >= n
    return status, rest, False


def post(path, body, extra_headers=b"", content_type=b"application/json"):
    if isinstance(body, str):
        body = body.encode()
    return (b"POST " + path + b" HTTP/1.1\r\nHost: t\r\nContent-Type: " + content_type + b"\r\n" + extra_headers +
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


def json_cases():
    """Bodies that must be answered 400 by /v1/completions or /v1/chat/completions."""
    valid = json.dumps({"prompt": "hello there", "max_tokens": 3, "temperature": 0.5, "stop": ["x"]})
    cases = [(b"/v1/completions", valid[:i]) for i in range(0, len(valid) - 1, 2)]  # truncated JSON
    cases += [(b"/v1/completions", s) for s in
              ["", " ", "{", "}", "[", "nul", "tru", '{"prompt": "a",}', "{'prompt': 'a'}", '{"prompt": "a"} x',
               '{"prompt": NaN}', '{"prompt": "a", "max_tokens": Infinity}', "[" * 100000, "{\"a\":" * 50000,
               '{"prompt": "\\ud800"}', '{"prompt": "\\x41"}', '"just a string"', "42", "null", "[]",
               '{"prompt": "a" "b"}', "\x00\x01\x02", '{"prompt": "a\u0000b", "max_tokens": -5}',
               '{"prompt": "a", "max_tokens": 1e400}', '{"prompt": "a", "seed": ' + "9" * 400 + "}",
               '{"prompt": "a", "temperature": -1e400}', '{"prompt": [' + "1," * 5000 + "]}"]]
    wrong = {"prompt": [5, {}, True, [[1, "a"]], [], [[]], ["a", 3]],
             "max_tokens": ["5", 1.5, -1, 0, True, [], 10 ** 30, 2 ** 63, -(2 ** 63), 10 ** 9],
             "temperature": ["hot", -0.1, 1e308, [], {}], "top_p": [0, -1, 2, "x"], "top_k": ["x", -5, 2 ** 40, 1.5],
             "min_p": [-1, 2, "x"], "n": [0, -1, "2", 10 ** 9, 1.5], "seed": ["x", 1.5, 2 ** 64 + 1, [], -(2 ** 70)],
             "stop": [5, [1, 2], [""], {"a": 1}, ["a", None]], "logprobs": [-1, 100, "x", [], 21],
             "echo": ["yes", 1, []], "stream": ["yes", 2, {}], "stream_options": ["x", 5, {"include_usage": "y"}],
             "presence_penalty": [-3, 3, "x"], "frequency_penalty": [5, "x"], "repetition_penalty": [0, -1, "x"],
             "priority": [-1, 3, "high", 1.5], "stop_token_ids": ["x", [-1], [2 ** 40], 5], "model": [5, [], {}],
             "user": [5, [], {}], "ignore_eos": ["x", 3], "skip_special_tokens": ["x"]}
    for field, values in wrong.items():
        for v in values:
            body = {"prompt": "hello", "max_tokens": 2}
            body[field] = v
            cases.append((b"/v1/completions", json.dumps(body)))
    chat_wrong = [{"messages": "hi"}, {"messages": []}, {"messages": [{"role": "user"}]},
                  {"messages": [{"role": 5, "content": "x"}]}, {"messages": [{"role": "user", "content": 5}]},
                  {"messages": [{"role": "wizard", "content": "x"}]}, {"messages": [1, 2]},
                  {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]},
                  {"messages": [{"role": "user", "content": "x"}], "logprobs": "yes"},
                  {"messages": [{"role": "user", "content": "x"}], "top_logprobs": 50, "logprobs": True},
                  {"messages": [{"role": "user", "content": "x"}], "max_completion_tokens": -3},
                  {"messages": [{"role": "user", "content": "x"}], "n": 0}, {}, {"prompt": "x"}]
    cases += [(b"/v1/chat/completions", json.dumps(b)) for b in chat_wrong]
    return cases


def invalid_utf8_cases():
    bads = [b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe2\x82", b"\xf8\x88\x80\x80\x80", b"abc\x80def", b"\xfe\xfe"]
    out = []
    for b in bads:
        out.append(post(b"/v1/completions", b'{"prompt": "' + b + b'", "max_tokens": 2}'))
        out.append(post(b"/v1/chat/completions", b'{"messages": [{"role": "user", "content": "' + b + b'"}]}'))
        out.append(post(b"/v1/completions", b'{"prompt": "ok", "stop": ["' + b + b'"]}'))
    return out


def protocol_cases():
    big = b"x" * (MAX_BODY + 10)
    chunked = b"POST /v1/completions HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
    cases = [
        (post(b"/v1/completions", b'{"prompt": "' + big + b'"}'), {413}),
        (b"POST /v1/completions HTTP/1.1\r\nHost: t\r\nContent-Length: 99999999999\r\n\r\n{}", {413, 400}),
        (b"POST /v1/comp", None),  # head cut short
        (b"POST /v1/completions HTTP/1.1\r\nHost: t\r\nContent-Length: -4\r\n\r\n{}", {400}),
        (b"POST /v1/completions HTTP/1.1\r\nHost: t\r\nContent-Length: abc\r\n\r\n{}", {400}),
        (b"POST /v1/completions HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n{}", {400}),
        (b"POST /v1/completions HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n{}", {400, 501}),
        (chunked + b"zz\r\n{}\r\n0\r\n\r\n", {400}),
        (chunked + b"-1\r\n{}\r\n0\r\n\r\n", {400}),
        (chunked + b"2\r\n{}XX0\r\n\r\n", {400}),
        (chunked + b"ffffffffffffffffff\r\n{}\r\n0\r\n\r\n", {400, 413}),
        (chunked + b"100000\r\n" + b"a" * 100, None),  # truncated: the client stops sending
        (chunked + b"2\r\n{}\r\n", None),                # no terminating chunk
        (chunked + b"8\r\n{\"prompt\"\r\n", None),
        (b"GARBAGE\r\n\r\n", {400}),
        (b"\r\n\r\n", {408}),  # empty lines before a request line are skipped (RFC 9112 2.2): no request came
        (b"GET / HTTP/9.9\r\n\r\n", {400, 505}),
        (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", {400, 505, 404, 405}),
        (b"POST /v1/completions HTTP/1.1\r\nHost t\r\nContent-Length: 2\r\n\r\n{}", {400}),
        (b"POST /v1/completions HTTP/1.1\r\nX-Big: " + b"h" * 40000 + b"\r\n\r\n", {431, 400}),
        (b"POST /v1/completions HTTP/1.1\r\n" + b"X-A: b\r\n" * 5000 + b"\r\n", {431, 400}),
        (b"GET /v1/completions HTTP/1.1\r\nHost: t\r\n\r\n", {405}),
        (b"GET /v1/nothing/here HTTP/1.1\r\nHost: t\r\n\r\n", {404}),
        (b"DELETE /v1/models HTTP/1.1\r\nHost: t\r\n\r\n", {405}),
        (b"POST /v1/completions\x00 HTTP/1.1\r\nHost: t\r\n\r\n", {400, 404}),
        (b"POST /v1/completions HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n{}", None),  # short body
    ]
    return cases


def check_error_response(status, body, allowed, what):
    if allowed is None:  # HTTP allows only a timeout answer or a close
        check(status is None or status in (400, 408, 413), f"{what}: status {status}")
    else:
        check(status in allowed, f"{what}: status {status}, expected {sorted(allowed)}; body {body[:200]!r}")
    if status is not None:
        err = json.loads(body)["error"]
        check(isinstance(err["message"], str) and err["message"] and "type" in err and "code" in err,
              f"{what}: error body {body[:200]!r}")


def run_case(addr, case):
    kind, payload, allowed = case
    try:
        if kind == "slowloris":
            status, body = exchange(addr, payload, pause_after=0.5, timeout=20)
        else:  # a request cut short ends with the client's half-close, as when a client dies
            status, body = exchange(addr, payload, timeout=20, half_close=allowed is None)
        check_error_response(status, body, allowed, kind)
        return None
    except Exception as e:  # noqa: BLE001 - collected and reported together
        shown = payload if isinstance(payload, bytes) else payload[0]
        return f"{kind} ...{shown[-120:]!r}: {e}"


def good_client(addr, expected, stop, counts):
    body = json.dumps(GOOD)
    while not stop.is_set():
        status, resp = exchange(addr, post(b"/v1/completions", body), timeout=60)
        ok = status == 200 and json.loads(resp)["choices"][0]["text"] == expected
        counts["ok" if ok else "bad"] += 1
        if not ok:
            counts["last_bad"] = (status, resp[:300])


def test_malformed_requests_get_4xx_while_good_client_is_served(addr):
    status, resp = exchange(addr, post(b"/v1/completions", json.dumps(GOOD)), timeout=60)
    check(status == 200, f"reference request: {status} {resp[:200]!r}")
    expected = json.loads(resp)["choices"][0]["text"]

    cases = [("json", post(path, body), {400}) for path, body in json_cases()]
    cases += [("utf8", raw, {400}) for raw in invalid_utf8_cases()]
    cases += [("protocol", raw, allowed) for raw, allowed in protocol_cases()]
    slow_head = [b"POST /v1/completions HTTP/1.1\r\n", b"Host: t\r\n", b"X-Slow: 1\r\n", b"X-Slow: 2\r\n",
                 b"X-Slow: 3\r\n", b"X-Slow: 4\r\n", b"X-Slow: 5\r\n", b"X-Slow: 6\r\n"]
    cases += [("slowloris", slow_head, None) for _ in range(20)]
    print(f"{len(cases)} malformed requests", flush=True)

    stop = threading.Event()
    counts = {"ok": 0, "bad": 0}
    good = threading.Thread(target=good_client, args=(addr, expected, stop, counts))
    good.start()
    try:
        with ThreadPoolExecutor(max_workers=24) as pool:
            failures = [f for f in pool.map(lambda c: run_case(addr, c), cases) if f]
    finally:
        stop.set()
        good.join(120)
    for f in failures[:20]:
        print("  " + f)
    check(not failures, f"{len(failures)} of {len(cases)} malformed requests were not answered properly")
    check(counts["bad"] == 0, f"the well-formed client got {counts['bad']} wrong answers: {counts.get('last_bad')}")
    check(counts["ok"] >= 1, "the well-formed client got no answer")
    print(f"well-formed client: {counts['ok']} correct answers meanwhile", flush=True)


def host_port(base):
    u = urlparse(base)
    return u.hostname, u.port


def main():
    return run_tests_on_server(
        parse_args(),
        ["-t", "2", "--max-num-seqs", "8", "--kv-cache-memory", "32M", "--max-body-size", str(MAX_BODY),
         "--header-timeout", "2"],
        [test_malformed_requests_get_4xx_while_good_client_is_served],
        lambda base: (host_port(base),), start_timeout=120)


if __name__ == "__main__":
    sys.exit(main())
