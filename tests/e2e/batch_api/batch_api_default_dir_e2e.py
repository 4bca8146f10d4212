"""The Batch API out of the box: `deepbatch serve` without --data-dir keeps its
files under $XDG_DATA_HOME/deepbatch (printed at start), and the official client
uploads a file, runs a batch and downloads its output there; a second server on
the same directory is refused with a clear error; --no-batch-api unmounts it."""
import os
import shutil
import subprocess
import sys
import tempfile

import batch_e2e_util as u
import openai

import server_fixture


def main():
    args = u.parse_args()
    xdg = tempfile.mkdtemp(prefix="deepbatch_xdg_e2e_")
    env = dict(os.environ, XDG_DATA_HOME=xdg)
    expected_dir = os.path.join(xdg, "deepbatch")
    proc = None
    try:
        proc, base = server_fixture.start_server(args.binary, args.source_dir, u.SERVER_ARGS, env=env)
        u.check(any(f"Batch API data in {expected_dir}" in line for line in proc.stdout_lines),
                f"the data directory is not printed at start: {proc.stdout_lines}")
        client = openai.OpenAI(base_url=base + "/v1", api_key="unused", max_retries=0, timeout=30)
        path = os.path.join(xdg, "requests.jsonl")
        with open(path, "w") as f:
            for i in range(3):
                f.write(u.request_line(f"req-{i}", u.chat_body(f"Count to {i + 1}.", 4)) + "\n")
        uploaded = u.upload(client, path)
        batch = u.wait_final(client, u.create_batch(client, uploaded.id).id, timeout=120)
        u.check(batch.status == "completed", f"batch ended {batch.status}")
        u.check(sorted(u.custom_ids(client, batch.output_file_id)) == ["req-0", "req-1", "req-2"],
                "output records")
        u.check(os.path.isdir(os.path.join(expected_dir)) and os.listdir(expected_dir),
                f"nothing was written under {expected_dir}")

        model = server_fixture.default_model(args.source_dir)
        second = subprocess.run([args.binary, "serve", "-m", model, "--port", "0"], env=env, capture_output=True,
                                text=True, timeout=120)
        u.check(second.returncode != 0 and "another server is using this data directory" in second.stderr,
                f"a second server on the same data directory: exit {second.returncode}, {second.stderr[-300:]}")
        u.check(server_fixture.stop_server(proc) == 0, "the server did not exit cleanly")
        proc = None

        proc, base = server_fixture.start_server(args.binary, args.source_dir, [*u.SERVER_ARGS, "--no-batch-api"],
                                                 env=env)
        client = openai.OpenAI(base_url=base + "/v1", api_key="unused", max_retries=0, timeout=30)
        try:
            client.files.list()
            raise AssertionError("/v1/files answered with --no-batch-api")
        except openai.NotFoundError:
            pass
        u.check(server_fixture.stop_server(proc) == 0, "the server did not exit cleanly")
        proc = None
        print("1/1 passed")
        return 0
    finally:
        if proc is not None:
            server_fixture.kill_server(proc)
        shutil.rmtree(xdg, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
