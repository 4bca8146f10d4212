"""A request's own deadline ("timeout" in the body, seconds): a long generation with a
tiny timeout is ended by the engine and answered 408 with OpenAI's error JSON (code
request_timeout); streamed, the 200 stream carries an error event and then [DONE]. A bad
timeout is 400 naming the field, and a generous one changes nothing."""
import json
import os
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
from e2e_main import check, parse_args, run_tests_on_server  # noqa: E402

# Far more tokens than the server can make in the timeout, and no stopping at EOS.
LONG = {"messages": [{"role": "user", "content": "Tell me a long story."}], "max_tokens": 2000,
        "ignore_eos": True, "temperature": 0}


def post(base, body, path="/v1/chat/completions"):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def test_tiny_timeout_is_408(base):
    started = time.monotonic()
    status, _, text = post(base, {**LONG, "timeout": 0.05})
    took = time.monotonic() - started
    check(status == 408, f"status {status}: {text}")
    err = json.loads(text)["error"]
    check(err["code"] == "request_timeout" and err["type"] == "timeout_error", f"error: {err}")
    check("0.05 s" in err["message"], f"the message names the deadline: {err}")
    check(took < 10, f"answered {took:.1f} s after a 0.05 s deadline")
    # The completions endpoint answers the same way.
    status, _, text = post(base, {"prompt": "Once upon a time", "max_tokens": 2000, "ignore_eos": True,
                                  "timeout": 0.05}, "/v1/completions")
    check(status == 408 and json.loads(text)["error"]["code"] == "request_timeout", f"{status}: {text}")


def test_streamed_timeout_ends_with_an_error_event(base):
    status, headers, text = post(base, {**LONG, "timeout": 0.05, "stream": True})
    check(status == 200 and headers.get("Content-Type", "").startswith("text/event-stream"), f"{status} {headers}")
    events = [line[len("data: "):] for line in text.split("\n") if line.startswith("data: ")]
    check(events and events[-1] == "[DONE]", f"the stream ends with [DONE]: {events[-3:]}")
    payloads = [json.loads(e) for e in events[:-1]]
    errors = [p["error"] for p in payloads if "error" in p]
    check(len(errors) == 1 and errors[0]["code"] == "request_timeout", f"one error event: {errors}")
    check("error" in payloads[-1], f"the error event comes last before [DONE]: {payloads[-1]}")


def test_bad_timeout_is_400(base):
    for bad in (0, -1, "5", 1e7, True):
        status, _, text = post(base, {**LONG, "max_tokens": 1, "timeout": bad})
        check(status == 400, f"timeout {bad!r}: {status} {text}")
        check(json.loads(text)["error"]["param"] == "timeout", f"timeout {bad!r}: {text}")


def test_generous_timeout_changes_nothing(base):
    status, _, text = post(base, {**LONG, "max_tokens": 4, "timeout": 60})
    body = json.loads(text)
    check(status == 200 and body["choices"][0]["finish_reason"] == "length", f"{status}: {text}")
    check(body["usage"]["completion_tokens"] == 4, f"usage: {body['usage']}")


def main():
    args = parse_args()
    return run_tests_on_server(args, ["--max-num-seqs", "8", "--kv-cache-memory", "128M", "--no-batch-api"],
                               [test_tiny_timeout_is_408, test_streamed_timeout_ends_with_an_error_event,
                                test_bad_timeout_is_400, test_generous_timeout_changes_nothing])


if __name__ == "__main__":
    sys.exit(main())
