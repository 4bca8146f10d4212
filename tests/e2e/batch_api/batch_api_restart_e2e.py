"""A server killed with SIGKILL in the middle of a batch: restarted on the same
--data-dir, the batch resumes from its journal and completes, and every
custom_id is in the output exactly once (nothing finished was run again).
Then the same with a graceful stop (SIGTERM) in the middle of a second batch."""
import json
import os
import shutil
import signal
import sys

import batch_e2e_util as u

REQUESTS = 100


def main():
    args = u.parse_args()
    work = u.scratch_dir("batch_api_restart")
    data_dir = os.path.join(work, "data")
    proc = None
    try:
        proc, client = u.start(args, data_dir)
        lines = [u.request_line(f"r{i:03d}", u.chat_body(f"Name a color and a number near {i}.", 12))
                 for i in range(REQUESTS)]
        input_path = os.path.join(work, "requests.jsonl")
        u.write_lines(input_path, lines)
        with open(input_path, "rb") as f:
            file_id = client.files.create(file=f, purpose="batch").id
        batch = client.batches.create(input_file_id=file_id, endpoint="/v1/chat/completions", completion_window="24h")
        mid = u.wait_batch(client, batch.id, lambda b: b.request_counts and b.request_counts.completed >= 10
                           or b.status in u.TERMINAL, timeout=60, interval=0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc = None
        journal = os.path.join(data_dir, "batches", batch.id, "journal.jsonl")
        with open(journal, "rb") as f:
            done_before = f.read().count(b"\n")
        u.check(mid.status == "in_progress" and done_before < REQUESTS,
                f"the batch was not mid-way when the server was killed ({mid.status}, {done_before} records)")

        proc, client = u.start(args, data_dir)
        done = u.wait_batch(client, batch.id, lambda b: b.status in u.TERMINAL, timeout=75)
        u.check(done.status == "completed", f"after restart: {done}")
        u.check(done.request_counts.total == REQUESTS and done.request_counts.completed == REQUESTS,
                f"request_counts: {done.request_counts}")
        ids = [r["custom_id"] for r in u.records(client, done.output_file_id)]
        u.check(sorted(ids) == [f"r{i:03d}" for i in range(REQUESTS)],
                f"{len(ids)} output records, {len(set(ids))} distinct custom_ids")
        with open(journal) as f:
            journal_ids = [json.loads(line)["custom_id"] for line in f if line.strip()]
        u.check(len(journal_ids) == REQUESTS, f"journal holds {len(journal_ids)} records (duplicates?)")

        # A graceful stop mid-batch: the server exits cleanly and the batch stays resumable.
        with open(input_path, "rb") as f:
            file_id = client.files.create(file=f, purpose="batch").id
        second = client.batches.create(input_file_id=file_id, endpoint="/v1/chat/completions",
                                       completion_window="24h")
        u.wait_batch(client, second.id, lambda b: b.request_counts and b.request_counts.completed >= 10
                     or b.status in u.TERMINAL, timeout=60, interval=0.05)
        rc = u.server_fixture.stop_server(proc)
        proc = None
        u.check(rc == 0, f"deepbatch serve exited {rc} on SIGTERM")
        with open(os.path.join(data_dir, "batches", second.id, "batch.json")) as f:
            stored = json.load(f)
        u.check(stored["status"] == "in_progress", f"after SIGTERM the batch is {stored['status']}")
        stopped_at = stored["request_counts"]["completed"]
        u.check(0 < stopped_at < REQUESTS, f"SIGTERM did not land mid-batch ({stopped_at} done)")

        proc, client = u.start(args, data_dir)
        done = u.wait_batch(client, second.id, lambda b: b.status in u.TERMINAL, timeout=75)
        u.check(done.status == "completed" and done.request_counts.completed == REQUESTS, f"second batch: {done}")
        ids = [r["custom_id"] for r in u.records(client, done.output_file_id)]
        u.check(sorted(ids) == [f"r{i:03d}" for i in range(REQUESTS)], f"second batch: {len(set(ids))} distinct ids")
        print(f"ok: killed after {done_before} records, stopped after {stopped_at}; both resumed and completed "
              f"{REQUESTS} exactly once")
        u.server_fixture.stop_server(proc)
        proc = None
        return 0
    finally:
        if proc is not None:
            u.server_fixture.kill_server(proc)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
