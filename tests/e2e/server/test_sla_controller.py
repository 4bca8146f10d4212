"""The adaptive batch controller (serve --sla-tpot-p99) on the default model:

1. under a burst of long prompts with a TPOT target that whole-budget prefill steps
   miss, it shrinks the step token budget (logged on stderr, counted and shown in
   /metrics), and the budget stays within its range;
2. greedy outputs are the same token for token with the controller on and off:
   changing the batch shape must not change a request's output;
3. the roofline gauge reports the machine's bandwidth given by --memory-bandwidth
   and a positive decode read rate.
"""
import concurrent.futures
import json
import os
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
from e2e_main import check, metric_value, parse_args, run_tests  # noqa: E402
import server_fixture  # noqa: E402

ARGS = None
COMMON = ["--max-num-seqs", "16", "--max-num-batched-tokens", "1024", "--kv-cache-memory", "128M",
          "--no-batch-api", "--memory-bandwidth", "12.5", "-t", "2", "--served-model-name", "m"]
# Prompts of a few hundred tokens each: a step that prefills 1024 of them takes far longer
# than 15 ms on this model, a decode step of 16 sequences takes less.
PROMPTS = [f"Request {i}: " + " ".join(f"word{(i * 7 + k) % 97}" for k in range(120 + 15 * i)) for i in range(12)]


def complete(base, prompt):
    body = {"model": "m", "prompt": prompt, "max_tokens": 24, "temperature": 0, "ignore_eos": True}
    req = urllib.request.Request(base + "/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        return json.loads(r.read().decode())["choices"][0]["text"]


def burst(base):
    with concurrent.futures.ThreadPoolExecutor(len(PROMPTS)) as ex:
        return list(ex.map(lambda p: complete(base, p), PROMPTS))


def scrape(base):
    with urllib.request.urlopen(base + "/metrics", timeout=30) as r:
        return r.read().decode()


def run_server(extra, bursts):
    proc, base = server_fixture.start_server(ARGS.binary, ARGS.source_dir, COMMON + extra, merge_stderr=True)
    try:
        texts = []
        for _ in range(bursts):  # a second burst meets the settings the first one led to
            texts += burst(base)
        metrics = scrape(base)
    finally:
        rc = server_fixture.stop_server(proc)
    check(rc == 0, f"server exited with {rc}")
    return texts, metrics, proc.stdout_lines


def test_controller_shrinks_and_outputs_stay_identical():
    on_texts, metrics, log = run_server(["--sla-tpot-p99", "0.015", "--sla-window", "0.3"], bursts=2)
    shrinks = metric_value(metrics, "deepbatch:sla_decisions_total", {"action": "shrink"})
    budget = metric_value(metrics, "deepbatch:sla_step_token_budget")
    print(f"  shrinks {shrinks}, budget {budget}, running cap {metric_value(metrics, 'deepbatch:sla_running_cap')}")
    check(metric_value(metrics, "deepbatch:sla_controller_enabled") == 1, "controller on")
    check(shrinks and shrinks >= 1, f"no shrink decision:\n{metrics}")
    check(budget is not None and 32 <= budget < 1024, f"budget {budget} not lowered within its range")
    check(metric_value(metrics, "deepbatch:sla_target_seconds", {"metric": "tpot_p99"}) == 0.015, "target exported")
    logged = [line for line in log if line.startswith("sla controller: shrink")]
    check(logged, "shrink decisions are logged:\n" + "\n".join(log[-20:]))
    print("  " + logged[0])
    check(metric_value(metrics, "deepbatch:roofline_machine_read_bytes_per_second") == 12.5e9, "given bandwidth")
    rate = metric_value(metrics, "deepbatch:roofline_decode_read_bytes_per_second")
    check(rate and rate > 0, f"decode read rate {rate}")

    # Off, the settings never change, so one burst gives the texts both bursts with the
    # controller on must give.
    off_texts, off_metrics, _ = run_server([], bursts=1)
    check(metric_value(off_metrics, "deepbatch:sla_controller_enabled") == 0, "controller off by default")
    check(metric_value(off_metrics, "deepbatch:sla_step_token_budget") is None, "no settings exported while off")
    check(len(on_texts) == 2 * len(off_texts) == 2 * len(PROMPTS), f"{len(on_texts)} and {len(off_texts)} answers")
    for i, a in enumerate(on_texts):
        b = off_texts[i % len(PROMPTS)]
        check(a == b, f"request {i % len(PROMPTS)} differs with the controller on:\n{a!r}\nvs\n{b!r}")


if __name__ == "__main__":
    ARGS = parse_args()
    sys.exit(run_tests([test_controller_shrinks_and_outputs_stay_identical]))
