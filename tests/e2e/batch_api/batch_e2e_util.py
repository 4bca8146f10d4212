"""Shared pieces of the Batch API end-to-end tests: arguments, a server with a
data directory, request files, and polling a batch with the official client."""
import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import server_fixture  # noqa: E402

import openai  # noqa: E402

SERVER_ARGS = ["--max-num-seqs", "16", "--kv-cache-memory", "128M"]
TERMINAL = ("completed", "failed", "cancelled", "expired")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--source-dir", required=True)
    return p.parse_args()


def start(args, data_dir):
    """Starts `deepbatch serve --data-dir data_dir`; returns (proc, client)."""
    proc, base_url = server_fixture.start_server(args.binary, args.source_dir, [*SERVER_ARGS, "--data-dir", data_dir])
    client = openai.OpenAI(base_url=base_url + "/v1", api_key="unused", max_retries=0, timeout=30)
    return proc, client


def request_line(custom_id, body, url="/v1/chat/completions"):
    return json.dumps({"custom_id": custom_id, "method": "POST", "url": url, "body": body})


def chat_body(text, max_tokens):
    return {"messages": [{"role": "user", "content": text}], "max_tokens": max_tokens, "temperature": 0}


def write_lines(path, lines):
    with open(path, "w") as f:
        for line in lines:
            f.write(line + "\n")


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


def records(client, file_id):
    """The parsed records of a batch output or error file."""
    text = client.files.content(file_id).text
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def check(cond, message):
    if not cond:
        raise AssertionError(message)


def scratch_dir(name):
    return tempfile.mkdtemp(prefix=f"deepbatch_{name}_")
