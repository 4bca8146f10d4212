"""Tensor parallelism under real mpirun jobs (`deepbatch run --tensor-parallel-size T`):
the same batch of mixed completions requests (prompt lengths 1 to 60 words,
max_tokens 1 to 24) run by one process and by T ranks must give the same greedy
tokens on the default model (SmolLM2-135M, Q4_1, 3 KV heads: split 2 + 1 at two
ranks, 1 + 1 + 1 at three). The default join (gather) computes bitwise what one
process computes, so the log probabilities must match exactly too; the largest
difference is printed. Sizes the model or the job cannot take must fail fast with a
clear message. (The tiny llama fixtures have no tokenizer, so `run` cannot load them;
model_tensor_parallel_test splits them in one process.)"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from test_collective_faults import check, mpirun_env  # the same job environment and failure report

WORDS = ("the quick brown fox jumps over a lazy dog while seven tired engineers count "
         "primes under the old bridge near the river and write short notes about it").split()


def write_requests(path, n):
    """n completions requests: prompts of 1 to 60 words, max_tokens 1 to 24, greedy, two logprobs; every
    eighth asks for 3 choices, whose sequences fork from the prompt's (copy-on-write KV block copies,
    which rank 0 must forward to the other ranks)."""
    with open(path, "w") as f:
        for i in range(n):
            words = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(1 + (i * 13) % 60)]
            body = {"prompt": " ".join(words), "max_tokens": 1 + (i * 5) % 24, "temperature": 0, "logprobs": 2}
            if i % 8 == 3:
                body["n"] = 3
            f.write(json.dumps({"custom_id": f"r{i}", "method": "POST", "url": "/v1/completions", "body": body}))
            f.write("\n")


def read_outputs(path):
    """custom_id -> (tokens, token_logprobs, text) of each record, its choices' lists concatenated in
    choice order (the text is the first choice's)."""
    out = {}
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            check(rec.get("error") is None and rec["response"]["status_code"] == 200, f"failed record: {line}")
            choices = sorted(rec["response"]["body"]["choices"], key=lambda c: c["index"])
            tokens = [t for c in choices for t in c["logprobs"]["tokens"] + ["|"]]
            logprobs = [x for c in choices for x in c["logprobs"]["token_logprobs"]]
            out[rec["custom_id"]] = (tokens, logprobs, choices[0]["text"])
    return out


def end_job(proc, stopped=None):
    """Resumes the rank `stopped` (a pid, if any, which may have exited) and kills the job if it still runs."""
    if stopped is not None:
        try:
            os.kill(stopped, signal.SIGCONT)
        except ProcessLookupError:
            pass
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def rank_pid(mpirun_pid, rank=0):
    """The pid of `rank` among mpirun's child processes (its environment says OMPI_COMM_WORLD_RANK=rank)."""
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid != mpirun_pid:
                continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                if f"OMPI_COMM_WORLD_RANK={rank}\0".encode() in f.read():
                    return int(pid)
        except (OSError, ValueError, IndexError):
            continue
    raise AssertionError(f"no rank {rank} among the children of mpirun {mpirun_pid}")


def start_serve(args, model, np, timeout_s=None):
    cmd = [args.mpirun, "-np", str(np), "--oversubscribe", "--bind-to", "none", args.deepbatch, "serve", "-m", model,
           "--host", "127.0.0.1", "--port", "0", "--no-batch-api", "-t", "1", "--kv-cache-memory", str(64 << 20),
           "--memory-bandwidth", "10", "--tensor-parallel-size", str(np), "--collective-timeout",
           str(timeout_s or IDLE_TIMEOUT_S)]
    return subprocess.Popen(cmd, env=mpirun_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_listening(proc):
    """(url, output lines so far) once serve says where it listens."""
    url, seen = None, []
    deadline = time.monotonic() + 60
    while url is None and time.monotonic() < deadline:
        line = proc.stdout.readline()
        check(line != "", "serve exited before listening:\n" + "".join(seen))
        seen.append(line)
        m = re.search(r"listening on (http://\S+)", line)
        url = m.group(1) if m else None
    check(url is not None, "serve did not listen within 60 s:\n" + "".join(seen))
    return url, seen


def http_status(url, body=None):
    """(status, parsed JSON body) of a GET (body None) or a JSON POST."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


LOST_RANK_TIMEOUT_S = 2  # --collective-timeout of the lost-rank run
DRAIN_S = 5              # serve answers 503 this long after losing a rank (cmd_serve.cpp), then ends


def serve_reports_a_lost_rank(args, model):
    """serve at 2 ranks with rank 1 stopped (SIGSTOP): a completion is answered 503 naming the lost rank within the
    collective timeout (and its grace), /health fails with the same reason, and the job then ends non-zero."""
    proc = start_serve(args, model, 2, LOST_RANK_TIMEOUT_S)
    victim = None
    try:
        url, seen = wait_listening(proc)
        victim = rank_pid(proc.pid, 1)
        os.kill(victim, signal.SIGSTOP)
        stopped = time.monotonic()
        status, body = http_status(url + "/v1/completions", {"prompt": "hello", "max_tokens": 4, "temperature": 0})
        answered = time.monotonic() - stopped
        check(status == 503 and body["error"]["code"] == "model_unavailable",
              f"a completion with rank 1 stopped got {status} {body}")
        status, health = http_status(url + "/health")
        check(status == 503 and health["error"]["code"] == "model_unavailable", f"/health got {status} {health}")
        rest, _ = proc.communicate(timeout=DRAIN_S + 30)
        ended = time.monotonic() - stopped
        check(proc.returncode != 0, f"serve ended with {proc.returncode} after losing a rank:\n{''.join(seen)}{rest}")
        check(answered < LOST_RANK_TIMEOUT_S + 5, f"the 503 took {answered:.1f} s")
        print(f"serve at 2 ranks, rank 1 stopped: 503 after {answered:.2f} s ({body['error']['message'][:90]}...); "
              f"/health 503; job ended {ended:.1f} s after the stop, exit {proc.returncode}")
    finally:
        end_job(proc, victim)


def serve_matches_run(args, model, np, workdir, n_requests=8):
    """`serve` at np ranks, left idle for more than twice the collective timeout (rank 0's heartbeat must keep
    the workers waiting), answers /v1/completions with the text of the single-process run, then stops cleanly
    on SIGTERM (rank 0 sends Stop; the workers leave their loop)."""
    proc = start_serve(args, model, np)
    try:
        url, seen = wait_listening(proc)
        time.sleep(2.5 * IDLE_TIMEOUT_S)
        if proc.poll() is not None:
            check(False, f"serve at {np} ranks ended while idle:\n" + "".join(seen) + proc.stdout.read())
        want = read_outputs(BASELINES[model][0])
        with open(os.path.join(workdir, "in.jsonl")) as f:
            requests = [json.loads(line) for line in f][:n_requests]
        for r in requests:
            body = dict(r["body"])
            body.pop("logprobs")
            status, answer = http_status(url + "/v1/completions", body)
            check(status == 200, f"serve at {np} ranks answered {status}: {answer}")
            text = answer["choices"][0]["text"]
            check(text == want[r["custom_id"]][2], f"serve at {np} ranks, {r['custom_id']}: {text!r} != "
                  f"{want[r['custom_id']][2]!r}")
        os.kill(rank_pid(proc.pid), signal.SIGTERM)  # as a service manager would stop rank 0
        rest, _ = proc.communicate(timeout=60)
        check(proc.returncode == 0, f"serve at {np} ranks exited {proc.returncode} on SIGTERM:\n{''.join(seen)}{rest}")
        print(f"serve at {np} ranks: {n_requests} completions identical to the single-process run; stopped cleanly")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def job_command(args, model, np, tp, workdir, out, extra=()):
    cmd = [args.deepbatch, "run", "-m", model, "-i", os.path.join(workdir, "in.jsonl"), "-o", out, "-t", "1",
           "--kv-cache-memory", str(64 << 20), "--no-progress", *extra]
    if np > 1:
        cmd = [args.mpirun, "-np", str(np), "--oversubscribe", "--bind-to", "none", *getattr(args, "mpirun_extra", ()),
               *cmd, "--tensor-parallel-size", str(tp), "--collective-timeout", "60"]
    return cmd


def run_job(args, model, np, tp, workdir, name, extra=()):
    out = os.path.join(workdir, name + ".jsonl")
    start = time.monotonic()
    proc = subprocess.run(job_command(args, model, np, tp, workdir, out, extra), env=mpirun_env(), capture_output=True,
                          text=True, timeout=240)
    return proc, out, time.monotonic() - start


def journaled_ids(path):
    """The custom_id of every complete line of a results file, in order (repeats kept)."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line)["custom_id"] for line in f if line.endswith("\n")]


def run_resumes_after_a_lost_rank(args, model, workdir):
    """`run` at 2 ranks, rank 1 killed (SIGKILL) once some records are journaled: the job ends non-zero; the same
    command run again writes only the missing records, and the file then holds every request once, each with the
    single-process tokens."""
    out = os.path.join(workdir, "resumed.jsonl")
    cmd = job_command(args, model, 2, 2, workdir, out)
    proc = subprocess.Popen(cmd, env=mpirun_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while len(journaled_ids(out)) < 4 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    check(proc.poll() is None, "the job ended before a rank could be killed")
    os.kill(rank_pid(proc.pid, 1), signal.SIGKILL)
    _, err = proc.communicate(timeout=60)
    before = journaled_ids(out)
    check(proc.returncode != 0, f"the job with a killed rank exited {proc.returncode}")
    check(len(before) < args.requests, "every record was written before the kill: nothing to resume")
    again = subprocess.run(cmd, env=mpirun_env(), capture_output=True, text=True, timeout=240)
    check(again.returncode == 0, "the rerun failed", again)
    ids = journaled_ids(out)
    check(len(ids) == args.requests and len(set(ids)) == args.requests,
          f"after the rerun the file holds {len(ids)} records, {len(set(ids))} distinct, of {args.requests}")
    want, got = read_outputs(BASELINES[model][0]), read_outputs(out)
    for cid in want:
        check(want[cid][0] == got[cid][0], f"{cid}: tokens differ after the resume")
    print(f"run at 2 ranks, rank 1 killed after {len(before)} records: exit {proc.returncode}; the rerun wrote the "
          f"other {args.requests - len(before)}, each request once, tokens identical to one process")


IDLE_TIMEOUT_S = 3  # serve's --collective-timeout: its heartbeat every 1 s keeps idle workers waiting
BASELINES = {}  # model -> (output file, seconds) of its single-process run


def compare(args, model, label, np, workdir, exact=True):
    """The model's batch through one process (run once per model) and through np ranks: identical tokens.
    Returns the tokens compared."""
    if model not in BASELINES:
        one, one_out, t1 = run_job(args, model, 1, 1, workdir, label + "-one")
        check(one.returncode == 0, f"{label}: the single-process run failed", one)
        BASELINES[model] = (one_out, t1)
    one_out, t1 = BASELINES[model]
    tp, tp_out, t2 = run_job(args, model, np, np, workdir, f"{label}-tp{np}")
    check(tp.returncode == 0, f"{label}: the run at --tensor-parallel-size {np} failed", tp)
    check(f"tensor parallel: {np} ranks" in tp.stderr, f"{label}: rank 0 did not report the split", tp)
    a, b = read_outputs(one_out), read_outputs(tp_out)
    check(sorted(a) == sorted(b) and len(a) == args.requests, f"{label}: the runs answered different requests")
    worst, tokens = 0.0, 0
    for cid in a:
        check(a[cid][0] == b[cid][0], f"{label}: {cid}: tokens differ:\n one process: {a[cid][0]}\n"
              f" {np} ranks:    {b[cid][0]}")
        tokens += len(a[cid][1])
        worst = max([worst] + [abs(x - y) for x, y in zip(a[cid][1], b[cid][1])])
    check(not exact or worst == 0.0, f"{label}: log probabilities differ by up to {worst} at {np} ranks")
    print(f"{label}: {args.requests} requests, {tokens} tokens identical at {np} ranks; largest log-probability "
          f"difference {worst:.3g}; {t1:.1f} s one process, {t2:.1f} s {np} ranks")
    return tokens


def default_kv_share_is_split(args, model, workdir):
    """Without --kv-cache-memory a process takes a share of the available memory for its KV pool; ranks on one
    machine draw on the same memory, so each takes its part of that share. On the default model (3 KV heads) the
    agreed pool of 2 ranks is the 2-head rank's: 3/2 x 1/2 of one process's blocks. Were each rank to take the whole
    share, it would be 3/2 of them: the check sits between."""
    base = [args.deepbatch, "run", "-m", model, "-i", os.path.join(workdir, "in.jsonl"), "-t", "1"]  # logs the pool
    one = subprocess.run([*base, "-o", os.path.join(workdir, "share-one.jsonl")], env=mpirun_env(),
                         capture_output=True, text=True, timeout=240)
    check(one.returncode == 0, "the single-process run with the default KV share failed", one)
    tp = subprocess.run([args.mpirun, "-np", "2", "--oversubscribe", "--bind-to", "none",
                         *getattr(args, "mpirun_extra", ()), *base, "-o", os.path.join(workdir, "share-tp.jsonl"),
                         "--tensor-parallel-size", "2", "--collective-timeout", "60"],
                        env=mpirun_env(), capture_output=True, text=True, timeout=240)
    check(tp.returncode == 0, "the 2-rank run with the default KV share failed", tp)
    one_blocks = re.search(r"KV cache: .*; (\d+) blocks of", one.stderr)
    tp_blocks = re.search(r"KV pool of (\d+) blocks on every rank", tp.stderr)
    check(one_blocks and tp_blocks, "the KV pool sizes are not on stderr", tp)
    ratio = int(tp_blocks.group(1)) / int(one_blocks.group(1))
    print(f"default KV share: one process {one_blocks.group(1)} blocks, 2 ranks {tp_blocks.group(1)} on every rank "
          f"({ratio:.2f}x; 0.75x expected, 1.5x if each rank took the whole share)")
    check(ratio < 1.0, f"2 ranks on one machine took {ratio:.2f}x one process's KV blocks from the default share")


def expect_refused(args, model, np, tp, needle, workdir, label):
    proc, _, took = run_job(args, model, np, tp, workdir, "refused")
    check(proc.returncode != 0 and needle in proc.stderr, f"{label}: expected a failure saying '{needle}'", proc)
    print(f"{label}: refused in {took:.1f} s: {needle}")


def arg_parser():
    """The options of the tensor-parallel tests (this file and test_tensor_parallel_netns.py)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--deepbatch", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--requests", type=int, default=64)
    return ap


def main():
    ap = arg_parser()
    ap.add_argument("--default-model-ranks", default="2,3", help="comma-separated rank counts for the default model")
    args = ap.parse_args()
    default_model = os.path.join(args.source_dir, "models/SmolLM2-135M-Instruct.Q4_1.gguf")
    qwen_tiny = os.path.join(args.source_dir, "tests/data/model/qwen2_tiny/model-f32.gguf")
    check(os.path.exists(default_model), f"{default_model} is missing: run scripts/setup.sh")
    with tempfile.TemporaryDirectory() as workdir:
        write_requests(os.path.join(workdir, "in.jsonl"), args.requests)
        for np in (int(x) for x in args.default_model_ranks.split(",")):
            compare(args, default_model, "SmolLM2-135M Q4_1", np, workdir)
        serve_matches_run(args, default_model, 2, workdir)
        serve_reports_a_lost_rank(args, default_model)
        run_resumes_after_a_lost_rank(args, default_model, workdir)
        default_kv_share_is_split(args, default_model, workdir)
        expect_refused(args, qwen_tiny, 2, 2, "--tensor-parallel-size 2 is above the model's 1 KV heads", workdir,
                       "qwen2_tiny (1 KV head) at 2 ranks")
        expect_refused(args, default_model, 2, 3, "--tensor-parallel-size 3 x --expert-parallel-size 1 = 3 ranks, "
                       "but the job has 2 processes", workdir, "--tensor-parallel-size 3 on 2 ranks")
    print("tensor parallel: all checks passed")


if __name__ == "__main__":
    sys.exit(main())
