"""A worker lost while `serve` is idle (no request running), under real mpirun jobs at two
tensor-parallel ranks on the default model: rank 0's heartbeat is answered by every rank
(dist::heartbeat_round), so a worker stopped (SIGSTOP) or killed (SIGKILL, with mpirun told
to leave the others running, as when the loss goes unnoticed) fails /health with 503
model_unavailable naming the rank and the collective within the collective timeout plus a
heartbeat period (timeout / 3) and a margin; a new completion is answered 503 too, and the
job then ends non-zero. The time from the loss to the failed /health is printed."""
import os
import signal
import sys
import time

from test_collective_faults import check
from test_tensor_parallel import arg_parser, end_job, http_status, rank_pid, start_serve, wait_listening

TIMEOUT_S = 2.0          # --collective-timeout: the heartbeat comes every TIMEOUT_S / 3
DRAIN_S = 5              # serve answers 503 this long after losing a rank (cmd_serve.cpp), then ends
MARGIN_S = 2.0           # survey, announcement and polling
KEEP_RUNNING = "OMPI_MCA_orte_abort_on_non_zero_status"  # 0: mpirun leaves the others running after a loss


def health_fails_after_idle_loss(args, model, sig, label):
    proc = start_serve(args, model, 2, TIMEOUT_S)
    victim = None
    try:
        url, seen = wait_listening(proc)
        time.sleep(TIMEOUT_S)  # a few heartbeats answered while healthy
        status, health = http_status(url + "/health")
        check(status == 200, f"{label}: /health of the healthy job got {status} {health}")
        victim = rank_pid(proc.pid, 1)
        os.kill(victim, sig)
        lost = time.monotonic()
        bound = TIMEOUT_S + TIMEOUT_S / 3 + MARGIN_S
        while True:
            status, health = http_status(url + "/health")
            took = time.monotonic() - lost
            if status != 200 or took > bound + 5:
                break
            time.sleep(0.05)
        check(status == 503 and health["error"]["code"] == "model_unavailable",
              f"{label}: /health {took:.1f} s after the loss got {status} {health}")
        message = health["error"]["message"]
        check("while idle" in message and "all_gather" in message and "rank 1 did not arrive" in message,
              f"{label}: /health does not name the idle loss, the collective and rank 1: {message}")
        check(TIMEOUT_S * 0.8 <= took < bound, f"{label}: /health failed {took:.2f} s after the loss "
              f"(collective timeout {TIMEOUT_S} s, bound {bound:.1f} s)")
        status, body = http_status(url + "/v1/completions", {"prompt": "hello", "max_tokens": 4, "temperature": 0})
        check(status == 503 and body["error"]["code"] == "model_unavailable",
              f"{label}: a completion after the loss got {status} {body}")
        rest, _ = proc.communicate(timeout=DRAIN_S + 30)
        ended = time.monotonic() - lost
        check(proc.returncode != 0, f"{label}: serve ended with {proc.returncode}:\n{''.join(seen)}{rest}")
        print(f"{label}: /health 503 {took:.2f} s after the loss (timeout {TIMEOUT_S} s, bound {bound:.1f} s): "
              f"{message[:110]}...; completion 503; job ended {ended:.1f} s after the loss, exit {proc.returncode}")
    finally:
        end_job(proc, victim if sig == signal.SIGSTOP else None)


def main():
    args = arg_parser().parse_args()
    model = os.path.join(args.source_dir, "models/SmolLM2-135M-Instruct.Q4_1.gguf")
    check(os.path.exists(model), f"{model} is missing: run scripts/setup.sh")
    health_fails_after_idle_loss(args, model, signal.SIGSTOP, "idle serve, rank 1 stopped")
    os.environ[KEEP_RUNNING] = "0"  # read by mpirun through the environment start_serve passes on
    health_fails_after_idle_loss(args, model, signal.SIGKILL, "idle serve, rank 1 killed")
    print("idle rank loss: all checks passed")


if __name__ == "__main__":
    sys.exit(main())
