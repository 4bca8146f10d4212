"""Hostile request bodies just under the default --max-body-size (32 MB) are refused
with a 400 naming what is wrong, and the memory one such request costs stays bounded:
the server's peak resident memory (VmHWM) grows by less than twice the body size.

Bodies: a prompt of 15 M token ids, a text prompt of ~5 M tokens, a chat request whose
messages render to ~5 M tokens, a 15 M-deep nesting inside an unknown field and
inside a known one, and 3 M small strings as prompts."""
import http.client
import json
import os
import sys
from urllib.parse import urlparse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
from e2e_main import check, parse_args, run_tests_on_server  # noqa: E402

BODY_BYTES = 30 * 1024 * 1024


def reset_peak_rss(pid):
    """Sets the process's VmHWM back to its current resident memory (Linux clear_refs "5")."""
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


def peak_rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/<pid>/status")


def post(base, path, body):
    u = urlparse(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def repeated(head, item, sep, tail):
    """head + item (sep item)* + tail, about BODY_BYTES long."""
    count = (BODY_BYTES - len(head) - len(tail)) // (len(item) + len(sep))
    return head + sep.join([item] * count) + tail


def token_id_array():
    return "/v1/completions", repeated('{"max_tokens": 1, "prompt": [', "1", ",", "]}")


def text_prompt():
    # " hello" is one token: ~5 M tokens in all.
    return "/v1/completions", '{"max_tokens": 1, "prompt": "' + "hello " * (BODY_BYTES // 6) + '"}'


def chat_messages():
    message = '{"role": "user", "content": "' + "hello " * (BODY_BYTES // 6 // 32) + '"}'
    return "/v1/chat/completions", repeated('{"max_tokens": 1, "messages": [', message, ",", "]}")


def nested_unknown_field():
    depth = (BODY_BYTES - 100) // 2
    return "/v1/completions", '{"prompt": "x", "extra": ' + "[" * depth + "]" * depth + "}"


def nested_known_field():
    depth = (BODY_BYTES - 100) // 2
    return "/v1/completions", '{"prompt": ' + "[" * depth + "]" * depth + "}"


def many_small_strings():
    return "/v1/completions", repeated('{"max_tokens": 1, "prompt": [', '"ab"', ",", "]}")


CASES = [
    (token_id_array, "prompt", "context"),
    (text_prompt, "prompt", "context"),
    (chat_messages, "messages", "context"),
    (nested_unknown_field, "extra", ""),
    (nested_known_field, "prompt", "nest"),
    (many_small_strings, "prompt", "values"),
]


def run(base, pid):
    failures = []
    for make, param, word in CASES:
        path, body = make()
        data = body.encode()
        reset_peak_rss(pid)
        before = peak_rss_bytes(pid)
        status, reply = post(base, path, data)
        after = peak_rss_bytes(pid)
        growth = after - before
        print(f"{make.__name__}: body {len(data) / 2**20:.1f} MiB, status {status}, "
              f"peak RSS {before / 2**20:.0f} -> {after / 2**20:.0f} MiB (+{growth / 2**20:.0f} MiB)", flush=True)
        err = {}
        try:
            err = json.loads(reply).get("error", {})
        except ValueError:
            pass
        print(f"  {err.get('message', reply[:200])!r}", flush=True)
        if status != 400:
            failures.append(f"{make.__name__}: status {status}, expected 400")
        elif param and err.get("param") != param:
            failures.append(f"{make.__name__}: param {err.get('param')!r}, expected {param!r}")
        elif word and word not in err.get("message", "").lower():
            failures.append(f"{make.__name__}: message {err.get('message')!r} does not mention {word!r}")
        if growth >= 2 * len(data):
            failures.append(f"{make.__name__}: peak RSS grew by {growth / 2**20:.0f} MiB, "
                            f"not under twice the body ({2 * len(data) / 2**20:.0f} MiB)")
    check(not failures, "; ".join(failures))


def main():
    args = parse_args()
    holder = {}

    def test_hostile_bodies_are_refused_within_bounded_memory(base):
        run(base, holder["pid"])

    import server_fixture
    start = server_fixture.start_server

    def start_and_remember(*a, **kw):
        proc, base = start(*a, **kw)
        holder["pid"] = proc.pid
        return proc, base

    server_fixture.start_server = start_and_remember
    return run_tests_on_server(args, ["--max-num-seqs", "4"], [test_hostile_bodies_are_refused_within_bounded_memory])


if __name__ == "__main__":
    sys.exit(main())
