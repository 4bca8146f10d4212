"""Collectives across real mpirun jobs (dist_probe): a healthy run of each collective,
then the faults a job must turn into a clear error instead of a hang: a rank stopped
with SIGSTOP, a rank that exits and a rank slower than the timeout, each in the middle
of a run (and a rank slower than usual but within the timeout, which must be waited for). For each fault the
test measures the time from the fault to the live ranks' error and checks that every
live rank named the collective and the missing rank."""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

TIMEOUT_S = 1.0  # --timeout of the faulty runs: the error must come within it and the grace after
GRACE_S = 0.5  # the survey's wait for answers at that timeout (mpi_communicator.cpp: grace_seconds)


def mpirun_env():
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


def run_probe(args, np, probe_args, mpirun_args=()):
    cmd = [args.mpirun, "-np", str(np), "--oversubscribe", "--bind-to", "none", *mpirun_args,
           args.probe, *probe_args]
    start = time.monotonic()
    proc = subprocess.run(cmd, env=mpirun_env(), capture_output=True, text=True, timeout=60)
    return proc, time.monotonic() - start


def check(cond, message, proc=None):
    if not cond:
        if proc is not None:
            message += f"\n--- exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
        raise AssertionError(message)


def stamp(text, pattern):
    """The t= of the line matching pattern (a float), or None."""
    m = re.search(pattern + r".* t=([0-9.]+)", text)
    return float(m.group(1)) if m else None


def gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with open(f"/proc/{pid}/status") as f:  # a zombie no one reaped yet is gone too
        return "State:\tZ" in f.read()


def test_healthy_runs_check_every_result(args):
    for np in (2, 4):
        for op in ("all_reduce_sum", "all_gather", "all_to_all_v", "broadcast"):
            proc, _ = run_probe(args, np, ["--op", op, "--calls", "100", "--elements", "1000"])
            check(proc.returncode == 0, f"{op} on {np} ranks failed", proc)
            line = re.search(r"probe: rank 0: .* us per call", proc.stdout)
            check(line is not None, f"{op} on {np} ranks printed no timing", proc)
            print(f"  {np} ranks: {line.group(0)[len('probe: rank 0: '):]}")


def expect_fault_report(args, np, op, fault, victim, mpirun_args=(), probe_args=()):
    """Runs a job whose rank `victim` misbehaves (`fault`) before call 5; checks each live rank's
    report and returns (seconds from the fault to the last live rank's error, the run's wall time)."""
    proc, wall = run_probe(args, np, ["--op", op, "--calls", "1000", "--timeout", str(TIMEOUT_S),
                                      "--fault", fault, "--victim", str(victim), "--at-call", "5", *probe_args],
                           mpirun_args)
    out = proc.stdout + proc.stderr
    check(proc.returncode != 0, "the job exited 0 although a rank failed", proc)
    m = re.search(r"probe: rank \d+ pid (\d+) \w+ before call 5 t=([0-9.]+)", out)
    check(m is not None, "the victim did not report its fault", proc)
    victim_pid, fault_t = int(m.group(1)), float(m.group(2))
    deadline = time.monotonic() + 10
    while not gone(victim_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if not gone(victim_pid):
        os.kill(victim_pid, signal.SIGKILL)
        raise AssertionError(f"the victim (pid {victim_pid}) outlived the job")
    caught = []
    for r in range(np):
        if r == victim:
            continue
        # Either the rank that timed out, or one told by it: both name call #5 and the victim.
        report = re.search(rf"^deepbatch: error: {op} #5 \([^)]*\) (timed out after [0-9.]+ s \(--collective-timeout\) "
                           rf"on rank {r} of {np}|given up on rank {r} of {np}).*rank {victim} did not arrive", out,
                           re.M)
        check(report is not None, f"rank {r} did not report {op} #5 and rank {victim}", proc)
        # The report is written before any rank ends the job; the probe's line after it may be cut
        # short by the first rank's abort.
        t = stamp(out, rf"probe: rank {r} caught the collective error")
        if t is not None:
            caught.append(t - fault_t)
    check(caught, "no live rank got as far as catching the error", proc)
    latest = max(caught)
    # Each live rank waits TIMEOUT_S from its own entry (just after the fault), then the survey
    # and the announcement take a grace each at most.
    check(latest < TIMEOUT_S + 2 * GRACE_S + 1.0, f"the error came {latest:.2f} s after the fault", proc)
    check(latest >= TIMEOUT_S * 0.9, f"the error came before the timeout ({latest:.2f} s)", proc)
    return latest, wall


def test_a_stopped_rank_is_named_by_every_live_rank(args):
    for np, op, victim in ((4, "all_reduce_sum", 2), (2, "all_to_all_v", 0), (2, "broadcast", 1)):
        latest, wall = expect_fault_report(args, np, op, "stop", victim)
        print(f"  {np} ranks, {op}, rank {victim} stopped: error {latest:.2f} s after the fault "
              f"(timeout {TIMEOUT_S} s), job ended after {wall:.2f} s")


def test_an_exited_rank_is_named_by_every_live_rank(args):
    # mpirun ends a job at once when a rank exits non-zero (below); told not to, it leaves the live
    # ranks running, as when a rank's exit goes unnoticed, and the timeout must name the rank.
    latest, wall = expect_fault_report(args, 4, "all_gather", "exit", 3,
                                       ["--mca", "orte_abort_on_non_zero_status", "0"])
    print(f"  4 ranks, all_gather, rank 3 exited (mpirun left the others running): error {latest:.2f} s "
          f"after the fault, job ended after {wall:.2f} s")


def test_a_rank_slower_than_the_timeout_is_named(args):
    latest, wall = expect_fault_report(args, 4, "all_reduce_sum", "sleep", 1,
                                       probe_args=["--sleep", str(TIMEOUT_S + 1.5)])
    print(f"  4 ranks, all_reduce_sum, rank 1 asleep for {TIMEOUT_S + 1.5} s: error {latest:.2f} s after "
          f"it fell asleep, job ended after {wall:.2f} s")


def test_a_rank_slower_than_usual_within_the_timeout_is_waited_for(args):
    proc, wall = run_probe(args, 4, ["--op", "all_reduce_sum", "--calls", "20", "--timeout", str(TIMEOUT_S),
                                     "--fault", "sleep", "--sleep", str(TIMEOUT_S / 2), "--victim", "2",
                                     "--at-call", "5"])
    check(proc.returncode == 0, f"a rank {TIMEOUT_S / 2} s late failed the job (timeout {TIMEOUT_S} s)", proc)
    check("deepbatch: error" not in proc.stderr, "a rank within the timeout was reported", proc)


def test_mpirun_ends_the_job_when_a_rank_exits(args):
    proc, wall = run_probe(args, 2, ["--op", "all_reduce_sum", "--calls", "1000", "--timeout", "300",
                                     "--fault", "exit", "--victim", "1", "--at-call", "5"])
    check(proc.returncode != 0, "the job exited 0 although a rank exited", proc)
    check(wall < 30, f"the job took {wall:.1f} s to end with a collective timeout of 300 s", proc)
    # Open MPI names the rank as [[job,1],rank] with its exit code.
    check(re.search(r"Process name: +\[\[\d+,\d+\],1\]\s+Exit code: +3", proc.stdout + proc.stderr) is not None,
          "mpirun did not name rank 1 and its exit code", proc)
    print(f"  2 ranks, rank 1 exited (mpirun's default): job ended after {wall:.2f} s")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--probe", required=True, help="the dist_probe executable")
    p.add_argument("--mpirun", required=True, help="Open MPI's mpirun")
    args = p.parse_args()
    if shutil.which(args.mpirun) is None:
        print(f"SKIPPED: mpirun not found ({args.mpirun}): install openmpi-bin")
        return 77
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
    import e2e_main
    return e2e_main.run_tests([test_healthy_runs_check_every_result,
                               test_a_stopped_rank_is_named_by_every_live_rank,
                               test_an_exited_rank_is_named_by_every_live_rank,
                               test_a_rank_slower_than_the_timeout_is_named,
                               test_a_rank_slower_than_usual_within_the_timeout_is_waited_for,
                               test_mpirun_ends_the_job_when_a_rank_exits], args)


if __name__ == "__main__":
    sys.exit(main())
