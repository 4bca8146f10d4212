"""/metrics naming and the Grafana dashboard. Every metric a panel (or template
variable) of dashboards/deepbatch.json queries is one a running `deepbatch serve`
exports; by default only deepbatch: series appear; with --metrics-names both the
vllm: series appear too, labelled with model_name and carrying the same values as
their deepbatch: twins."""
import json
import os
import re
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
from e2e_main import check, parse_args, run_tests, run_tests_on_server  # noqa: E402

MODEL_NAME = "metrics-test"
# A generous SLA target turns the controller on, so its metrics (which the dashboard plots) are exported.
SERVER_ARGS = ["--max-num-seqs", "4", "--kv-cache-memory", "64M", "--no-batch-api", "--served-model-name", MODEL_NAME,
               "--sla-tpot-p99", "5"]
# Series vLLM's dashboards read that --metrics-names both must export.
VLLM_NAMES = ["vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
              "vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:num_preemptions_total",
              "vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total", "vllm:request_success_total",
              "vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds",
              "vllm:time_per_output_token_seconds", "vllm:e2e_request_latency_seconds",
              "vllm:request_queue_time_seconds", "vllm:request_prompt_tokens", "vllm:request_generation_tokens"]

# PromQL words that are not metric names.
PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless",
                "offset", "inf", "nan"}
LABEL_LIST = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
IDENTIFIER = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")


def metric_names_in(expr):
    """The metric names a PromQL expression selects: identifiers that are not functions, keywords,
    label lists (by/without/on/...), label matchers ({...}), range or subquery durations ([...]),
    strings or numbers."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', " ", expr)   # strings (e.g. in label_replace)
    text = re.sub(r"\{[^}]*\}", " ", text)            # label matchers
    text = re.sub(r"\[[^\]]*\]", " ", text)           # ranges, subqueries
    text = LABEL_LIST.sub(" ", text)
    names = set()
    for m in IDENTIFIER.finditer(text):
        word = m.group(0)
        if text[m.end():].lstrip().startswith("(") or word.lower() in PROMQL_WORDS:
            continue  # a function or aggregation, or a keyword
        if m.start() > 0 and (text[m.start() - 1].isdigit() or text[m.start() - 1] == "."):
            continue  # the exponent or unit of a number (1e3, 5m)
        names.add(word)
    return names


def dashboard_exprs(source_dir):
    """(where, expr) for every panel target and query variable of the dashboard."""
    with open(os.path.join(source_dir, "dashboards", "deepbatch.json")) as f:
        dash = json.load(f)
    out = []
    for panel in dash["panels"]:
        for target in panel.get("targets", []):
            out.append((f"panel '{panel['title']}' {target['refId']}", target["expr"]))
    for var in dash.get("templating", {}).get("list", []):
        if var.get("type") == "query":
            query = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
            inner = re.fullmatch(r"label_values\((.*),\s*\w+\)", query.strip())
            out.append((f"variable {var['name']}", inner.group(1) if inner else query))
    return out


def scrape(base):
    with urllib.request.urlopen(base + "/metrics", timeout=30) as r:
        return r.read().decode()


def families(text):
    """{name: type} from the # TYPE lines."""
    return dict(line.split()[2:4] for line in text.splitlines() if line.startswith("# TYPE "))


def exported_series(text):
    """Every name a query may use: each family's name, and a histogram's _bucket, _sum and _count."""
    names = set()
    for name, kind in families(text).items():
        names.add(name)
        if kind == "histogram":
            names.update({name + "_bucket", name + "_sum", name + "_count"})
    return names


def samples(text, prefix):
    """{(name without prefix, label text): value} of the sample lines whose name starts with prefix."""
    out = {}
    for line in text.splitlines():
        if line.startswith(prefix):
            head, _, value = line.rpartition(" ")
            name, brace, labels = head.partition("{")
            out[(name[len(prefix):], brace + labels)] = float(value)
    return out


def post(base, body):
    req = urllib.request.Request(base + "/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read().decode())


def send_requests(base):
    """Two completions, one streamed; returns the completion tokens of the unstreamed one."""
    body = {"model": MODEL_NAME, "prompt": "The capital of France is", "max_tokens": 6, "temperature": 0}
    usage = post(base, body)["usage"]
    req = urllib.request.Request(base + "/v1/completions", data=json.dumps({**body, "stream": True}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        r.read()
    return usage["completion_tokens"]


def test_the_extractor_handles_promql_shapes(_base):
    expr = ('histogram_quantile(0.99, sum by (le, model_name) (rate(a:x_bucket{model_name=~"$m",le!="1"}'
            '[$__rate_interval]))) / ignoring(code) sum without (pod) (increase(b_total[5m] offset 1h)) * 1e3 > bool c')
    got = metric_names_in(expr)
    check(got == {"a:x_bucket", "b_total", "c"}, f"names {got}")


def test_dashboard_queries_only_exported_metrics(base, source_dir):
    send_requests(base)
    text = scrape(base)
    exported = exported_series(text)
    with open(os.path.join(source_dir, "src", "server", "router_metrics.cpp")) as f:
        router_source = f.read()
    exprs = dashboard_exprs(source_dir)
    check(len(exprs) >= 14, f"the dashboard has its panels: {len(exprs)} queries")
    missing = []
    for where, expr in exprs:
        names = metric_names_in(expr)
        check(names, f"{where}: no metric in {expr!r}")
        for name in names:
            if name in exported:
                continue
            # MoE routing metrics appear only for MoE models (the test model is dense); they must be ones
            # the router registers (tests/integration/model/router_stats_test.cpp checks their values).
            if name.startswith("deepbatch:moe_") and f'"{name}"' in router_source:
                continue
            missing.append(f"{where}: {name}")
    check(not missing, "queried but not exported:\n" + "\n".join(missing))


def test_default_exports_only_deepbatch_names(base, _source_dir):
    text = scrape(base)
    names = families(text)
    check(names and all(n.startswith("deepbatch:") for n in names), f"names: {sorted(names)}")
    check("vllm:" not in text, "no vllm: series by default")


def test_both_exports_vllm_names_consistent_with_deepbatch(base):
    completion_tokens = send_requests(base)
    send_requests(base)
    text = scrape(base)
    names = families(text)
    for name in VLLM_NAMES:
        check(name in names, f"{name} is exported")
        twin = "deepbatch:" + name[len("vllm:"):]
        check(names[name] == names.get(twin), f"{name} is a {names[name]} like {twin} ({names.get(twin)})")
    theirs, ours = samples(text, "vllm:"), samples(text, "deepbatch:")
    for (name, labels), value in theirs.items():
        check(f'model_name="{MODEL_NAME}"' in labels, f"vllm:{name}{labels} has the model_name label")
        twin = ours.get((name, labels))
        check(twin == value, f"vllm:{name}{labels} {value} vs deepbatch:{name}{labels} {twin}")
    label = f'{{model_name="{MODEL_NAME}"}}'
    check(theirs[("request_prompt_tokens_count", label)] == 4, "four requests observed")
    check(theirs[("generation_tokens_total", label)] >= 2 * completion_tokens, f"tokens: {theirs}")
    finished = sum(v for (n, _), v in theirs.items() if n == "request_success_total")
    check(finished == 4, f"four finished samples, got {finished}")
    check(0 <= theirs[("kv_cache_usage_perc", label)] <= 1, "KV usage is a fraction")


SPEC_NAMES = ["spec_decode_num_drafts_total", "spec_decode_num_draft_tokens_total",
              "spec_decode_num_accepted_tokens_total", "spec_decode_num_accepted_tokens_per_pos_total"]


def completion_text(base, body, stream):
    req = urllib.request.Request(base + "/v1/completions", data=json.dumps({**body, "stream": stream}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        raw = r.read().decode()
    if not stream:
        return json.loads(raw)["choices"][0]["text"]
    chunks = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: {")]
    return "".join(c["choices"][0]["text"] for c in chunks if c["choices"])


def test_speculative_decoding_metrics(base):
    """With --speculative ngram: streamed and unstreamed text agree, and the spec_decode counters appear under
    both names with the proposer label, per position too, and add up."""
    story = ("The river bends twice before it reaches the old mill, where the water slows and turns green. "
             "Farmers bring their grain there every autumn, and the miller counts each sack by hand. ")
    body = {"model": MODEL_NAME, "prompt": story + story + "The river", "max_tokens": 48, "temperature": 0}
    plain = completion_text(base, body, False)
    streamed = completion_text(base, body, True)
    check(plain == streamed, f"streamed {streamed!r} vs {plain!r}")
    text = scrape(base)
    theirs, ours = samples(text, "vllm:"), samples(text, "deepbatch:")
    label = f'{{model_name="{MODEL_NAME}",proposer="ngram"}}'
    for name in SPEC_NAMES[:3]:
        check((name, label) in theirs and theirs[(name, label)] == ours.get((name, label)),
              f"vllm:{name}{label} and its deepbatch: twin")
    drafts, draft_tokens = theirs[(SPEC_NAMES[0], label)], theirs[(SPEC_NAMES[1], label)]
    accepted = theirs[(SPEC_NAMES[2], label)]
    check(drafts > 0 and 0 < accepted < draft_tokens, f"drafts {drafts}, draft tokens {draft_tokens}, "
                                                      f"accepted {accepted}")
    per_pos = {labels: v for (n, labels), v in theirs.items() if n == SPEC_NAMES[3]}
    check(len(per_pos) == 5 and sum(per_pos.values()) == accepted, f"per position: {per_pos}")
    emitted = ours[("spec_decode_num_emitted_tokens_total", label)]
    check(emitted == accepted + drafts, f"emitted {emitted}")
    rate = ours[("spec_decode_acceptance_rate", label)]
    check(abs(rate - accepted / draft_tokens) < 1e-9, f"acceptance rate {rate}")


def main():
    args = parse_args()
    code = run_tests([test_the_extractor_handles_promql_shapes], None)
    default_tests = [test_dashboard_queries_only_exported_metrics, test_default_exports_only_deepbatch_names]
    code |= run_tests_on_server(args, SERVER_ARGS, default_tests, test_args=lambda base: (base, args.source_dir))
    code |= run_tests_on_server(args, SERVER_ARGS + ["--metrics-names", "both"],
                                [test_both_exports_vllm_names_consistent_with_deepbatch])
    code |= run_tests_on_server(args, SERVER_ARGS + ["--metrics-names", "both", "--speculative", "ngram",
                                                     "--speculative-adaptive", "off", "--ngram-min", "1"],
                                [test_speculative_decoding_metrics])
    return code


if __name__ == "__main__":
    sys.exit(main())
