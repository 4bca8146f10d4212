"""`deepbatch generate --chat`, `deepbatch run` and `deepbatch bench` end to end on
test-sized random-weight deepseek2 GGUFs (V2 and V3 forms) with DeepSeek-V3's tokenizer
and chat template: exit codes, token counts, finish reasons, the latent KV pool summary,
the chat template applied (a chat turn gives the same tokens and greedy text as its
rendering sent as a plain prompt) and the same greedy text for the same request."""
import json
import re
import sys

import deepseek_models as m
from e2e_main import run_tests

STATS = re.compile(r"(\d+) request\(s\): prompt (\d+) tokens in .*?, (\d+) cached, generated (\d+) tokens")


def generate(args, model, *extra):
    """`deepbatch generate` greedy, EOS ignored; returns (stdout, stderr, prompt tokens, generated tokens)."""
    r = m.deepbatch(args, "generate", "-m", model, *m.ENGINE_ARGS, "--ignore-eos", *extra)
    s = STATS.search(r.stderr)
    m.check(s, f"no statistics line in:\n{r.stderr}")
    return r.stdout, r.stderr, int(s.group(2)), int(s.group(4))


def test_generate_chat(args, model, scratch):
    _, _, plain_prompt, _ = generate(args, model, "-n", "4", "-p", "Hello there")
    out, err, prompt, generated = generate(args, model, "-n", "12", "--chat", "-p", "Hello there")
    m.check_kv_summary(err)
    text = out.removesuffix("\n")
    m.check(text and out.endswith("\n"), f"chat output {out!r}")
    # The template adds <｜User｜> and <｜Assistant｜>, one token each (the BOS is in both).
    m.check(prompt == plain_prompt + 2, f"chat prompt {prompt} tokens, plain {plain_prompt}")
    m.check(generated == 12, f"generated {generated}")
    # The rendered turn as a plain prompt: the same tokens, so the same greedy text.
    raw = m.chat_as_text("Hello there")
    out2, _, prompt2, _ = generate(args, model, "-n", "12", "-p", raw)
    m.check(prompt2 == prompt, f"rendered prompt {prompt2} tokens, chat {prompt}")
    m.check(out2 == raw + out, f"rendered prompt gave {out2!r}, chat {out!r}")
    again, _, _, _ = generate(args, model, "-n", "12", "--chat", "-p", "Hello there")
    m.check(again == out, f"second greedy run {again!r} != {out!r}")
    # A system message goes right after the BOS, before the first user turn.
    out3, _, prompt3, _ = generate(args, model, "-n", "6", "--chat", "--system", "Answer briefly.", "-p", "Hi")
    out4, _, prompt4, _ = generate(args, model, "-n", "6", "-p", m.chat_as_text("Hi", system="Answer briefly."))
    m.check(prompt3 == prompt4 and out4 == m.chat_as_text("Hi", system="Answer briefly.") + out3,
            f"with a system message: chat {prompt3} tokens {out3!r}, rendered {prompt4} tokens {out4!r}")


def test_generate_several_prompts(args, model, scratch):
    prompts = ["Hello there", "Name a color.", "x y z"]
    out, err, _, generated = generate(args, model, "-n", "8", "--chat", *[a for p in prompts for a in ("-p", p)])
    m.check(generated == 24, f"generated {generated}")
    parts = re.findall(r"=== \[(\d)\] (.*?)\n(.*?)\n--- finish_reason: (\w+)\n", out, re.DOTALL)  # text may hold \n
    m.check([(int(i), p, f) for i, p, _, f in parts] == [(i, p, "length") for i, p in enumerate(prompts)],
            f"output {out!r}")
    alone, _, _, _ = generate(args, model, "-n", "8", "--chat", "-p", prompts[0])
    m.check(parts[0][2] + "\n" == alone, f"batched {parts[0][2]!r}, alone {alone!r}")


def batch_line(custom_id, url, body):
    return json.dumps({"custom_id": custom_id, "method": "POST", "url": url, "body": body})


def test_run_batch(args, model, scratch):
    chat = [{"role": "user", "content": "Name a color."}]
    lines = [
        batch_line("c-plain", "/v1/completions",
                   {"prompt": "The capital of France is", "max_tokens": 8, "temperature": 0}),
        batch_line("c-same-1", "/v1/completions", {"prompt": "Once upon a time", "max_tokens": 10, "temperature": 0}),
        batch_line("c-same-2", "/v1/completions", {"prompt": "Once upon a time", "max_tokens": 10, "temperature": 0}),
        batch_line("c-rendered", "/v1/completions",
                   {"prompt": m.chat_as_text("Name a color."), "max_tokens": 8, "temperature": 0}),
        batch_line("chat-1", "/v1/chat/completions", {"messages": chat, "max_tokens": 8, "temperature": 0}),
        batch_line("chat-n2", "/v1/chat/completions",
                   {"messages": chat, "max_tokens": 6, "n": 2, "temperature": 0.8, "seed": 7}),
        batch_line("bad-type", "/v1/completions", {"prompt": "x", "temperature": "hot"}),
    ]
    src, dst = scratch.path(m.stem(model) + "-in.jsonl"), scratch.path(m.stem(model) + "-out.jsonl")
    with open(src, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    r = m.deepbatch(args, "run", "-m", model, *m.ENGINE_ARGS, "-i", src, "-o", dst, "--model-name", "ds-mini")
    m.check_kv_summary(r.stderr)
    m.check("done: 7 input lines: 6 ok, 1 failed, 0 skipped" in r.stderr, f"summary:\n{r.stderr}")
    with open(dst, encoding="utf-8") as f:
        records = {rec["custom_id"]: rec for rec in map(json.loads, f)}
    m.check(sorted(records) == sorted(json.loads(ln)["custom_id"] for ln in lines), f"records {sorted(records)}")
    m.check(records["bad-type"]["response"] is None and records["bad-type"]["error"]["code"] == "invalid_type",
            f"bad line: {records['bad-type']}")
    bodies = {}
    for cid, rec in records.items():
        if cid == "bad-type":
            continue
        m.check(rec["error"] is None and rec["response"]["status_code"] == 200, f"{cid}: {rec}")
        bodies[cid] = rec["response"]["body"]
        m.check(bodies[cid]["model"] == "ds-mini", f"{cid} model {bodies[cid]['model']}")
    for cid, max_tokens, n in (("c-plain", 8, 1), ("c-same-1", 10, 1), ("c-same-2", 10, 1), ("c-rendered", 8, 1),
                               ("chat-1", 8, 1), ("chat-n2", 6, 2)):
        m.check_choices(bodies[cid], max_tokens, n)
    text = lambda cid: bodies[cid]["choices"][0]["text"]  # noqa: E731
    m.check(text("c-plain") and text("c-same-1") == text("c-same-2"),
            f"greedy twice: {text('c-same-1')!r} vs {text('c-same-2')!r}")
    reply = bodies["chat-1"]["choices"][0]["message"]
    m.check(reply["role"] == "assistant" and reply["content"] == text("c-rendered"),
            f"chat {reply} vs the rendered prompt's {text('c-rendered')!r}")
    m.check(bodies["chat-1"]["usage"]["prompt_tokens"] == bodies["c-rendered"]["usage"]["prompt_tokens"],
            f"chat usage {bodies['chat-1']['usage']}, rendered {bodies['c-rendered']['usage']}")
    # A rerun finds every line done.
    r = m.deepbatch(args, "run", "-m", model, *m.ENGINE_ARGS, "-i", src, "-o", dst, "--no-progress")
    m.check("done: 7 input lines: 0 ok, 0 failed, 7 skipped" in r.stderr, f"rerun summary:\n{r.stderr}")


def test_bench(args, model, scratch):
    report = scratch.path(m.stem(model) + "-bench.json")
    r = m.deepbatch(args, "bench", "-m", model, *m.ENGINE_ARGS, "--num-requests", "6", "--input-len", "16",
                    "--output-len", "8", "--batch-sizes", "1,4", "--output-json", report)
    # The throughput and latency tables, the MoE router summary, then the KV pool (one row per run each).
    tables, _, rest = r.stdout.partition("MoE router")
    router, _, pool = rest.partition("KV blocks")
    def run_rows(text):
        return [ln.split()[0] for ln in text.splitlines() if re.match(r"\s+\d+ mixed ", ln)]
    m.check(run_rows(tables) == ["1", "4", "1", "4"], f"tables:\n{r.stdout}")
    m.check(run_rows(router) == ["1", "4"], f"router summary:\n{r.stdout}")
    m.check(run_rows(pool) == ["1", "4"], f"KV pool table:\n{r.stdout}")
    with open(report, encoding="utf-8") as f:
        j = json.load(f)
    m.check(j["settings"]["batch_sizes"] == [1, 4] and j["workload"]["num_requests"] == 6, f"settings {j['settings']}")
    runs = j["runs"]
    m.check([run["max_num_seqs"] for run in runs] == [1, 4], f"runs {runs}")
    for run in runs:
        m.check(run["requests"] == 6 and run["failed_requests"] == 0, f"requests {run}")
        m.check(run["prompt_tokens"] == 96 and run["generated_tokens"] == 48, f"tokens {run}")
        m.check(run["computed_prompt_tokens"] + run["cached_prompt_tokens"] == 96, f"prompt split {run}")
        m.check(run["ttft_seconds"]["count"] == 6 and run["wall_seconds"] > 0, f"latencies {run}")
        m.check(0 < run["peak_kv_usage"] <= 1, f"KV usage {run}")
    # One sequence at a time: a prompt step that samples the first token, then 7 decode steps each.
    m.check(runs[0]["steps"] == 48 and runs[1]["steps"] < 48, f"steps {[run['steps'] for run in runs]}")


def main():
    args = m.parse_args()
    tests = [test_generate_chat, test_generate_several_prompts, test_run_batch, test_bench]
    code = 0
    with m.Scratch(args, "deepseek_cli") as scratch:
        for shape in m.MODELS:
            print(f"--- {shape}", flush=True)
            code |= run_tests(tests, args, scratch.write_model(shape), scratch)
    return code


if __name__ == "__main__":
    sys.exit(main())
