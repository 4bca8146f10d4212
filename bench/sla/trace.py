#!/usr/bin/env python3
"""Trace the adaptive batch controller's decisions in a `deepbatch serve` log.

`deepbatch serve --sla-tpot-p99 ... --sla-ttft-p99 ...` logs every change of the
step token budget or running cap to stderr as a `sla controller: ...` line. This
script prints those decisions as a table, then a summary: decisions by action,
direction changes of the step token budget (an oscillation measure), the budget's
min/median/max and the last settings. It exits 1 when the log has no decisions.

Usage: python3 bench/sla/trace.py SERVE_LOG [--plot trace.png]
"""
import argparse
import re
import statistics
import sys
from collections import Counter

LINE = re.compile(
    r"sla controller: (?P<action>\w+) \((?P<reason>.*)\): "
    r"step tokens (?P<tok0>\d+) -> (?P<tok1>\d+), running cap (?P<cap0>\d+) -> (?P<cap1>\d+); "
    r"tpot (?P<tpot>\S+) s, ttft p99 (?P<ttft>\S+) s, (?P<tps>\S+) tok/s")
INTS = ("tok0", "tok1", "cap0", "cap1")
FLOATS = ("tpot", "ttft", "tps")  # float() also takes the "nan" and "inf" that printf writes
COLOURS = {"grow": "tab:green", "shrink": "tab:red", "revert": "tab:orange", "hold": "tab:gray"}


def parse(path):
    decisions = []
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.search(line)
            if m:
                d = m.groupdict()
                d.update({k: int(d[k]) for k in INTS})
                d.update({k: float(d[k]) for k in FLOATS})
                decisions.append(d)
    return decisions


def direction_changes(decisions):
    """How often a rise of the step token budget follows a fall, or a fall a rise."""
    signs = [1 if d["tok1"] > d["tok0"] else -1 for d in decisions if d["tok1"] != d["tok0"]]
    return sum(a != b for a, b in zip(signs, signs[1:]))


def pair(d, key):
    return f"{d[key + '0']} -> {d[key + '1']}"


def print_table(decisions):
    width = max(len("reason"), *(len(d["reason"]) for d in decisions))
    print(f"{'#':>3}  {'action':<6}  {'reason':<{width}}  {'step tokens':>13}  {'cap':>10}  "
          f"{'tpot s':>7}  {'ttft p99 s':>10}  {'tok/s':>7}")
    for i, d in enumerate(decisions):
        print(f"{i:>3}  {d['action']:<6}  {d['reason']:<{width}}  {pair(d, 'tok'):>12}  "
              f"{pair(d, 'cap'):>10}  {d['tpot']:>7.3f}  {d['ttft']:>10.3f}  {d['tps']:>7.0f}")


def print_summary(decisions):
    counts = Counter(d["action"] for d in decisions)
    budget = [decisions[0]["tok0"]] + [d["tok1"] for d in decisions]
    last = decisions[-1]
    print(f"\n{len(decisions)} decisions: " + ", ".join(f"{a} {n}" for a, n in sorted(counts.items())))
    print(f"step token budget direction changes: {direction_changes(decisions)}")
    print(f"step token budget: min {min(budget)}, median {statistics.median(budget):g}, max {max(budget)}")
    print(f"last settings: step tokens {last['tok1']}, running cap {last['cap1']}")


def plot(decisions, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    x = list(range(len(decisions)))
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(10, 7))
    top.plot(x, [d["tok1"] for d in decisions], color="tab:blue", drawstyle="steps-post", label="step tokens")
    for action in sorted({d["action"] for d in decisions}):
        xs = [i for i, d in enumerate(decisions) if d["action"] == action]
        top.scatter(xs, [decisions[i]["tok1"] for i in xs], color=COLOURS.get(action, "black"), zorder=3,
                    label=action)
    top.set_ylabel("step tokens (after)")
    cap = top.twinx()
    cap.plot(x, [d["cap1"] for d in decisions], color="tab:purple", linestyle="--", drawstyle="steps-post",
             label="running cap")
    cap.set_ylabel("running cap (after)")
    handles = top.get_legend_handles_labels()
    more = cap.get_legend_handles_labels()
    top.legend(handles[0] + more[0], handles[1] + more[1], loc="best")
    top.set_title("Adaptive batch controller decisions")

    bottom.plot(x, [d["tpot"] for d in decisions], marker="o", label="tpot estimate")
    bottom.plot(x, [d["ttft"] for d in decisions], marker="s", label="ttft p99")
    bottom.set_xlabel("decision index")
    bottom.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    bottom.set_ylabel("seconds")
    bottom.legend(loc="best")
    fig.tight_layout()
    fig.savefig(path)
    print(f"plot written to {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", help="stderr of deepbatch serve")
    ap.add_argument("--plot", metavar="FILE.png", help="draw the settings and estimates against decision index")
    args = ap.parse_args()
    try:
        decisions = parse(args.log)
    except OSError as e:
        print(f"{args.log}: {e.strerror}", file=sys.stderr)
        return 1
    if not decisions:
        print(f"{args.log}: no 'sla controller:' decisions (was serve started with --sla-tpot-p99 or "
              f"--sla-ttft-p99?)", file=sys.stderr)
        return 1
    print_table(decisions)
    print_summary(decisions)
    if args.plot:
        plot(decisions, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
