"""The Batch API with the official openai client: upload a request file, run a
batch to completion, download the output and error files, and check that every
custom_id appears exactly once and that the greedy outputs equal those of
`deepbatch run` on the same file. Also the files endpoints and the error answers."""
import json
import os
import subprocess
import sys

import openai

import batch_e2e_util as u


def texts_by_id(recs):
    return {r["custom_id"]: r["response"]["body"]["choices"][0]["message"]["content"] for r in recs}


def main():
    with u.Session("batch_api_e2e") as s:
        topics = ["the sea", "a red fox", "winter", "bread", "a lighthouse", "rain", "the moon", "an old clock"]
        lines = [u.request_line(f"req-{i}", u.chat_body(f"Write one sentence about {t}.", 8))
                 for i, t in enumerate(topics)]
        lines.append(u.request_line("bad-max-tokens", {"messages": [{"role": "user", "content": "x"}],
                                                       "max_tokens": -1}))
        input_path = s.write_requests(lines)

        client = s.start()
        uploaded = u.upload(client, input_path)
        u.check(uploaded.purpose == "batch" and uploaded.bytes == os.path.getsize(input_path), f"upload: {uploaded}")
        u.check(client.files.retrieve(uploaded.id).filename == "requests.jsonl", "retrieve the uploaded file")
        u.check(uploaded.id in [f.id for f in client.files.list()], "files.list has the upload")
        u.check(client.files.content(uploaded.id).content == open(input_path, "rb").read(), "file content round trip")

        batch = u.create_batch(client, uploaded.id, metadata={"suite": "e2e"})
        u.check(batch.status in ("validating", "in_progress"), f"new batch: {batch.status}")
        u.check(batch.metadata == {"suite": "e2e"}, f"metadata: {batch.metadata}")
        batch = u.wait_final(client, batch.id, timeout=60)
        u.check(batch.status == "completed", f"batch ended {batch.status}: {batch}")
        counts = batch.request_counts
        u.check((counts.total, counts.completed, counts.failed) == (9, 8, 1), f"request_counts: {counts}")
        u.check(batch.output_file_id and batch.error_file_id, f"output/error files: {batch}")

        out = u.records(client, batch.output_file_id)
        ids = [r["custom_id"] for r in out]
        u.check(sorted(ids) == sorted(f"req-{i}" for i in range(len(topics))), f"output custom_ids: {ids}")
        errs = u.records(client, batch.error_file_id)
        u.check([r["custom_id"] for r in errs] == ["bad-max-tokens"], f"error records: {errs}")
        u.check(errs[0]["response"] is None and errs[0]["error"]["code"], f"error record shape: {errs[0]}")
        u.check(client.files.retrieve(batch.output_file_id).purpose == "batch_output", "output file purpose")
        u.check(batch.id in [b.id for b in client.batches.list(limit=5)], "batches.list has the batch")

        # Errors come back as OpenAI errors.
        for call, kind in [
            (lambda: client.batches.retrieve("batch_doesnotexist"), openai.NotFoundError),
            (lambda: client.files.retrieve("file-doesnotexist"), openai.NotFoundError),
            (lambda: client.files.create(file=("x.jsonl", b"{}\n"), purpose="fine-tune"), openai.BadRequestError),
            (lambda: client.batches.create(input_file_id=uploaded.id, endpoint="/v1/embeddings",
                                           completion_window="24h"), openai.BadRequestError),
            (lambda: client.batches.cancel(batch.id), openai.BadRequestError),
        ]:
            try:
                call()
                raise AssertionError(f"expected {kind.__name__}")
            except kind as e:
                u.check(isinstance(e.body, dict) and e.body.get("message"), f"error body: {e.body}")
        not_batch = client.files.create(file=("notes.jsonl", b"hello\n"), purpose="batch")
        try:
            client.batches.create(input_file_id=not_batch.id, endpoint="/v1/chat/completions", completion_window="24h")
            raise AssertionError("a file that is not a batch file was accepted")
        except openai.BadRequestError:
            pass
        deleted = client.files.delete(not_batch.id)
        u.check(deleted.deleted and deleted.id == not_batch.id, f"delete: {deleted}")

        served = texts_by_id(out)
        s.stop()

        # The same file through `deepbatch run`.
        offline_out = s.path("offline.jsonl")
        model = u.server_fixture.default_model(s.args.source_dir)
        subprocess.run([s.args.binary, "run", "-m", model, "-i", input_path, "-o", offline_out, "--no-progress",
                        *u.SERVER_ARGS], check=True, timeout=60)
        with open(offline_out) as f:
            offline = [json.loads(line) for line in f if line.strip()]
        offline_texts = texts_by_id([r for r in offline if r["error"] is None])
        u.check(offline_texts == served, f"serve vs run differ:\n{served}\n{offline_texts}")
        print(f"ok: {len(served)} outputs equal to deepbatch run, 1 error record")
        return 0


if __name__ == "__main__":
    sys.exit(main())
