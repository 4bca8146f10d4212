"""A list of prompts counts against --max-queued-requests as the sequences it adds
(prompts x n), and one request may not ask for more than --max-choices-per-request:
an 11-prompt request to a server that queues 10 gets 429 with Retry-After at once,
a request over the per-request cap gets 400 naming the flag, and one that fits is served."""
import json
import os
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
from e2e_main import check, parse_args, run_tests_on_server  # noqa: E402


def post(base, body):
    req = urllib.request.Request(base + "/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, dict(r.headers), json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), json.loads(e.read())


def test_a_prompt_list_counts_as_its_sequences(base):
    status, headers, body = post(base, {"prompt": [f"p{i}" for i in range(11)], "max_tokens": 1})
    check(status == 429, f"11 prompts against a queue of 10: {status} {body}")
    check(headers.get("Retry-After"), f"429 without Retry-After: {headers}")
    status, _, body = post(base, {"prompt": ["a", "b"], "n": 6, "max_tokens": 1})
    check(status == 429, f"2 prompts x n=6 against a queue of 10: {status} {body}")
    status, _, body = post(base, {"prompt": [f"p{i}" for i in range(5)], "n": 2, "max_tokens": 1, "temperature": 1})
    check(status == 200 and len(body["choices"]) == 10, f"10 choices: {status} {body}")


def test_too_many_choices_is_400(base):
    status, _, body = post(base, {"prompt": [f"p{i}" for i in range(13)], "max_tokens": 1})
    check(status == 400 and "--max-choices-per-request" in body["error"]["message"],
          f"13 prompts over a cap of 12: {status} {body}")
    check(body["error"]["code"] == "too_many_choices", f"error code: {body}")


def main():
    args = parse_args()
    return run_tests_on_server(args, ["--max-queued-requests", "10", "--max-choices-per-request", "12",
                                      "--no-batch-api"],
                               [test_a_prompt_list_counts_as_its_sequences, test_too_many_choices_is_400])


if __name__ == "__main__":
    sys.exit(main())
