"""A batch's completion window (an extension: "5s", "10m", "24h"): a batch of many long
requests with a 5 s window ends `expired`: the requests that finished are in the output
file, every other one has a "batch_expired" error record, each custom_id exactly once,
request_counts and usage match the files. A batch whose window ends while the server is
down expires when the server starts again. A window of another form is 400."""
import sys
import time

import openai

import batch_e2e_util as u

SHORT, LONG = 4, 40
IDS = [f"r{i:02d}" for i in range(SHORT + LONG)]


def requests():
    """A few short requests that finish at once, then long ones that cannot all finish in the window."""
    lines = []
    for i, custom_id in enumerate(IDS):
        body = u.chat_body(f"Write a long story about the number {i}.", 2 if i < SHORT else 600)
        body["ignore_eos"] = True
        lines.append(u.request_line(custom_id, body))
    return lines


def check_expired(client, batch, window):
    u.check(batch.status == "expired" and batch.expired_at, f"final state: {batch}")
    u.check(batch.expires_at == batch.created_at + window, f"expires_at {batch.expires_at}, created {batch.created_at}")
    counts = batch.request_counts
    u.check(counts.total == len(IDS) and counts.completed + counts.failed == len(IDS), f"counts: {counts}")
    done = u.records(client, batch.output_file_id) if batch.output_file_id else []
    expired = u.records(client, batch.error_file_id) if batch.error_file_id else []
    u.check(len(done) == counts.completed and len(expired) == counts.failed, f"{len(done)}/{len(expired)} vs {counts}")
    ids = [r["custom_id"] for r in done + expired]
    u.check(sorted(ids) == IDS, f"{len(ids)} records, {len(set(ids))} distinct custom_ids")
    for r in done:
        u.check(r["error"] is None and r["response"]["status_code"] == 200, f"output record: {r}")
    for r in expired:
        u.check(r["response"] is None and r["error"]["code"] == "batch_expired", f"error record: {r}")
    usage = batch.usage
    u.check(usage is not None, f"usage of a finalized batch: {batch}")
    prompt = sum(r["response"]["body"]["usage"]["prompt_tokens"] for r in done)
    generated = sum(r["response"]["body"]["usage"]["completion_tokens"] for r in done)
    u.check(usage.input_tokens == prompt and usage.output_tokens == generated and
            usage.total_tokens == prompt + generated, f"usage {usage} vs records {prompt} + {generated}")
    return len(done), len(expired)


def main():
    with u.Session("batch_api_expiry") as s:
        client = s.start()
        file_id = u.upload(client, s.write_requests(requests())).id

        for bad in ("1d", "0s", "169h", "5", "5 s"):
            try:
                client.batches.create(input_file_id=file_id, endpoint="/v1/chat/completions", completion_window=bad)
                u.check(False, f"completion_window {bad!r} was accepted")
            except openai.BadRequestError as e:
                u.check(e.body.get("param") == "completion_window", f"{bad!r}: {e.body}")

        started = time.monotonic()
        batch = client.batches.create(input_file_id=file_id, endpoint="/v1/chat/completions", completion_window="5s")
        u.check(batch.completion_window == "5s", f"created: {batch}")
        final = u.wait_final(client, batch.id, timeout=60)
        took = time.monotonic() - started
        u.check(took < 30, f"the batch took {took:.1f} s to expire after a 5 s window")
        finished, expired = check_expired(client, final, 5)
        u.check(finished >= SHORT and expired >= 1, f"{finished} finished, {expired} expired")
        # Nothing more runs once it expired.
        time.sleep(1.0)
        again = client.batches.retrieve(batch.id)
        u.check(again.status == "expired" and again.request_counts == final.request_counts, f"after: {again}")

        # A window that ends while the server is down: the batch expires on the next start.
        down = client.batches.create(input_file_id=file_id, endpoint="/v1/chat/completions", completion_window="3s")
        s.kill()
        time.sleep(4.0)
        client = s.start()
        final = u.wait_final(client, down.id, timeout=60)
        finished_down, expired_down = check_expired(client, final, 3)
        print(f"ok: {finished}/{len(IDS)} finished in a 5 s window, {expired} expired; "
              f"after a restart past its window: {finished_down} finished, {expired_down} expired")
        return 0


if __name__ == "__main__":
    sys.exit(main())
