"""The step-time model's latency term, measured: collectives of 2 and 4 ranks (dist_probe) with
each rank's host in a network namespace of its own, across the userspace link of
tests/e2e/dist/delay_link.py at several one-way delays, and what the link adds by itself.

    sudo python3 bench/scaleout/link_delay_sweep.py --probe build/tests/e2e/dist/dist_probe \
        [--delays 0,2,5,10,20] [--rate-mbit 200]

Prints, as markdown tables for docs/scale-out.md:
  - the link alone: median UDP round trip of a small datagram, a 64 MiB TCP stream's rate
    (uncapped: the forwarder's ceiling; and capped), and the forwarder's CPU seconds per second;
  - per collective and rank count: the time per call of a small collective at each delay, and
    the slope of time over the one-way delay, i.e. the link traversals it makes in sequence;
  - an all-to-all around Open MPI's 64 KiB eager limit at the largest delay, uncapped;
  - a 4 MiB all-reduce and a 1 MiB all-to-all under the rate cap at each delay, against the
    model of bench/scaleout/step_time_model.py: traversals (3 per step above the eager limit)
    x delay + transfers x bytes / rate + the time without delay or cap;
  - with --deepbatch and --model (a llama-family file of --layers layers): `run
    --tensor-parallel-size 2` decoding one sequence of 20 tokens at each delay, against the rule:
    per token, 2 all-gathers a layer + the step's broadcast, 1 traversal each."""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "e2e", "dist"))
from delay_link import DelayLink  # noqa: E402
from netns_hosts import NetnsHosts  # noqa: E402
from step_time_model import traversals  # noqa: E402
from test_link_delay import PHASES, payload_bytes, probe_time  # noqa: E402
from test_tensor_parallel import run_job  # noqa: E402

ECHO = ("import socket, sys\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.bind((sys.argv[1], 9999))\n"
        "print('up', flush=True)\nwhile True:\n    d, a = s.recvfrom(2048)\n    s.sendto(d, a)\n")
PING = ("import socket, sys, time\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.settimeout(2)\n"
        "for i in range(int(sys.argv[2])):\n    t = time.monotonic()\n    s.sendto(b'x', (sys.argv[1], 9999))\n"
        "    s.recv(16)\n    print(time.monotonic() - t)\n")
SINK = ("import socket, sys, time\nl = socket.socket()\nl.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
        "l.bind((sys.argv[1], 9998))\nl.listen(1)\nprint('up', flush=True)\nc, _ = l.accept()\nn, t0 = 0, None\n"
        "while True:\n    b = c.recv(1 << 20)\n    if not b:\n        break\n    t0 = t0 or time.monotonic()\n"
        "    n += len(b)\nprint(n / (time.monotonic() - t0))\n")
SOURCE = ("import socket, sys\ns = socket.create_connection((sys.argv[1], 9998))\nb = bytes(1 << 20)\n"
          "for i in range(int(sys.argv[2])):\n    s.sendall(b)\ns.close()\n")


def in_ns(ns, code, *argv, **kw):
    return subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", code, *map(str, argv)],
                            stdout=subprocess.PIPE, text=True, **kw)


def round_trip_ms(hosts, link, count=50):
    server = in_ns(hosts.names[1], ECHO, link.ips[1])
    server.stdout.readline()
    try:
        out, _ = in_ns(hosts.names[0], PING, link.ips[1], count).communicate(timeout=60)
    finally:
        server.kill()
        server.wait()
    return statistics.median(float(x) for x in out.split()) * 1e3


def stream_mb_s(hosts, link, mib=64):
    sink = in_ns(hosts.names[1], SINK, link.ips[1])
    sink.stdout.readline()
    cpu0, t0 = cpu_of(link), time.monotonic()
    in_ns(hosts.names[0], SOURCE, link.ips[1], mib).communicate(timeout=120)
    out, _ = sink.communicate(timeout=60)
    return float(out) / 1e6, (cpu_of(link) - cpu0) / (time.monotonic() - t0)


def cpu_of(link):
    with open(f"/proc/{link.proc.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def decode_seconds(args, link, workdir, tokens, name):
    """Wall time `run` reports for one greedy sequence of `tokens` tokens at 2 tensor-parallel ranks across link."""
    with open(os.path.join(workdir, "in.jsonl"), "w") as f:
        body = {"prompt": "The quick brown fox", "max_tokens": tokens, "temperature": 0, "ignore_eos": True}
        f.write(json.dumps({"custom_id": "a", "method": "POST", "url": "/v1/completions", "body": body}) + "\n")
    args.mpirun_extra = link.mpirun_args(2)
    proc, _, _ = run_job(args, args.model, 2, 2, workdir, name)
    m = re.search(r"wall time ([0-9.]+) s", proc.stderr)
    if proc.returncode != 0 or m is None:
        raise RuntimeError(f"run across the link failed:\n{proc.stderr}")
    return float(m.group(1))


def tensor_parallel_decode(args, hosts, delays):
    tokens, per_token = 20, 2 * args.layers + 1
    print(f"\n| run --tensor-parallel-size 2, {tokens} tokens | one-way delay | wall | per token | "
          f"rule: {per_token} traversals x delay + per token at 0 | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    base = None
    for d in delays:
        with tempfile.TemporaryDirectory() as workdir, DelayLink(hosts, d) as link:
            wall = statistics.median(decode_seconds(args, link, workdir, tokens, f"r{i}") for i in range(args.rounds))
        base = base if base is not None else wall / tokens
        rule = per_token * d * 1e-3 + base
        print(f"| {os.path.basename(args.model)} | {d:g} ms | {wall:.2f} s | {wall / tokens * 1e3:.1f} ms | "
              f"{rule * 1e3:.1f} ms | {wall / tokens / rule:.2f}x |")


def link_and_collectives(args, hosts, delays):
    print("\n| one-way delay | UDP round trip | stream uncapped | forwarder CPU | stream at the cap |")
    print("|---:|---:|---:|---:|---:|")
    for d in delays:
        with DelayLink(hosts, d) as link:
            rtt = round_trip_ms(hosts, link)
            rate, cpu = stream_mb_s(hosts, link)
        with DelayLink(hosts, d, rate_mbit=args.rate_mbit) as link:
            capped, _ = stream_mb_s(hosts, link, 16)
        print(f"| {d:g} ms | {rtt:.2f} ms | {rate:.0f} MB/s | {cpu:.2f} s/s | {capped:.1f} MB/s "
              f"({args.rate_mbit / 8:.1f}) |")

    small = {}
    print("\n| collective, small | ranks | " + " | ".join(f"{d:g} ms" for d in delays) + " | traversals |")
    print("|---|---:|" + "---:|" * (len(delays) + 1))
    for np in (2, 4):
        for op, elements in (("all_reduce_sum", 1000), ("all_gather", 1000), ("all_to_all_v", 1000),
                             ("broadcast", 1000)):
            times = []
            for d in delays:
                with DelayLink(hosts, d) as link:
                    calls = 100 if d == 0 else max(20, int(400 / d))
                    times.append(statistics.median(probe_time(args, link, np, op, elements, calls)
                                                   for _ in range(args.rounds)))
            slope = statistics.linear_regression(delays, [t * 1e3 for t in times]).slope
            small[(op, np)] = times
            print(f"| {op} {elements} | {np} | " + " | ".join(f"{t * 1e3:.2f}" for t in times) +
                  f" | {slope:.2f} |")

    print(f"\n| all_to_all_v at {delays[-1]:g} ms, bytes a pair | per call | traversals |")
    print("|---:|---:|---:|")
    with DelayLink(hosts, delays[-1]) as link:
        sizes = {e: statistics.median(probe_time(args, link, 2, "all_to_all_v", e, 10)
                                      for _ in range(args.rounds)) for e in (60000, 70000, 1 << 18, 1 << 20)}
    for e, t in sizes.items():
        print(f"| {e} | {t * 1e3:.1f} ms | {t * 1e3 / delays[-1]:.1f} |")

    print(f"\n| collective at {args.rate_mbit:g} Mbit/s | one-way delay | per call | model | ratio |")
    print("|---|---:|---:|---:|---:|")
    for op, elements in (("all_reduce_sum", 1 << 20), ("all_to_all_v", 1 << 20)):
        with DelayLink(hosts, 0) as link:
            base = statistics.median(probe_time(args, link, 2, op, elements, 10) for _ in range(args.rounds))
        steps = round(statistics.linear_regression(delays, small[(op, 2)]).slope * 1e3)
        trips = traversals(steps, payload_bytes(op, elements))
        for d in delays:
            with DelayLink(hosts, d, rate_mbit=args.rate_mbit) as link:
                t = statistics.median(probe_time(args, link, 2, op, elements, 4) for _ in range(args.rounds))
            transfer = PHASES[op] * payload_bytes(op, elements) * 8 / (args.rate_mbit * 1e6)
            model = trips * d * 1e-3 + transfer + base
            print(f"| {op} {elements} | {d:g} ms | {t * 1e3:.1f} ms | {model * 1e3:.1f} ms "
                  f"({trips} x {d:g} + {transfer * 1e3:.1f} + {base * 1e3:.1f}) | {t / model:.2f}x |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--probe", required=True)
    p.add_argument("--mpirun", default="mpirun")
    p.add_argument("--delays", default="0,2,5,10,20")
    p.add_argument("--rate-mbit", type=float, default=200)
    p.add_argument("--rounds", type=int, default=3, help="runs per point; the median is printed")
    p.add_argument("--deepbatch", help="the deepbatch binary, for the tensor-parallel decode")
    p.add_argument("--model", help="a llama-family GGUF file for the tensor-parallel decode")
    p.add_argument("--layers", type=int, default=30, help="the model's layers (SmolLM2-135M: 30)")
    p.add_argument("--only-decode", action="store_true", help="skip the link and collective tables")
    args = p.parse_args()
    delays = [float(d) for d in args.delays.split(",")]
    print(f"load average {os.getloadavg()[0]:.2f}")
    with NetnsHosts(2) as hosts:
        if args.deepbatch and args.model:
            tensor_parallel_decode(args, hosts, delays)
        if not args.only_decode:
            link_and_collectives(args, hosts, delays)
    print(f"\nload average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
