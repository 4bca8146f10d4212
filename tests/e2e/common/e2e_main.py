"""A tiny runner for end-to-end scripts: parses --binary / --source-dir, runs the
test functions in order, prints each outcome and exits non-zero on any failure."""
import argparse
import time
import traceback

import server_fixture


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True, help="path of the deepbatch executable")
    p.add_argument("--source-dir", required=True, help="repository root")
    return p.parse_args(argv)


def run_tests(tests, *args):
    """Runs each fn(*args); returns the process exit code (0 when all passed)."""
    failed = []
    for fn in tests:
        start = time.monotonic()
        try:
            fn(*args)
            print(f"PASS {fn.__name__} ({time.monotonic() - start:.1f} s)", flush=True)
        except Exception:
            failed.append(fn.__name__)
            print(f"FAIL {fn.__name__} ({time.monotonic() - start:.1f} s)", flush=True)
            traceback.print_exc()
    print(f"{len(tests) - len(failed)}/{len(tests)} passed" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def run_tests_on_server(args, server_args, tests, test_args=lambda base: (base,), start_timeout=60.0):
    """Starts one `deepbatch serve` with server_args, runs run_tests(tests, *test_args(base_url)), then
    stops the server with SIGTERM. Returns 1 when a test failed or the server did not exit 0 (a crash, or
    a sanitizer report), else 0."""
    proc, base = server_fixture.start_server(args.binary, args.source_dir, server_args, timeout=start_timeout)
    try:
        code = run_tests(tests, *test_args(base))
    finally:
        rc = server_fixture.stop_server(proc)
    if rc != 0:
        print(f"server exited with {rc} after SIGTERM (a crash or a sanitizer report)")
        code = 1
    return code


def check(cond, message):
    if not cond:
        raise AssertionError(message)


def expect_raises(exc_type, fn, *args, **kwargs):
    """Calls fn and returns the exception of type exc_type it raised; fails otherwise."""
    try:
        fn(*args, **kwargs)
    except exc_type as e:
        return e
    except Exception as e:  # noqa: BLE001 - reported as a mismatch
        raise AssertionError(f"expected {exc_type.__name__}, got {type(e).__name__}: {e}") from e
    raise AssertionError(f"expected {exc_type.__name__}, nothing was raised")


def metric_value(metrics_text, name, labels=None):
    """The value of sample `name` (whose label text contains every k="v" of `labels`), or None."""
    for line in metrics_text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        head, _, value = line.rpartition(" ")
        sample = head.split("{", 1)[0]
        if sample != name:
            continue
        if labels and not all(f'{k}="{v}"' in head for k, v in labels.items()):
            continue
        return float(value)
    return None
