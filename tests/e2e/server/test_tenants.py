"""Tenants from --api-keys, against a real server: an unknown key is 401; a priority
class more urgent than the tenant's allowance is 403 (an out-of-range one stays 400);
each quota answers 429 with Retry-After (concurrent requests, tokens per minute,
requests in unfinished batches); files and batches of one tenant do not exist for
another in any route (404 like a missing id, absent from lists); and a malformed key
file, or --api-key with --api-keys, makes `deepbatch serve` exit non-zero naming the
problem before the model loads."""
import http.client
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from urllib.parse import urlparse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
import server_fixture  # noqa: E402
from e2e_main import check, expect_raises, parse_args, run_tests, run_tests_on_server  # noqa: E402

import openai  # noqa: E402

# One tenant per concern, so that one test's quota never touches another test.
TENANTS = [
    {"name": "team-a", "key": "sk-team-a", "max_priority": 0},
    {"name": "team-b", "key": "sk-team-b", "max_priority": 1},
    {"name": "one-at-a-time", "key": "sk-conc", "max_concurrent_requests": 1},
    {"name": "small-budget", "key": "sk-tpm", "max_tokens_per_minute": 40},
    {"name": "short-queue", "key": "sk-queue", "max_queued_batch_requests": 3},
]
KEYS = {t["name"]: t["key"] for t in TENANTS}


def client(base, tenant):
    return openai.OpenAI(base_url=base + "/v1", api_key=KEYS[tenant], max_retries=0, timeout=120)


def post(base, key, body, path="/v1/completions"):
    """POSTs `body` with `key`; returns (status, headers, parsed body)."""
    u = urlparse(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json",
                                                      "Authorization": f"Bearer {key}"})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, json.loads(r.read())
    finally:
        conn.close()


def request_file(n, max_tokens=2):
    lines = [json.dumps({"custom_id": f"r{i}", "method": "POST", "url": "/v1/completions",
                         "body": {"prompt": f"Count {i}", "max_tokens": max_tokens, "temperature": 0,
                                  "ignore_eos": True}}) for i in range(n)]
    return io.BytesIO(("\n".join(lines) + "\n").encode())


def upload(c, n, max_tokens=2):
    return c.files.create(file=("requests.jsonl", request_file(n, max_tokens)), purpose="batch")


def create_batch(c, file_id):
    return c.batches.create(input_file_id=file_id, endpoint="/v1/completions", completion_window="24h")


def wait_batch(c, batch_id, timeout=120):
    deadline = time.monotonic() + timeout
    while True:
        b = c.batches.retrieve(batch_id)
        if b.status in ("completed", "failed", "cancelled"):
            return b
        check(time.monotonic() < deadline, f"batch {batch_id} still {b.status} after {timeout} s")
        time.sleep(0.2)


def test_unknown_key_is_401(base):
    status, _, body = post(base, "sk-nobody", {"prompt": "Hi", "max_tokens": 1})
    check(status == 401 and body["error"]["code"] == "invalid_api_key", f"unknown key: {status} {body}")
    check("sk-nobody" not in json.dumps(body), f"the error quotes the key: {body}")
    e = expect_raises(openai.AuthenticationError, openai.OpenAI(base_url=base + "/v1", api_key="sk-team-a2",
                                                                max_retries=0).files.list)
    check(e.status_code == 401, f"files with an unknown key: {e}")


def test_priority_above_the_allowance_is_403(base):
    status, _, body = post(base, KEYS["team-b"], {"prompt": "Hi", "max_tokens": 1, "priority": 0})
    check(status == 403, f"team-b (max_priority 1) asking for class 0: {status} {body}")
    check(body["error"]["code"] == "priority_not_allowed" and body["error"]["param"] == "priority", f"{body}")
    for priority in (1, 2, None):
        req = {"prompt": "Hi", "max_tokens": 1}
        if priority is not None:
            req["priority"] = priority
        status, _, body = post(base, KEYS["team-b"], req)
        check(status == 200, f"team-b asking for class {priority}: {status} {body}")
    status, _, body = post(base, KEYS["team-a"], {"prompt": "Hi", "max_tokens": 1, "priority": 0})
    check(status == 200, f"team-a (max_priority 0) asking for class 0: {status} {body}")
    status, _, body = post(base, KEYS["team-b"], {"prompt": "Hi", "max_tokens": 1, "priority": 3})
    check(status == 400, f"an out-of-range priority: {status} {body}")


def test_concurrency_quota_is_429_with_retry_after(base):
    u = urlparse(base)
    first = {}

    def stream_long():
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
        conn.request("POST", "/v1/completions",
                     json.dumps({"prompt": "Once upon a time", "max_tokens": 400, "ignore_eos": True,
                                 "stream": True}),
                     {"Content-Type": "application/json", "Authorization": f"Bearer {KEYS['one-at-a-time']}"})
        r = conn.getresponse()
        first["status"] = r.status
        for line in r:
            if line.startswith(b"data: {"):
                first.setdefault("streaming", time.monotonic())
        conn.close()

    t = threading.Thread(target=stream_long)
    t.start()
    deadline = time.monotonic() + 60
    while "streaming" not in first and t.is_alive():
        check(time.monotonic() < deadline, "the first request never streamed")
        time.sleep(0.01)
    status, headers, body = post(base, KEYS["one-at-a-time"], {"prompt": "Hi", "max_tokens": 1})
    still_running = t.is_alive()
    check(status == 429 or not still_running, f"a second request while one is in flight: {status} {body}")
    check(status == 429, f"the first request ended before the second was checked (make it longer): {status}")
    check(body["error"]["code"] == "rate_limit_exceeded" and headers.get("retry-after") == "1",
          f"429 body/headers: {headers} {body}")
    status, _, body = post(base, KEYS["team-a"], {"prompt": "Hi", "max_tokens": 1})
    check(status == 200, f"another tenant meanwhile: {status} {body}")
    t.join(120)
    check(first.get("status") == 200, f"the first request: {first}")
    status, _, body = post(base, KEYS["one-at-a-time"], {"prompt": "Hi", "max_tokens": 1})
    check(status == 200, f"once the first ended its slot is free again: {status} {body}")


def test_tokens_per_minute_quota_is_429_with_retry_after(base):
    status, _, body = post(base, KEYS["small-budget"], {"prompt": "Hi", "max_tokens": 50, "ignore_eos": True})
    check(status == 200, f"the first request (window empty): {status} {body}")
    used = body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]
    check(used >= 40, f"the first request used {used} tokens, fewer than the limit")
    status, headers, body = post(base, KEYS["small-budget"], {"prompt": "Hi", "max_tokens": 1})
    check(status == 429 and body["error"]["code"] == "rate_limit_exceeded", f"over the window: {status} {body}")
    retry = int(headers.get("retry-after", "0"))
    check(30 <= retry <= 60, f"Retry-After {retry}: the first request's tokens leave the window about 60 s later")
    status, _, body = post(base, KEYS["team-a"], {"prompt": "Hi", "max_tokens": 1})
    check(status == 200, f"another tenant meanwhile: {status} {body}")


def test_batch_queue_quota(base):
    c = client(base, "short-queue")
    long_file = upload(c, 3, max_tokens=2000)
    running = create_batch(c, long_file.id)  # 3 queued requests: the whole quota
    one_more = upload(c, 1)
    e = expect_raises(openai.RateLimitError, create_batch, c, one_more.id)
    check(e.response.headers.get("retry-after"), f"429 without Retry-After: {e.response.headers}")
    too_big = upload(c, 4)
    e = expect_raises(openai.BadRequestError, create_batch, c, too_big.id)
    check("max_queued_batch_requests" in str(e), f"a batch larger than the quota: {e}")
    create_batch(client(base, "team-a"), upload(client(base, "team-a"), 1).id)  # other tenants are not counted
    c.batches.cancel(running.id)
    check(wait_batch(c, running.id).status == "cancelled", "the long batch was not cancelled")
    create_batch(c, one_more.id)  # room again


def test_files_and_batches_are_invisible_to_other_tenants(base):
    a, b = client(base, "team-a"), client(base, "team-b")
    file_a = upload(a, 2)
    batch_a = create_batch(a, file_a.id)
    done = wait_batch(a, batch_a.id)
    check(done.status == "completed" and done.output_file_id, f"team-a's batch: {done}")
    file_b = upload(b, 1)

    check(file_a.id in [f.id for f in a.files.list()], "team-a does not see its own file")
    check(done.output_file_id in [f.id for f in a.files.list()], "team-a does not see its batch's output")
    check(batch_a.id in [x.id for x in a.batches.list()], "team-a does not see its own batch")
    b_files = [f.id for f in b.files.list()]
    check(file_a.id not in b_files and done.output_file_id not in b_files and file_b.id in b_files,
          f"team-b's file list: {b_files}")
    check(batch_a.id not in [x.id for x in b.batches.list()], "team-a's batch is in team-b's list")
    check(file_b.id not in [f.id for f in a.files.list()], "team-b's file is in team-a's list")

    def not_found(fn, *args, **kwargs):
        e = expect_raises(openai.NotFoundError, fn, *args, **kwargs)
        return e.body

    for file_id in (file_a.id, done.output_file_id):
        foreign = not_found(b.files.retrieve, file_id)
        missing = not_found(b.files.retrieve, "file-0000000000000000000000ff")
        check(foreign["code"] == missing["code"] and foreign["message"].replace(file_id, "ID") ==
              missing["message"].replace("file-0000000000000000000000ff", "ID"),
              f"a foreign file differs from a missing one: {foreign} vs {missing}")
        not_found(b.files.content, file_id)
        not_found(b.files.delete, file_id)
        not_found(create_batch, b, file_id)
    foreign = not_found(b.batches.retrieve, batch_a.id)
    missing = not_found(b.batches.retrieve, "batch_0000000000000000000000ff")
    check(foreign["code"] == missing["code"], f"a foreign batch differs from a missing one: {foreign} vs {missing}")
    not_found(b.batches.cancel, batch_a.id)

    # Nothing of team-a's was touched by the attempts.
    check(a.files.retrieve(file_a.id).id == file_a.id, "team-a's file")
    check(len(a.files.content(done.output_file_id).read()) > 0, "team-a's output content")
    check(a.batches.retrieve(batch_a.id).status == "completed", "team-a's batch")
    a.files.delete(file_a.id)
    not_found(a.files.retrieve, file_a.id)


def start_expecting_failure(args, extra, key_file_text=None):
    """Runs `deepbatch serve` that must fail at start; returns (exit code, its output)."""
    with tempfile.TemporaryDirectory(prefix="deepbatch_keys_") as d:
        path = os.path.join(d, "keys.json")
        if key_file_text is not None:
            with open(path, "w") as f:
                f.write(key_file_text)
        cmd = [args.binary, "serve", "-m", server_fixture.default_model(args.source_dir), "--port", "0",
               "--no-batch-api", "--api-keys", path, *extra]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout + p.stderr, path


def test_malformed_key_files_stop_the_server(args):
    cases = [
        ('{"tenants": [', "not valid JSON"),
        ('{"tenants": [{"name": "a", "key": "sk-1"}, {"name": "b", "key": "sk-1"}]}', "tenants[1].key: duplicate key"),
        ('{"tenants": [{"name": "a", "key": "sk-1", "max_tokens_per_minute": -5}]}', "must not be negative"),
        ('{"tenants": [{"name": "a", "key": "sk-1", "color": "red"}]}', "unknown field 'color'"),
        (None, "cannot open"),  # no such file
    ]
    for text, problem in cases:
        rc, out, path = start_expecting_failure(args, [], text)
        check(rc != 0, f"serve started with {text!r}: {out}")
        check(path in out and problem in out, f"the message for {text!r} should name {path} and '{problem}': {out}")
        check("listening on" not in out, f"serve listened with {text!r}: {out}")
        check("sk-1" not in out, f"the message quotes a key: {out}")
    rc, out, _ = start_expecting_failure(args, ["--api-key", "sk-x"], '{"tenants": [{"name": "a", "key": "sk-1"}]}')
    check(rc != 0 and "--api-key" in out, f"--api-key with --api-keys: {rc} {out}")


def main():
    args = parse_args()
    code = run_tests([test_malformed_key_files_stop_the_server], args)
    with tempfile.TemporaryDirectory(prefix="deepbatch_tenants_") as d:
        keys = os.path.join(d, "keys.json")
        with open(keys, "w") as f:
            json.dump({"tenants": TENANTS}, f)
        code |= run_tests_on_server(
            args, ["--api-keys", keys, "--data-dir", os.path.join(d, "data"), "--max-num-seqs", "8"],
            [test_unknown_key_is_401, test_priority_above_the_allowance_is_403,
             test_concurrency_quota_is_429_with_retry_after, test_tokens_per_minute_quota_is_429_with_retry_after,
             test_batch_queue_quota, test_files_and_batches_are_invisible_to_other_tenants])
    return code


if __name__ == "__main__":
    sys.exit(main())
