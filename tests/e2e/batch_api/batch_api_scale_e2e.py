"""The Batch API at OpenAI's scale with the official openai client: a request file of
50,000 requests and tens of MB (past the server's 32 MB limit on other bodies) uploads
through a body written to disk as it arrives, and downloads a piece at a time, so the
server's anonymous memory grows by far less than the file either way; a batch over it is accepted and cancelled; 50,001
requests are refused; an upload past --max-upload-size gets 413; two batches run at
once (--max-concurrent-batches 2) and finish with usage filled; the batch list pages
with limit and after."""
import json
import os
import threading
import time

import openai

import batch_e2e_util as u

MAX_UPLOAD = 80 << 20


def rss_anon_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    raise AssertionError("no RssAnon in /proc/<pid>/status")


class PeakAnon:
    """The server's highest anonymous RSS while the `with` block runs, sampled every 5 ms."""

    def __init__(self, pid):
        self.pid, self.peak, self.done = pid, rss_anon_kb(pid), False

    def __enter__(self):
        self.thread = threading.Thread(target=self.sample)
        self.thread.start()
        return self

    def sample(self):
        while not self.done:
            self.peak = max(self.peak, rss_anon_kb(self.pid))
            time.sleep(0.005)

    def __exit__(self, *exc):
        self.done = True
        self.thread.join()


def write_file(s, name, lines):
    path = s.path(name)
    with open(path, "w") as f:
        for line in lines:
            f.write(line + "\n")
    return path


def main():
    with u.Session("batch_api_scale_e2e") as s:
        pad = "x" * 1200  # ~1.3 KB per request: 50,000 of them make ~65 MB
        big = write_file(s, "big.jsonl", (u.request_line(f"r{i}", u.chat_body(f"{pad} {i}", 4)) for i in range(50000)))
        size = os.path.getsize(big)
        u.check(size > 48 << 20, f"the request file has {size} bytes")
        client = s.start("--max-upload-size", str(MAX_UPLOAD), "--max-concurrent-batches", "2")
        pid = s.proc.pid
        before = rss_anon_kb(pid)
        with PeakAnon(pid) as peak:
            uploaded = u.upload(client, big)
        u.check(uploaded.bytes == size, f"upload: {uploaded}")
        grown_mb = (peak.peak - before) / 1024
        print(f"upload of {size / 2**20:.0f} MiB: the server's anonymous memory grew by {grown_mb:.1f} MiB at most")
        u.check(grown_mb < size / 2**20 / 4, f"the upload was held in memory: +{grown_mb:.1f} MiB")
        before = rss_anon_kb(pid)
        with PeakAnon(pid) as peak:
            content = client.files.content(uploaded.id).content
        u.check(content == open(big, "rb").read(), "the stored file is the upload")
        grown_mb = (peak.peak - before) / 1024
        print(f"download of {size / 2**20:.0f} MiB: the server's anonymous memory grew by {grown_mb:.1f} MiB at most")
        u.check(grown_mb < size / 2**20 / 4, f"the download was held in memory: +{grown_mb:.1f} MiB")

        batch = u.create_batch(client, uploaded.id)
        u.check(batch.request_counts is None or batch.request_counts.total in (0, 50000), f"batch: {batch}")
        client.batches.cancel(batch.id)
        u.check(u.wait_final(client, batch.id, timeout=120).status == "cancelled", "the big batch cancels")

        too_many = write_file(s, "too_many.jsonl",
                              (u.request_line(f"t{i}", u.chat_body("hi", 1)) for i in range(50001)))
        too_many_file = u.upload(client, too_many)
        try:
            u.create_batch(client, too_many_file.id)
            raise AssertionError("a batch of 50,001 requests was accepted")
        except openai.BadRequestError as e:
            u.check("50000" in str(e.body), f"refusal: {e.body}")

        over = s.path("over.jsonl")
        with open(over, "wb") as f:
            f.write(b"x" * (MAX_UPLOAD + 1))
        try:
            u.upload(client, over)
            raise AssertionError("an upload past --max-upload-size was accepted")
        except openai.APIStatusError as e:
            u.check(e.status_code == 413, f"past the limit: {e.status_code} {e.body}")

        small = write_file(s, "small.jsonl",
                           (u.request_line(f"s{i}", u.chat_body(f"Name a colour, {i}.", 24)) for i in range(24)))
        file_id = u.upload(client, small).id
        first, second = u.create_batch(client, file_id), u.create_batch(client, file_id)
        both = False
        deadline = time.time() + 60
        while time.time() < deadline and not both:
            a, b = client.batches.retrieve(first.id), client.batches.retrieve(second.id)
            both = a.status == "in_progress" and b.status == "in_progress"
            if a.status in u.TERMINAL:
                break
            time.sleep(0.02)
        u.check(both, "the two batches never ran at once")
        for b in (first, second):
            done = u.wait_final(client, b.id, timeout=180)
            u.check(done.status == "completed" and done.request_counts.completed == 24, f"batch: {done}")
            u.check(done.usage and done.usage.input_tokens > 0 and done.usage.output_tokens > 0 and
                    done.usage.total_tokens == done.usage.input_tokens + done.usage.output_tokens, f"usage: {done.usage}")

        page = client.batches.list(limit=2)
        u.check([b.id for b in page.data] == [second.id, first.id] and page.has_more, f"page: {page}")
        rest = client.batches.list(limit=2, after=first.id)
        u.check(rest.data[0].id == batch.id, f"after: {[b.id for b in rest.data]}")
        u.check(s.stop() == 0, "the server stops cleanly")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
