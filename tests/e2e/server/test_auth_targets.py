"""Every route, with and without the API key, reached through odd request-targets:
no leading slash, doubled slashes, dot segments, percent-encoding, absolute-form.
Without the key nothing but /health and /metrics may answer anything but 400/401
(or 404 for a target that names no route), and no target that reaches a route may
skip the key check; with the key each route answers as usual."""
import json
import os
import socket
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
from e2e_main import check, metric_value, parse_args, run_tests_on_server  # noqa: E402

KEY = "sk-e2e-secret"
COMPLETION = json.dumps({"prompt": "Hi", "max_tokens": 2, "temperature": 0})
CHAT = json.dumps({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2, "temperature": 0})

# (method, canonical path, body): every route the server mounts with a data dir.
ROUTES = [
    ("POST", "/v1/completions", COMPLETION),
    ("POST", "/v1/chat/completions", CHAT),
    ("GET", "/v1/models", None),
    ("GET", "/v1/models/MODEL", None),
    ("GET", "/v1/files", None),
    ("POST", "/v1/files", None),
    ("GET", "/v1/files/file-x", None),
    ("DELETE", "/v1/files/file-x", None),
    ("GET", "/v1/files/file-x/content", None),
    ("POST", "/v1/batches", "{}"),
    ("GET", "/v1/batches", None),
    ("GET", "/v1/batches/batch-x", None),
    ("POST", "/v1/batches/batch-x/cancel", None),
]
PUBLIC = [("GET", "/health"), ("GET", "/metrics")]


def spellings(path, host):
    """Ways a client may write `path` that a lenient parser could take for the same route."""
    rest = path[1:]
    return [
        path,
        rest,                                                # no leading slash: not origin-form
        "/" + path,                                          # doubled leading slash
        path.replace("/v1/", "/v1//", 1),                    # doubled inner slash
        "/v1/../" + rest,                                    # dot segments
        "/./" + rest,
        "/%76%31/" + path[len("/v1/"):] if path.startswith("/v1/") else path,  # %76%31 = "v1"
        path.replace("/", "%2F"),                            # encoded slashes
        f"http://{host}{path}",                              # absolute-form
        f"HTTP://{host}{path}?x=1",
        path + "?",
        path + "#frag",
        "*",
    ]


def raw_exchange(addr, data):
    """Sends raw bytes on a fresh connection; returns (status, headers, body) of the first response."""
    s = socket.create_connection(addr, timeout=60)
    try:
        s.sendall(data)
        raw = b""
        while True:
            got = s.recv(65536)
            if not got:
                break
            raw += got
    finally:
        s.close()
    head, _, payload = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    return int(lines[0].split()[1]), headers, payload


def send(addr, method, target, body=None, key=None, host=None):
    """One request on its own connection; returns (status, headers, body)."""
    host = host or f"{addr[0]}:{addr[1]}"
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}", "Connection: close"]
    if key:
        lines.append(f"Authorization: Bearer {key}")
    data = (body or "").encode()
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
    return raw_exchange(addr, ("\r\n".join(lines) + "\r\n\r\n").encode() + data)


def addr_of(base):
    host, port = base.split("//", 1)[1].rsplit(":", 1)
    return host, int(port)


def model_id(addr):
    status, _, body = send(addr, "GET", "/v1/models", key=KEY)
    check(status == 200, f"/v1/models with the key: {status}")
    return json.loads(body)["data"][0]["id"]


def test_no_target_skips_the_key(base):
    addr = addr_of(base)
    model = model_id(addr)
    host = f"{addr[0]}:{addr[1]}"
    leaks = []
    for method, path, body in ROUTES:
        path = path.replace("MODEL", model)
        for target in spellings(path, host):
            status, _, payload = send(addr, method, target, body)
            if status not in (400, 401, 404):
                leaks.append(f"{method} {target} -> {status} {payload[:80]!r}")
            if status == 404:
                check(b"error" in payload, f"{method} {target}: 404 without an error body")
    check(not leaks, "answered without the API key:\n  " + "\n  ".join(leaks))


def test_origin_form_without_slash_is_400(base):
    addr = addr_of(base)
    for target in ("v1/completions", "v1/models", "health", "*", "v1/files?limit=1"):
        status, _, payload = send(addr, "GET", target, key=KEY)
        check(status == 400, f"GET {target} with the key: {status} {payload[:120]!r}")


def test_every_route_answers_with_the_key(base):
    addr = addr_of(base)
    model = model_id(addr)
    host = f"{addr[0]}:{addr[1]}"
    for method, path, body in ROUTES:
        path = path.replace("MODEL", model)
        for target in (path, f"http://{host}{path}", "/v1/../" + path[1:], path.replace("/v1/", "/%76%31/", 1)):
            status, _, payload = send(addr, method, target, body, key=KEY)
            check(status not in (401, 405), f"{method} {target} with the key: {status} {payload[:120]!r}")
            if method == "GET" and path in ("/v1/models", "/v1/files", "/v1/batches"):
                check(status == 200, f"{method} {target} with the key: {status} {payload[:120]!r}")
        status, _, _ = send(addr, method, path, body, key="sk-wrong")
        check(status == 401, f"{method} {path} with a wrong key: {status}")


def test_public_routes_stay_open(base):
    addr = addr_of(base)
    for method, path in PUBLIC:
        for target in (path, f"http://{addr[0]}:{addr[1]}{path}"):
            status, _, _ = send(addr, method, target)
            check(status == 200, f"{method} {target} without a key: {status}")


def http_errors(addr, code):
    _, _, body = send(addr, "GET", "/metrics")
    return metric_value(body.decode(), "deepbatch:http_requests_total", {"code": code}) or 0


def test_http_details(base):
    """RFC 9112 details: HEAD on GET routes, exactly one Host in HTTP/1.1, empty lines before the
    request line skipped, and the transport's own error answers counted in the metrics."""
    addr = addr_of(base)
    status, headers, body = send(addr, "HEAD", "/health")
    check(status == 200 and body == b"" and int(headers.get("content-length", "0")) > 0,
          f"HEAD /health: {status} {headers} {body!r}")
    status, _, body = send(addr, "HEAD", "/v1/models", key=KEY)
    check(status == 200 and body == b"", f"HEAD /v1/models: {status}")
    before = http_errors(addr, "400")
    status, _, _ = raw_exchange(addr, b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n")
    check(status == 400, f"HTTP/1.1 without Host: {status}")
    status, _, _ = raw_exchange(addr, b"GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n")
    check(status == 400, f"two Host headers: {status}")
    status, _, _ = raw_exchange(addr, b"GET v1/models HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    check(status == 400, f"a target without its slash: {status}")
    after = http_errors(addr, "400")
    check(after - before == 3, f"http_requests_total{{code=400}} rose by {after - before}, expected 3")
    status, _, _ = raw_exchange(addr, b"\r\n\r\nGET /health HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    check(status == 200, f"empty lines before the request line: {status}")


def main():
    args = parse_args()
    data_dir = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"deepbatch-auth-e2e-{os.getpid()}")
    tests = [test_no_target_skips_the_key, test_origin_form_without_slash_is_400, test_every_route_answers_with_the_key,
             test_public_routes_stay_open, test_http_details]
    return run_tests_on_server(args, ["--api-key", KEY, "--data-dir", data_dir, "--max-num-seqs", "4"], tests)


if __name__ == "__main__":
    sys.exit(main())
