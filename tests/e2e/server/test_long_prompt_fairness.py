"""A long prompt does not hold up short requests, however deep its prefill is: while an
8,000-token prompt prefills, a client sends short completions one after another, and
each one finishes within a bound set by the machine's own plain steps, measured on the
same server just before and just after (the mean of the two, each the least of three
runs, so that a machine busy with other work moves the bounds with it):

  decode step:  the median gap between the tokens of a short request running alone;
  full step:    the first-token time of a threshold-sized prompt running alone (one
                step: a 512-token chunk at position 0, the longest step the scheduler
                plans by its caps).

A chunk deep in the prompt, whose tokens attend to thousands of cached positions,
costs no more than one at position 0 (the scheduler prices chunks by cost,
sched/prefill_cost.h), so the bounds hold at every depth:

  - every short request sent during the prefill finishes within SHORT_BOUND_FULL_STEPS
    full steps plus a decode step per token: it waits for at most one full step in
    flight, then runs its 5 steps beside capped chunks (2.5-5.8 full steps measured,
    the most on a machine busy with other work, 7.1 once at load ~9 beside a build;
    by tokens alone, short requests deep in the prefill took 12-37 full steps:
    tests/README.md);
  - the long prompt is not starved: its prefill ends within LONG_BOUND_FULL_STEPS full
    steps although it now shares its steps with many more short requests (70-260
    measured, by tokens alone 70-175; the paired before/after times are in
    tests/README.md, as a single run on a shared machine cannot tell 1.2x apart);
  - a short request's greedy text is the same as when it runs alone.

Neither bound is as tight as the issue's targets (worst short under 1 s, about 6 full
steps of a quiet machine; the prefill within 1.2x of the tokens-priced one, about 180
full steps): on a busy 2-core machine the full steps measured before and after the
prefill understate the steps during it, so one run at load ~9 beside a build took 7.1
full steps for its worst short request and 590 full steps for the prefill (over this
bound). The paired runs in tests/README.md judge the targets; this test guards against
starvation and a return to pricing by tokens."""
import http.client
import json
import os
import random
import statistics
import sys
import threading
import time
import urllib.request
from urllib.parse import urlparse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
from e2e_main import check, metric_value, parse_args, run_tests_on_server  # noqa: E402

LONG_TOKENS = 8000
THRESHOLD = 512       # --long-prefill-threshold: the long prompt's chunk cap when it runs alone
SHORT_TOKENS = 16
SHORT_MAX_TOKENS = 4
SHORT_BOUND_FULL_STEPS = 8     # one full step in flight, its own 5 steps beside shared chunks, a busy machine
LONG_BOUND_FULL_STEPS = 300    # no starvation: the short requests stop coming past it


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


def short_body(seed, max_tokens=SHORT_MAX_TOKENS):
    return {"prompt": token_ids(seed, SHORT_TOKENS), "max_tokens": max_tokens, "temperature": 0, "ignore_eos": True}


def plain_steps(base):
    """(decode step, full step) in seconds, each the least of a few runs (the machine may be shared)."""
    decode_steps, full_steps = [], []
    for k in range(3):
        alone = {}
        stream(base, short_body(900 + k, max_tokens=24), alone)
        decode_steps.append(statistics.median(b - a for a, b in zip(alone["times"], alone["times"][1:])))
        first = {}
        stream(base, {"prompt": token_ids(800 + k, THRESHOLD), "max_tokens": 1, "temperature": 0}, first)
        full_steps.append(first["times"][0])
    return min(decode_steps), min(full_steps)


def test_short_requests_are_not_held_up_by_a_long_prompt(base):
    steps_before = plain_steps(base)
    long_out = {}
    long_thread = threading.Thread(target=stream, args=(base, {"prompt": token_ids(1, LONG_TOKENS), "max_tokens": 2,
                                                                "temperature": 0, "ignore_eos": True}, long_out))
    long_thread.start()
    wait_running(base)  # its first chunk is done: it is prefilling
    shorts = []
    stop_at = long_out["sent"] + LONG_BOUND_FULL_STEPS * steps_before[1]
    while long_thread.is_alive() and not long_out.get("times") and time.monotonic() < stop_at:
        out = {"seed": 1000 + len(shorts)}
        stream(base, short_body(out["seed"]), out)
        shorts.append(out)
    long_thread.join(300)
    check(len(long_out.get("times", [])) >= 1, f"the long prompt produced nothing: {long_out}")
    prefill_s = long_out["times"][0]
    steps_after = plain_steps(base)
    decode_s, full_s = ((a + b) / 2 for a, b in zip(steps_before, steps_after))
    during = [o for o in shorts if o["sent"] < long_out["sent"] + prefill_s]
    check(len(during) >= 4, f"only {len(during)} short requests ran during the prefill")
    worst = max(during, key=lambda o: o["times"][-1])
    worst_s = worst["times"][-1]
    short_bound_s = SHORT_BOUND_FULL_STEPS * full_s + SHORT_MAX_TOKENS * decode_s
    long_bound_s = LONG_BOUND_FULL_STEPS * full_s
    print(f"plain steps: decode {decode_s * 1000:.1f} ms, full ({THRESHOLD} tokens at 0) {full_s * 1000:.0f} ms; "
          f"long prompt: prefill {prefill_s:.2f} s = {prefill_s / full_s:.1f} full steps (bound "
          f"{LONG_BOUND_FULL_STEPS}); {len(during)} short requests during it: median "
          f"{statistics.median(o['times'][-1] for o in during):.3f} s, worst {worst_s:.3f} s = "
          f"{worst_s / full_s:.2f} full steps, sent {worst['sent'] - long_out['sent']:.1f} s in "
          f"(bound {short_bound_s:.3f} s)", flush=True)
    check(worst_s < short_bound_s,
          f"a short request took {worst_s:.3f} s beside the prefill, over {short_bound_s:.3f} s "
          f"({SHORT_BOUND_FULL_STEPS} full steps of {full_s:.3f} s + {SHORT_MAX_TOKENS} decode steps)")
    check(prefill_s < long_bound_s,
          f"the long prompt's prefill took {prefill_s:.2f} s, over {LONG_BOUND_FULL_STEPS} full steps "
          f"({long_bound_s:.2f} s)")

    for o in (during[0], worst, during[-1]):
        alone = {}
        stream(base, short_body(o["seed"]), alone)
        check(alone["text"] == o["text"],
              f"greedy text differs beside the long prompt: {o['text']!r} vs alone {alone['text']!r}")


# Run time (one of the suite's slowest, tests/README.md): the 8,000-token prefill is the
# obstacle the short requests must get past, so the test lasts as long as that prefill
# (about a minute on 2 cores, more on a busy machine); a shorter prompt would leave too
# few short requests deep in the prefill, where pricing by tokens alone failed.
def main():
    return run_tests_on_server(parse_args(), ["-t", "2", "--max-num-seqs", "8", "--kv-cache-memory", "512M",
                                              "--max-num-batched-tokens", "2048",
                                              "--long-prefill-threshold", str(THRESHOLD)],
                               [test_short_requests_are_not_held_up_by_a_long_prompt])


if __name__ == "__main__":
    sys.exit(main())
