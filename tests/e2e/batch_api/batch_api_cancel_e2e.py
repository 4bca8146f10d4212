"""Cancelling a running batch with the official openai client: it goes through
cancelling to cancelled, keeps the requests that finished (each once, in the
output file) and runs nothing more; a batch still queued (one batch runs at a time
here) is cancelled at once."""
import sys
import time

import batch_e2e_util as u


def main():
    with u.Session("batch_api_cancel") as s:
        client = s.start("--max-concurrent-batches", "1")
        # A few short requests finish early; the long rest is still running when the cancel comes.
        lines = [u.request_line(f"c{i}", u.chat_body(f"Count slowly from {i} to {i + 40}.", 4 if i < 6 else 64))
                 for i in range(60)]
        file_id = u.upload(client, s.write_requests(lines)).id
        running = u.create_batch(client, file_id)
        queued = u.create_batch(client, file_id)
        u.wait_batch(client, running.id, lambda b: b.status == "in_progress", timeout=30)

        # Live traffic beside the batch: the batch runs at background priority, so a live request goes first.
        model = client.models.list().data[0].id
        started = time.monotonic()
        live = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Say hi."}],
                                              max_tokens=4, temperature=0)
        live_seconds = time.monotonic() - started
        u.check(live.choices[0].finish_reason in ("stop", "length"), f"live request beside a batch: {live}")
        u.check(client.batches.retrieve(running.id).status == "in_progress", "the batch kept running")

        cancelled_queued = client.batches.cancel(queued.id)
        u.check(cancelled_queued.status == "cancelled", f"queued batch after cancel: {cancelled_queued.status}")

        u.wait_batch(client, running.id, lambda b: b.request_counts.completed >= 3, timeout=30, interval=0.05)
        after_cancel = client.batches.cancel(running.id)
        u.check(after_cancel.status in ("cancelling", "cancelled"),
                f"running batch after cancel: {after_cancel.status}")
        done = u.wait_final(client, running.id, timeout=30)
        u.check(done.status == "cancelled" and done.cancelled_at, f"final state: {done}")
        completed = done.request_counts.completed
        u.check(3 <= completed < 60, f"completed before the cancel should be kept: {done.request_counts}")
        ids = u.custom_ids(client, done.output_file_id) if done.output_file_id else []
        u.check(len(ids) == len(set(ids)) == completed, f"output ids {len(ids)} vs completed {completed}")
        u.check(done.error_file_id is None, "aborted requests must not become error records")

        # Nothing more runs: the counts stay put.
        time.sleep(1.0)
        again = client.batches.retrieve(running.id)
        u.check(again.status == "cancelled" and again.request_counts.completed == completed, f"after: {again}")
        u.check(client.batches.retrieve(queued.id).status == "cancelled", "queued batch stays cancelled")
        print(f"ok: cancelled after {completed}/60 requests; a live request beside it took {live_seconds:.2f} s")
        return 0


if __name__ == "__main__":
    sys.exit(main())
