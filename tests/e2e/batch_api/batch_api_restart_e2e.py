"""A server killed with SIGKILL in the middle of a batch: restarted on the same
--data-dir, the batch resumes from its journal and completes, and every
custom_id is in the output exactly once (nothing finished was run again).
Then the same with a graceful stop (SIGTERM) in the middle of a second batch."""
import json
import os
import sys

import batch_e2e_util as u

REQUESTS = 100
IDS = [f"r{i:03d}" for i in range(REQUESTS)]


# Run time (one of the suite's slowest, tests/README.md): two batches of 100 requests run
# to completion, each across a stop and a restart of the server.
def main():
    with u.Session("batch_api_restart") as s:
        client = s.start()
        lines = [u.request_line(custom_id, u.chat_body(f"Name a color and a number near {i}.", 12))
                 for i, custom_id in enumerate(IDS)]
        input_path = s.write_requests(lines)
        batch = u.create_batch(client, u.upload(client, input_path).id)
        mid = u.wait_midway(client, batch.id, 10, timeout=60)
        s.kill()
        journal = os.path.join(s.data_dir, "batches", batch.id, "journal.jsonl")
        with open(journal, "rb") as f:
            done_before = f.read().count(b"\n")
        u.check(mid.status == "in_progress" and done_before < REQUESTS,
                f"the batch was not mid-way when the server was killed ({mid.status}, {done_before} records)")

        client = s.start()
        done = u.wait_final(client, batch.id, timeout=75)
        u.check(done.status == "completed", f"after restart: {done}")
        u.check(done.request_counts.total == REQUESTS and done.request_counts.completed == REQUESTS,
                f"request_counts: {done.request_counts}")
        ids = u.custom_ids(client, done.output_file_id)
        u.check(sorted(ids) == IDS, f"{len(ids)} output records, {len(set(ids))} distinct custom_ids")
        with open(journal) as f:
            journal_ids = [json.loads(line)["custom_id"] for line in f if line.strip()]
        u.check(len(journal_ids) == REQUESTS, f"journal holds {len(journal_ids)} records (duplicates?)")

        # A graceful stop mid-batch: the server exits cleanly and the batch stays resumable.
        second = u.create_batch(client, u.upload(client, input_path).id)
        u.wait_midway(client, second.id, 10, timeout=60)
        rc = s.stop()
        u.check(rc == 0, f"deepbatch serve exited {rc} on SIGTERM")
        with open(os.path.join(s.data_dir, "batches", second.id, "batch.json")) as f:
            stored = json.load(f)
        u.check(stored["status"] == "in_progress", f"after SIGTERM the batch is {stored['status']}")
        stopped_at = stored["request_counts"]["completed"]
        u.check(0 < stopped_at < REQUESTS, f"SIGTERM did not land mid-batch ({stopped_at} done)")

        client = s.start()
        done = u.wait_final(client, second.id, timeout=75)
        u.check(done.status == "completed" and done.request_counts.completed == REQUESTS, f"second batch: {done}")
        ids = u.custom_ids(client, done.output_file_id)
        u.check(sorted(ids) == IDS, f"second batch: {len(set(ids))} distinct ids")
        print(f"ok: killed after {done_before} records, stopped after {stopped_at}; both resumed and completed "
              f"{REQUESTS} exactly once")
        s.stop()
        return 0


if __name__ == "__main__":
    sys.exit(main())
