"""Starts `deepbatch serve` for end-to-end tests and stops it again.

    proc, base_url = start_server(binary, source_dir, ["--max-num-seqs", "8"])
    ...  # base_url is "http://127.0.0.1:<port>"
    stop_server(proc)

The server binds 127.0.0.1 on a free port (--port 0) and prints the address it
listens on; start_server waits for that line and for GET /health to answer 200.
"""
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.request

DEFAULT_MODEL = "models/SmolLM2-135M-Instruct.Q4_1.gguf"
LISTEN_MARKER = "listening on "


def default_model(source_dir):
    """Path of the default test model; raises with a clear message when it is missing."""
    path = os.path.join(source_dir, DEFAULT_MODEL)
    if not os.path.exists(path):
        raise RuntimeError(f"{path} is missing: run scripts/setup.sh to download the default model")
    return path


def _drain(stream, lines, found):
    for raw in iter(stream.readline, ""):
        lines.append(raw.rstrip("\n"))
        if LISTEN_MARKER in raw and not found.is_set():
            found.url = raw.split(LISTEN_MARKER, 1)[1].split()[0]
            found.set()
    stream.close()


def wait_healthy(base_url, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base_url + "/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{base_url}/health did not answer 200 within {timeout} s")


def start_server(binary, source_dir, extra_args=(), model=None, timeout=60.0, env=None, merge_stderr=False):
    """Starts the server; returns (proc, base_url). Raises (and kills it) when it does not come up.
    Without --data-dir (and without an `env`), the server's default Batch API directory goes
    under a fresh XDG_DATA_HOME, so that servers of concurrent tests never share one.
    proc.stdout_lines collects what it prints, its stderr too with merge_stderr."""
    model = model or default_model(source_dir)
    args = [binary, "serve", "-m", model, "--host", "127.0.0.1", "--port", "0", *extra_args]
    scratch = None
    if env is None and "--data-dir" not in extra_args and "--no-batch-api" not in extra_args:
        scratch = tempfile.mkdtemp(prefix="deepbatch_xdg_")
        env = dict(os.environ, XDG_DATA_HOME=scratch)
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merge_stderr else None,
                            text=True, env=env)
    proc.scratch_dir = scratch  # removed once the server has exited
    proc.stdout_lines = []
    found = threading.Event()
    found.url = None
    threading.Thread(target=_drain, args=(proc.stdout, proc.stdout_lines, found), daemon=True).start()
    deadline = time.monotonic() + timeout
    while not found.wait(0.1):
        if proc.poll() is not None or time.monotonic() > deadline:
            kill_server(proc)
            raise RuntimeError(f"deepbatch serve did not start (exit {proc.returncode}): {' '.join(args)}")
    try:
        wait_healthy(found.url, max(1.0, deadline - time.monotonic()))
    except Exception:
        kill_server(proc)
        raise
    return proc, found.url


def _remove_scratch(proc):
    if getattr(proc, "scratch_dir", None):
        shutil.rmtree(proc.scratch_dir, ignore_errors=True)
        proc.scratch_dir = None


def kill_server(proc):
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=30)
    _remove_scratch(proc)


def stop_server(proc, timeout=40.0):
    """SIGTERM, then wait; kills it after `timeout` s. Returns the exit code (-9 when it had to be killed)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_server(proc)
            return -9
        _remove_scratch(proc)
        return rc
    _remove_scratch(proc)
    return proc.returncode
