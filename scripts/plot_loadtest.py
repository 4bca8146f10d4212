#!/usr/bin/env python3
"""Draws a `deepbatch loadtest` JSON report (layout: src/loadtest/report.h) as a figure.

usage: plot_loadtest.py REPORT.json OUT.svg|OUT.png
       plot_loadtest.py --check      exits 0 when matplotlib can be imported

A capacity search (the report has "capacity"): one panel per latency series, p99 TTFT,
p99 TPOT and each SLO's metric at its percentile, in ms against the offered request
rate of every step; a step that met all SLOs is a green dot, one that violated them a
red cross, SLO limits are dashed horizontal lines and the sustainable rate (and the
first violating one) vertical lines. A plain run: one panel per metric (TTFT, TPOT, ITL,
E2E) with its mean, percentiles and maximum in ms, SLO limits dashed, the throughput in
the title. SVG text stays text (searchable, smaller); the format follows OUT's suffix.

Exit status: 0 drawn, 1 an unreadable report, 2 bad usage, 3 matplotlib missing.
"""
import json
import sys

USAGE = "usage: plot_loadtest.py REPORT.json OUT.svg|OUT.png | --check"
METRICS = ("ttft", "tpot", "itl", "e2e")
PERCENTILE_KEYS = {90: "p90", 95: "p95", 99: "p99"}
MET, VIOLATED, SLO_COLOR, CAPACITY_COLOR = "tab:green", "tab:red", "tab:orange", "tab:blue"


def import_pyplot():
    """matplotlib.pyplot on the file-only Agg backend; exits 3 when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        print("plot_loadtest.py: matplotlib is not installed (pip install matplotlib)", file=sys.stderr)
        sys.exit(3)
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"  # text as <text>, not as glyph paths
    matplotlib.rcParams["svg.hashsalt"] = "deepbatch"  # the same report gives the same SVG
    import matplotlib.pyplot as plt
    return plt


def ms(seconds):
    return seconds * 1e3


def fmt_ms(value_ms):
    return f"{value_ms:.3g}" if value_ms < 100 else f"{value_ms:.0f}"


def slo_label(slo):
    return f"SLO {slo['metric'].upper()} p{slo['percentile']:g} \u2264 {fmt_ms(ms(slo['limit_s']))} ms"


def source_of(settings):
    model, url = settings.get("model", "?"), settings.get("url", "?")
    return f"{model} at {url}"


def capacity_series(settings):
    """(metric, percentile) pairs to draw: p99 TTFT and TPOT, then each SLO's, once each."""
    series = [("ttft", 99), ("tpot", 99)]
    for slo in settings.get("slos", []):
        pair = (slo["metric"], int(slo["percentile"]))
        if pair not in series:
            series.append(pair)
    return series


def plot_capacity(plt, report):
    settings, cap = report["settings"], report["capacity"]
    steps = sorted(cap["steps"], key=lambda s: s["rate"])
    series = capacity_series(settings)
    fig, axes = plt.subplots(len(series), 1, sharex=True, figsize=(8, 2.6 * len(series) + 1.2), squeeze=False)
    for ax, (metric, pct) in zip(axes[:, 0], series):
        key = PERCENTILE_KEYS[pct]
        points = [(s["rate"], ms(s["latency"][metric][key]), s["met"], s["index"]) for s in steps
                  if s["latency"][metric]["count"] > 0]
        ax.plot([p[0] for p in points], [p[1] for p in points], color="0.6", linewidth=1, zorder=1)
        for met, color, marker, label in ((True, MET, "o", "step met the SLOs"),
                                          (False, VIOLATED, "X", "step violated them")):
            chosen = [p for p in points if p[2] == met]
            if chosen:
                ax.scatter([p[0] for p in chosen], [p[1] for p in chosen], color=color, marker=marker, s=50,
                           zorder=3, label=label)
        for rate, value, _, index in points:  # the search order, next to each point
            ax.annotate(str(index), (rate, value), textcoords="offset points", xytext=(5, 4), fontsize=7,
                        color="0.35")
        for slo in settings.get("slos", []):
            if slo["metric"] == metric and int(slo["percentile"]) == pct:
                ax.axhline(ms(slo["limit_s"]), color=SLO_COLOR, linestyle="--", linewidth=1.5, label=slo_label(slo))
        if cap["found"]:
            ax.axvline(cap["sustainable_rate"], color=CAPACITY_COLOR, linewidth=1.5,
                       label=f"sustainable {cap['sustainable_rate']:.2f} req/s")
        if cap.get("first_bad_rate") is not None:
            ax.axvline(cap["first_bad_rate"], color=VIOLATED, linestyle=":", linewidth=1.2,
                       label=f"first violating {cap['first_bad_rate']:.2f} req/s")
        ax.set_ylabel(f"{metric.upper()} {key} (ms)")
        ax.set_ylim(0, ax.get_ylim()[1] * 1.12)  # room for the step numbers above the top point
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel("offered request rate (req/s)")
    # One legend for the figure: the markers and rate lines repeat in every panel.
    handles = {}
    for ax in axes[:, 0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    rows = (len(handles) + 2) // 3
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=3, fontsize=8, frameon=False)
    if cap["found"]:
        outcome = f"sustainable {cap['sustainable_rate']:.2f} req/s"
        if cap.get("first_bad_rate") is not None:
            outcome += f" (first violating {cap['first_bad_rate']:.2f} req/s)"
    else:
        outcome = "no rate met the SLOs"
    slos = ", ".join(slo_label(s)[4:] for s in settings.get("slos", []))
    fig.suptitle(f"Capacity search: {source_of(settings)}\n{outcome} within {slos}; {cap['stop_reason']}",
                 fontsize=10)
    fig.tight_layout(rect=(0, (0.25 * rows + 0.1) / fig.get_figheight(), 1, 1))
    return fig


def plot_run(plt, report):
    settings, summary = report["settings"], report["summary"]
    names = ("mean", "p50", "p90", "p95", "p99", "p99.9", "max")
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    for ax, metric in zip(axes.flat, METRICS):
        d = summary[metric]
        ax.set_title(f"{metric.upper()} ({d['count']} samples)", fontsize=10)
        ax.set_ylabel(f"{metric.upper()} (ms)")
        ax.set_xlabel("statistic over the run")
        if d["count"] == 0:
            ax.text(0.5, 0.5, "no samples", ha="center", va="center", transform=ax.transAxes)
            continue
        values = [ms(d[n]) for n in names]
        bars = ax.bar(names, values, color=["0.55"] + [CAPACITY_COLOR] * 5 + ["0.3"])
        ax.bar_label(bars, labels=[fmt_ms(v) for v in values], fontsize=7, padding=2)
        for slo in settings.get("slos", []):
            if slo["metric"] == metric:
                ax.axhline(ms(slo["limit_s"]), color=SLO_COLOR, linestyle="--", linewidth=1.5, label=slo_label(slo))
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="best", fontsize=8)
        ax.set_ylim(0, max(ax.get_ylim()[1], max(values) * 1.15))
        ax.grid(True, axis="y", alpha=0.3)
    arrivals = settings.get("arrivals", {}).get("process", "")
    fig.suptitle(f"Load test: {source_of(settings)}" + (f", {arrivals}" if arrivals else "") +
                 f"\n{summary['succeeded']}/{summary['requests']} ok, {summary['request_rate']:.2f} req/s, "
                 f"{summary['output_tokens_per_s']:.1f} output tok/s, goodput {summary['goodput']:.2f} req/s",
                 fontsize=10)
    fig.tight_layout()
    return fig


def main(argv):
    if argv == ["--check"]:
        import_pyplot()
        return 0
    if len(argv) != 2 or not argv[1].endswith((".svg", ".png")):
        print(USAGE, file=sys.stderr)
        return 2
    report_path, out = argv
    try:
        with open(report_path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        print(f"plot_loadtest.py: cannot read the report {report_path}: {e}", file=sys.stderr)
        return 1
    plt = import_pyplot()
    try:
        fig = plot_capacity(plt, report) if "capacity" in report else plot_run(plt, report)
    except (KeyError, TypeError) as e:
        print(f"plot_loadtest.py: {report_path} is not a loadtest report (missing or mistyped {e})", file=sys.stderr)
        return 1
    try:
        fig.savefig(out, dpi=120, metadata={"Date": None} if out.endswith(".svg") else None)
    except OSError as e:
        print(f"plot_loadtest.py: cannot write {out}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
