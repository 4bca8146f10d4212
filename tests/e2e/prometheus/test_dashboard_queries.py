"""The Grafana dashboard against a real Prometheus. A Prometheus server (/usr/bin/prometheus,
the Debian package prometheus) scrapes a running `deepbatch serve` every second while
`deepbatch loadtest` drives it; then every query of dashboards/deepbatch.json (each panel
target's expr, and each query template variable) runs through Prometheus's HTTP API
(/api/v1/query_range over the load window, as Grafana runs a time-series panel) and must
return data: at least one series. NaN samples (e.g. a latency quantile in a window without
observations) count as data and are reported. Grafana variables are substituted: $model_name
by the served model name, $__rate_interval by RATE_INTERVAL.

The server runs a test-sized random-weight deepseek2 GGUF (MoE layers, so the expert panels
have data) with the memory guard, the SLA controller and the roofline gauge on; SERVER_ARGS
holds every flag a panel's metrics need. A panel whose metric the server does not export, or
whose query does not parse, fails the test; each one is listed.

Without /usr/bin/prometheus (or a prometheus on PATH) the test fails: scripts/setup.sh
installs it."""
import argparse
import ctypes
import datetime
import itertools
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
sys.path.insert(0, os.path.join(HERE, "..", "deepseek"))

import deepseek_models  # noqa: E402
import server_fixture  # noqa: E402
from e2e_main import check, run_tests  # noqa: E402

MODEL_NAME = "dashboard_e2e"  # no regex metacharacters: $model_name is this name as it stands
MODEL_SHAPE = "deepseek-v2-mini"  # 2 MoE layers of 8 routed experts: the MoE panels have data
# Every flag that makes a panel's metrics exist; add here what new panels need.
SERVER_ARGS = [
    "-t", "2", "--kv-cache-memory", "16M", "--max-num-seqs", "8", "--no-batch-api",
    "--served-model-name", MODEL_NAME,
    "--memory-guard", "on", "--memory-limit", "16G",  # the guard's gauges, with a limit it never nears
    "--memory-bandwidth", "10",  # the roofline's reference, instead of a second's measurement at start-up
    "--sla-tpot-p99", "5", "--sla-ttft-p99", "10",  # the SLA controller on, with targets it always meets
]
# Closed loop, short requests; every prompt shares a 32-token prefix, so the prefix cache hits.
LOAD_SECONDS = 15
LOAD_ARGS = ["--endpoint", "completions", "--arrival", "closed", "--concurrency", "4",
             "--duration", str(LOAD_SECONDS), "-n", "5000", "--input-len", "24", "--output-len", "16",
             "--ignore-eos", "--shared-prefix", "1:32:1.0", "--seed", "1", "--request-timeout", "60"]
SCRAPE_INTERVAL = "1s"
RATE_INTERVAL = "30s"  # $__rate_interval: many scrapes, and the whole load window at its end
QUERY_STEP = 1  # seconds between the points of a query_range
PROMETHEUS_CANDIDATES = ["/usr/bin/prometheus", shutil.which("prometheus")]

GRAFANA_VARIABLE = re.compile(r"\$\{(\w+)(?::[^}]*)?\}|\[\[(\w+)\]\]|\$(\w+)")


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True, help="path of the deepbatch executable")
    p.add_argument("--source-dir", required=True, help="repository root")
    p.add_argument("--work-dir", help="where the scratch directory goes (default: the system's temp dir)")
    p.add_argument("--dashboard", help="the Grafana dashboard JSON (default: dashboards/deepbatch.json)")
    return p.parse_args(argv)


def substitute(expr, values):
    """expr with each Grafana variable ($name, ${name}, ${name:format}, [[name]]) replaced by
    values[name]; raises KeyError naming a variable it has no value for."""
    def one(m):
        name = m.group(1) or m.group(2) or m.group(3)
        if name not in values:
            raise KeyError(f"no value for the Grafana variable ${name}")
        return values[name]
    return GRAFANA_VARIABLE.sub(one, expr)


def dashboard_queries(path):
    """(where, expr or None) for every target of every panel (rows' nested panels too), then
    ("variable NAME", query) for each query template variable."""
    with open(path) as f:
        dash = json.load(f)
    out = []

    def walk(panels):
        for panel in panels:
            for target in panel.get("targets", []):
                out.append((f"panel '{panel.get('title', '?')}' {target.get('refId', '?')}", target.get("expr")))
            walk(panel.get("panels", []))
    walk(dash.get("panels", []))
    for var in dash.get("templating", {}).get("list", []):
        if var.get("type") == "query":
            query = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
            out.append((f"variable {var['name']}", query))
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rfc3339_seconds(text):
    """Seconds since the epoch of an RFC 3339 time as Prometheus writes it (nanoseconds, Z or an offset)."""
    head, _, frac = text.partition(".")
    digits = "".join(itertools.takewhile(str.isdigit, frac))
    zone = frac[len(digits):] if frac else head[19:]
    whole = datetime.datetime.fromisoformat(head[:19] + (zone.replace("Z", "+00:00") or "+00:00"))
    return whole.timestamp() + (int(digits) / 10 ** len(digits) if digits else 0.0)


def get_json(url, timeout=10):
    """(HTTP status, parsed JSON body or None); Prometheus answers errors (400, 422) with JSON too."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, json.loads(r.read().decode())
    except urllib.error.HTTPError as e:
        body = e.read().decode()
        try:
            return e.code, json.loads(body)
        except ValueError:
            return e.code, {"error": body}


def die_with_parent():
    """In the child before exec: SIGKILL when the test process dies, so no Prometheus outlives it."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Prometheus:
    """A Prometheus server scraping one target every SCRAPE_INTERVAL, storing into `directory`."""

    def __init__(self, binary, directory, target):
        self.log_path = os.path.join(directory, "prometheus.log")
        config = os.path.join(directory, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n"
                    f"  scrape_interval: {SCRAPE_INTERVAL}\n"
                    f"  evaluation_interval: {SCRAPE_INTERVAL}\n"
                    "scrape_configs:\n"
                    "  - job_name: deepbatch\n"
                    "    metrics_path: /metrics\n"
                    f"    static_configs:\n      - targets: ['{target}']\n")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(
                [binary, f"--config.file={config}", f"--storage.tsdb.path={os.path.join(directory, 'tsdb')}",
                 f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)

    def log_tail(self, lines=30):
        with open(self.log_path) as f:
            return "".join(f.readlines()[-lines:])

    def wait(self, what, fn, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"prometheus exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                if fn():
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"prometheus: {what} not within {timeout} s:\n{self.log_tail()}")

    def wait_ready(self, timeout=30):
        self.wait("/-/ready", lambda: urllib.request.urlopen(self.url + "/-/ready", timeout=2).status == 200,
                  timeout)

    def wait_target_up(self, timeout=30):
        def up():
            _, body = get_json(self.url + "/api/v1/targets?state=active")
            targets = body["data"]["activeTargets"]
            return targets and all(t["health"] == "up" for t in targets)
        self.wait("the target up in /api/v1/targets", up, timeout)

    def wait_scraped_after(self, when, timeout=30):
        """Waits until every target's last stored scrape began after `when` (seconds since the
        epoch): what the server counted up to then is in the database."""
        def scraped():
            _, body = get_json(self.url + "/api/v1/targets?state=active")
            targets = body["data"]["activeTargets"]
            return targets and all(rfc3339_seconds(t["lastScrape"]) > when for t in targets)
        self.wait(f"a scrape after {when:.3f}", scraped, timeout)

    def query_range(self, expr, start, end):
        """(series, None) or (None, error text)."""
        params = urllib.parse.urlencode({"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}",
                                         "step": str(QUERY_STEP)})
        status, body = get_json(f"{self.url}/api/v1/query_range?{params}", timeout=30)
        if status != 200 or body.get("status") != "success":
            return None, f"HTTP {status}: {body.get('errorType', '')} {body.get('error', body)}"
        return body["data"]["result"], None

    def label_values(self, label, match, start, end):
        params = {"start": f"{start:.3f}", "end": f"{end:.3f}"}
        if match:
            params["match[]"] = match
        status, body = get_json(f"{self.url}/api/v1/label/{label}/values?{urllib.parse.urlencode(params)}")
        if status != 200 or body.get("status") != "success":
            return None, f"HTTP {status}: {body.get('errorType', '')} {body.get('error', body)}"
        return body["data"], None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)


def find_prometheus():
    for path in PROMETHEUS_CANDIDATES:
        if path and os.access(path, os.X_OK):
            return path
    raise RuntimeError("no prometheus binary (/usr/bin/prometheus, or on PATH): install the Debian package "
                       "prometheus (scripts/setup.sh does)")


def drive_load(binary, base):
    """Runs `deepbatch loadtest` against base for LOAD_SECONDS; checks that requests were served."""
    r = subprocess.run([binary, "loadtest", "--url", base, "--model", MODEL_NAME, *LOAD_ARGS],
                       capture_output=True, text=True, timeout=LOAD_SECONDS + 60, stdin=subprocess.DEVNULL)
    out = r.stdout + r.stderr
    summary = re.search(r"requests (\d+) \(ok (\d+), failed (\d+)\)", out)
    check(r.returncode == 0 and summary, f"loadtest exit {r.returncode}:\n{out[-3000:]}")
    print(summary.group(0), flush=True)
    check(int(summary.group(2)) > 0 and summary.group(3) == "0", f"loadtest: {summary.group(0)}")


def check_queries(prom, queries, start, end):
    """Runs each query over [start, end]; prints what each returned; returns the failures."""
    values = {"model_name": MODEL_NAME, "__rate_interval": RATE_INTERVAL,
              "__interval": f"{QUERY_STEP}s", "__range": f"{int(end - start)}s"}
    failures = []
    width = max(len(where) for where, _ in queries)
    for where, query in queries:
        if not query:
            failures.append(f"{where}: no expr")
            print(f"{where:<{width}}  NO EXPR", flush=True)
            continue
        try:
            expr = substitute(query, values)
        except KeyError as e:
            failures.append(f"{where}: {e.args[0]} in {query!r}")
            print(f"{where:<{width}}  {e.args[0]}", flush=True)
            continue
        label_values = re.fullmatch(r"label_values\(\s*(?:(.*),\s*)?(\w+)\s*\)", expr.strip())
        if label_values:
            # A variable's options: the label's values on the series the selector matches.
            got, error = prom.label_values(label_values.group(2), label_values.group(1), start, end)
            if error or MODEL_NAME not in got:
                failures.append(f"{where}: {error or f'values {got} lack {MODEL_NAME!r}'} ({expr})")
            print(f"{where:<{width}}  {error or f'values {got}'}", flush=True)
            continue
        series, error = prom.query_range(expr, start, end)
        if error:
            failures.append(f"{where}: {error} ({expr})")
            print(f"{where:<{width}}  ERROR {error}", flush=True)
            continue
        points = [float(v) for s in series for _, v in s["values"]]
        nan = sum(1 for v in points if math.isnan(v))
        note = f"{len(series)} series, {len(points)} points" + (f", {nan} NaN" if nan else "")
        if not series:
            failures.append(f"{where}: no data ({expr})")
            note += "  NO DATA"
        elif nan == len(points):
            note += " (all NaN)"
        print(f"{where:<{width}}  {note}", flush=True)
    return failures


def test_substitute_grafana_variables():
    values = {"model_name": "m", "__rate_interval": "30s"}
    got = substitute('rate(x{model_name=~"$model_name",a="${model_name:regex}"}[$__rate_interval]) + [[model_name]]',
                     values)
    check(got == 'rate(x{model_name=~"m",a="m"}[30s]) + m', got)
    try:
        substitute("rate(x[$__unknown])", values)
    except KeyError as e:
        check("__unknown" in e.args[0], e.args[0])
    else:
        raise AssertionError("an unknown variable is not substituted silently")


def test_dashboard_queries_return_data(args):
    dashboard = args.dashboard or os.path.join(args.source_dir, "dashboards", "deepbatch.json")
    queries = dashboard_queries(dashboard)
    check(queries, f"{dashboard}: no queries")
    prometheus = find_prometheus()
    with deepseek_models.Scratch(args, "prometheus") as scratch:
        model = scratch.write_model(MODEL_SHAPE)
        proc, base = server_fixture.start_server(args.binary, args.source_dir, SERVER_ARGS, model=model,
                                                 merge_stderr=True)
        prom = None
        try:
            prom = Prometheus(prometheus, scratch.dir, base.removeprefix("http://"))
            prom.wait_ready()
            prom.wait_target_up()
            start = time.time()
            drive_load(args.binary, base)
            prom.wait_scraped_after(time.time())  # the last of the load is stored
            failures = check_queries(prom, queries, start, time.time())
        finally:
            if prom:
                prom.stop()
            rc = server_fixture.stop_server(proc)
        if rc != 0:
            print("server output:\n" + "\n".join(proc.stdout_lines[-40:]))
        check(rc == 0, f"server exited with {rc} after SIGTERM")
    check(not failures, f"{len(failures)} of {len(queries)} dashboard queries returned no data:\n"
          + "\n".join(failures))
    print(f"all {len(queries)} dashboard queries returned data")


# Run time (one of the suite's slowest, tests/README.md): LOAD_SECONDS of load, so that
# rate() over the dashboard's windows has several 1-second scrapes to work on, plus the
# model written, the server and Prometheus started, and every query run.
def main():
    args = parse_args()
    # SIGTERM (ctest's timeout) ends the test through the finally blocks that stop the servers.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    start = time.monotonic()
    code = run_tests([test_substitute_grafana_variables])
    code |= run_tests([test_dashboard_queries_return_data], args)
    print(f"wall time {time.monotonic() - start:.1f} s")
    return code


if __name__ == "__main__":
    sys.exit(main())
