"""Shared pieces of the Batch API end-to-end tests: a scratch directory with a
server on a data directory in it, request files, uploading and creating a batch,
and polling a batch with the official client."""
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import server_fixture  # noqa: E402
from e2e_main import check, parse_args  # noqa: E402,F401 - the scripts use them as u.check, u.parse_args

import openai  # noqa: E402

SERVER_ARGS = ["--max-num-seqs", "16", "--kv-cache-memory", "128M"]
TERMINAL = ("completed", "failed", "cancelled", "expired")


class Session:
    """One script's run: its arguments, a scratch directory and at most one server
    started on <scratch>/data. Leaving `with Session(name) as s:` kills a server
    still running and removes the directory."""

    def __init__(self, name):
        self.args = parse_args()
        self.work = tempfile.mkdtemp(prefix=f"deepbatch_{name}_")
        self.data_dir = os.path.join(self.work, "data")
        self.proc = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc is not None:
            self.kill()
        shutil.rmtree(self.work, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.work, name)

    def start(self, *extra_args):
        """Starts `deepbatch serve --data-dir <data dir> [extra_args]`; returns an openai client for it."""
        self.proc, base_url = server_fixture.start_server(self.args.binary, self.args.source_dir,
                                                          [*SERVER_ARGS, "--data-dir", self.data_dir, *extra_args])
        return openai.OpenAI(base_url=base_url + "/v1", api_key="unused", max_retries=0, timeout=30)

    def stop(self):
        """Stops the server with SIGTERM; returns its exit code."""
        rc = server_fixture.stop_server(self.proc)
        self.proc = None
        return rc

    def kill(self):
        """Stops the server with SIGKILL."""
        server_fixture.kill_server(self.proc)
        self.proc = None

    def write_requests(self, lines):
        """Writes `lines` to requests.jsonl in the scratch directory; returns its path."""
        path = self.path("requests.jsonl")
        with open(path, "w") as f:
            for line in lines:
                f.write(line + "\n")
        return path


def request_line(custom_id, body, url="/v1/chat/completions"):
    return json.dumps({"custom_id": custom_id, "method": "POST", "url": url, "body": body})


def chat_body(text, max_tokens):
    return {"messages": [{"role": "user", "content": text}], "max_tokens": max_tokens, "temperature": 0}


def upload(client, path):
    """Uploads the request file at `path` with purpose "batch"; returns the file object."""
    with open(path, "rb") as f:
        return client.files.create(file=f, purpose="batch")


def create_batch(client, file_id, **kwargs):
    """A /v1/chat/completions batch over the uploaded file `file_id`, with a 24h window."""
    return client.batches.create(input_file_id=file_id, endpoint="/v1/chat/completions", completion_window="24h",
                                 **kwargs)


def wait_batch(client, batch_id, done, timeout, interval=0.1):
    """Polls client.batches.retrieve until done(batch) or timeout; returns the last batch."""
    deadline = time.monotonic() + timeout
    batch = client.batches.retrieve(batch_id)
    while not done(batch):
        if time.monotonic() > deadline:
            raise AssertionError(f"batch {batch_id} still {batch.status} after {timeout} s: {batch}")
        time.sleep(interval)
        batch = client.batches.retrieve(batch_id)
    return batch


def wait_final(client, batch_id, timeout):
    """Waits until the batch reached a final state (TERMINAL); returns it."""
    return wait_batch(client, batch_id, lambda b: b.status in TERMINAL, timeout)


def wait_midway(client, batch_id, completed, timeout):
    """Waits until at least `completed` requests of the batch are done, or it reached a
    final state; returns the batch."""
    return wait_batch(client, batch_id, lambda b: b.request_counts and b.request_counts.completed >= completed
                      or b.status in TERMINAL, timeout, interval=0.05)


def records(client, file_id):
    """The parsed records of a batch output or error file."""
    text = client.files.content(file_id).text
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def custom_ids(client, file_id):
    """The custom_id of each record of a batch output or error file, in file order."""
    return [r["custom_id"] for r in records(client, file_id)]
