"""deepbatch serve driven by the official openai client (and curl for raw SSE):
completions, chat, streaming, n > 1, logprobs, echo, seeds, stop strings, models,
authentication and errors raised as the client's own exception types."""
import json
import os
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
import openai  # noqa: E402
from e2e_main import check, expect_raises, metric_value, parse_args, run_tests_on_server  # noqa: E402

KEY = "sk-e2e-test"
MODEL = "tiny"
PROMPT = "The three primary colors are"
CHAT = [{"role": "user", "content": "Write one sentence about the sea."}]


def token_ids(base):
    """Decoded text -> id for the default model's byte-level vocabulary (read with the gguf package)."""
    from gguf import GGUFReader
    field = GGUFReader(os.path.join(ARGS.source_dir, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")).fields[
        "tokenizer.ggml.tokens"]
    texts = [bytes(field.parts[i]).decode("utf-8", "replace") for i in field.data]
    return {t.replace("\u0120", " ").replace("\u010a", "\n"): i for i, t in enumerate(texts)}


def test_models(client, base):
    models = client.models.list()
    check([m.id for m in models.data] == [MODEL], f"models: {models}")
    check(client.models.retrieve(MODEL).id == MODEL, "retrieve")
    expect_raises(openai.NotFoundError, client.models.retrieve, "no-such-model")


def test_completion(client, base):
    r = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=8, temperature=0)
    check(r.object == "text_completion" and r.model == MODEL, f"envelope: {r}")
    check(len(r.choices) == 1 and r.choices[0].text and r.choices[0].finish_reason == "length", f"choice: {r}")
    check(r.usage.completion_tokens == 8 and r.usage.total_tokens == r.usage.prompt_tokens + 8, f"usage {r.usage}")


def test_chat(client, base):
    r = client.chat.completions.create(model=MODEL, messages=CHAT, max_tokens=10, temperature=0, user="u-1",
                                       extra_body={"priority": 0})
    m = r.choices[0].message
    check(r.object == "chat.completion" and m.role == "assistant" and m.content, f"chat: {r}")
    check(r.choices[0].finish_reason in ("stop", "length"), f"finish {r.choices[0].finish_reason}")
    # Fields the server does not read are refused, naming the field.
    e = expect_raises(openai.BadRequestError, client.chat.completions.create, model=MODEL, messages=CHAT, max_tokens=2,
                      extra_body={"no_such_field": {"x": 1}})
    check(e.body.get("param") == "no_such_field", f"unknown field: {e.body}")
    # The default model's template shows no tool-call format: tool_choice auto is refused.
    e = expect_raises(openai.BadRequestError, client.chat.completions.create, model=MODEL, messages=CHAT, max_tokens=2,
                      tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}])
    check(e.body.get("param") == "tool_choice", f"tool_choice auto without a format: {e.body}")
    # The default model has no fill-in-the-middle tokens.
    e = expect_raises(openai.BadRequestError, client.completions.create, model=MODEL, prompt=PROMPT, max_tokens=2,
                      suffix=" end.")
    check(e.body.get("param") == "suffix", f"suffix without FIM tokens: {e.body}")
    # logit_bias: the greedy first token banned, the runner-up comes first; a +100 bias forces a token.
    top = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=1, temperature=0, logprobs=2)
    first, second = sorted(top.choices[0].logprobs.top_logprobs[0].items(), key=lambda kv: -kv[1])[:2]
    ids = token_ids(base)
    banned = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=1, temperature=0,
                                       logit_bias={str(ids[first[0]]): -100})
    check(banned.choices[0].text == second[0], f"banned {first[0]!r}: got {banned.choices[0].text!r}, "
                                               f"want the runner-up {second[0]!r}")
    forced = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=3, temperature=1.0, seed=1,
                                       logit_bias={str(ids[second[0]]): 100})
    check(forced.choices[0].text == second[0] * 3, f"forced {second[0]!r}: {forced.choices[0].text!r}")
    e = expect_raises(openai.BadRequestError, client.chat.completions.create, model=MODEL, messages=CHAT, max_tokens=2,
                      logit_bias={"99999999": 1})
    check(e.body.get("param") == "logit_bias", f"id outside the vocabulary: {e.body}")


def test_stream_matches_non_stream(client, base):
    plain = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=16, temperature=0)
    text, finish = "", None
    for chunk in client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=16, temperature=0, stream=True):
        for c in chunk.choices:
            text += c.text
            finish = c.finish_reason or finish
    check(text == plain.choices[0].text, f"completion stream {text!r} != {plain.choices[0].text!r}")
    check(finish == plain.choices[0].finish_reason, "completion finish")

    plain = client.chat.completions.create(model=MODEL, messages=CHAT, max_tokens=16, temperature=0)
    stream = client.chat.completions.create(model=MODEL, messages=CHAT, max_tokens=16, temperature=0, stream=True,
                                            stream_options={"include_usage": True})
    text, roles, usage = "", [], None
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for c in chunk.choices:
            roles += [c.delta.role] if c.delta.role else []
            text += c.delta.content or ""
    check(roles == ["assistant"], f"roles {roles}")
    check(text == plain.choices[0].message.content, f"chat stream {text!r} != {plain.choices[0].message.content!r}")
    check(usage is not None and usage.completion_tokens == plain.usage.completion_tokens, f"usage {usage}")


def test_best_of(client, base):
    # best_of=3 draws the same three samples as n=3 with the same seed (streams 0..2) and
    # returns the one with the highest cumulative logprob; usage counts all three.
    three = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=8, n=3, temperature=1.0, seed=5,
                                      logprobs=0)
    scores = {c.text: sum(c.logprobs.token_logprobs) for c in three.choices}
    best = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=8, best_of=3, temperature=1.0, seed=5)
    check(len(best.choices) == 1 and best.choices[0].index == 0, f"choices {best.choices}")
    check(best.choices[0].text == max(scores, key=scores.get), f"best {best.choices[0].text!r} of {scores}")
    check(best.choices[0].logprobs is None, "no logprobs unless asked for")
    check(best.usage.completion_tokens == three.usage.completion_tokens, f"usage {best.usage} vs {three.usage}")
    e = expect_raises(openai.BadRequestError, client.completions.create, model=MODEL, prompt=PROMPT, max_tokens=2,
                      best_of=2, stream=True)
    check(e.body.get("param") == "best_of", f"best_of with stream: {e.body}")


def test_n_samples(client, base):
    r = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=6, n=3, temperature=1.0, seed=7)
    check(sorted(c.index for c in r.choices) == [0, 1, 2], f"indices {r.choices}")
    check(r.usage.completion_tokens == 18, f"usage {r.usage}")
    texts = {0: "", 1: ""}
    for chunk in client.chat.completions.create(model=MODEL, messages=CHAT, max_tokens=6, n=2, temperature=0,
                                                stream=True):
        for c in chunk.choices:
            texts[c.index] += c.delta.content or ""
    check(texts[0] and texts[0] == texts[1], f"greedy samples differ: {texts}")


def test_logprobs(client, base):
    r = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=5, temperature=0, logprobs=2)
    lp = r.choices[0].logprobs
    check(len(lp.tokens) == 5 and len(lp.token_logprobs) == 5 and len(lp.top_logprobs) == 5, f"logprobs {lp}")
    check(all(len(t) >= 1 for t in lp.top_logprobs) and all(v <= 0 for v in lp.token_logprobs), f"values {lp}")
    check("".join(lp.tokens) == r.choices[0].text, "tokens join to the text")
    r = client.chat.completions.create(model=MODEL, messages=CHAT, max_tokens=5, temperature=0, logprobs=True,
                                       top_logprobs=3)
    content = r.choices[0].logprobs.content
    check(len(content) == 5 and all(len(e.top_logprobs) == 3 for e in content), f"chat logprobs {content}")
    streamed = []
    for chunk in client.chat.completions.create(model=MODEL, messages=CHAT, max_tokens=5, temperature=0,
                                                logprobs=True, top_logprobs=3, stream=True):
        for c in chunk.choices:
            if c.logprobs and c.logprobs.content:
                streamed += c.logprobs.content
    check([e.token for e in streamed] == [e.token for e in content], "streamed chat logprobs tokens")
    check(all(abs(a.logprob - b.logprob) < 1e-4 for a, b in zip(streamed, content)), "streamed chat logprob values")
    offsets = []
    for chunk in client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=5, temperature=0, logprobs=1,
                                           stream=True):
        for c in chunk.choices:
            if c.logprobs:
                offsets += c.logprobs.text_offset
    check(offsets == lp.text_offset, f"streamed text offsets {offsets} != {lp.text_offset}")


def test_echo(client, base):
    r = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=4, temperature=0, echo=True)
    check(r.choices[0].text.startswith(PROMPT) and len(r.choices[0].text) > len(PROMPT), f"echo {r.choices[0].text!r}")


def test_echo_logprobs(client, base):
    """echo with logprobs scores the prompt: every prompt token after the first has the raw logprob
    the model gives it after the tokens before it, across the cuts of a chunked prefill, the same
    when the prompt is sent again (no prefix-cache hit skips it), and the same streamed."""
    ids = token_ids(base)
    words = [ids[w] for w in (" the", " cat", " sat", " on", " mat", ".", " It", " was", " happy")]
    prompt = [ids["The"]] + [words[(i * 7) % len(words)] for i in range(2299)]  # > 2048: a cut prefill
    r = client.completions.create(model=MODEL, prompt=prompt, max_tokens=2, temperature=0, echo=True, logprobs=1)
    lp = r.choices[0].logprobs
    check(len(lp.tokens) == len(prompt) + 2, f"{len(lp.tokens)} scored tokens for {len(prompt)} + 2")
    check(lp.token_logprobs[0] is None and lp.top_logprobs[0] is None, "the first prompt token has no logprob")
    check(all(v is not None and v <= 0 for v in lp.token_logprobs[1:]), "every later token has a logprob")
    check(all(len(t) >= 1 for t in lp.top_logprobs[1:]), "top logprobs for every scored token")
    check(lp.text_offset[0] == 0 and lp.text_offset == sorted(lp.text_offset), f"offsets {lp.text_offset[:5]}")
    for k in (1, 2, 100, 2047, 2048, 2049, 2299):
        # The same logprob from a prompt of the first k tokens, the k-th forced (logprobs stay raw).
        f = client.completions.create(model=MODEL, prompt=prompt[:k], max_tokens=1, temperature=0, logprobs=0,
                                      logit_bias={str(prompt[k]): 100})
        want = f.choices[0].logprobs.token_logprobs[0]
        check(lp.token_logprobs[k] == want,  # batch-invariant kernels: the same bits
              f"prompt token {k}: scored {lp.token_logprobs[k]}, alone {want}")
    again = client.completions.create(model=MODEL, prompt=prompt, max_tokens=2, temperature=0, echo=True, logprobs=1)
    check(again.choices[0].logprobs.token_logprobs == lp.token_logprobs, "the same prompt scores the same again")
    scored = []
    for chunk in client.completions.create(model=MODEL, prompt=prompt[:50], max_tokens=2, temperature=0, echo=True,
                                           logprobs=1, n=2, stream=True):
        for ch in chunk.choices:
            if ch.logprobs and ch.index == 1:
                scored += ch.logprobs.token_logprobs
    check(len(scored) == 52 and scored[:50] == lp.token_logprobs[:50], f"streamed: {scored[:50]}")


def test_seed(client, base):
    def sample(seed):
        return client.completions.create(model=MODEL, prompt="Once upon a time", max_tokens=12, temperature=1.0,
                                         seed=seed).choices[0].text
    a, b = sample(1234), sample(1234)
    check(a == b, f"same seed, different text: {a!r} vs {b!r}")
    others = {sample(s) for s in (1, 2, 3)}
    check(len(others | {a}) > 1, "different seeds all gave the same text")


def test_stop(client, base):
    full = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=16, temperature=0).choices[0].text
    words = full.split()
    check(len(words) >= 3, f"too short to pick a stop word: {full!r}")
    stop = " " + words[2]
    r = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=16, temperature=0, stop=[stop, "@@@"])
    c = r.choices[0]
    check(c.finish_reason == "stop" and c.text == full[: full.index(stop)], f"stop {stop!r}: {c.text!r} / {full!r}")
    text = ""
    for chunk in client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=16, temperature=0, stop=stop,
                                           stream=True):
        text += "".join(ch.text for ch in chunk.choices)
    check(text == c.text, f"streamed stop {text!r}")


def test_errors(client, base):
    e = expect_raises(openai.BadRequestError, client.completions.create, model=MODEL, prompt=PROMPT,
                      max_tokens="many")
    check(e.body and e.body.get("param") == "max_tokens", f"param of {e.body}")
    expect_raises(openai.BadRequestError, client.completions.create, model=MODEL, prompt=PROMPT, temperature=-1)
    expect_raises(openai.BadRequestError, client.chat.completions.create, model=MODEL, messages="hello")
    e = expect_raises(openai.BadRequestError, client.completions.create, model=MODEL, prompt="word " * 9000,
                      max_tokens=4)
    check(e.code == "context_length_exceeded", f"code {e.code}")
    expect_raises(openai.BadRequestError, client.completions.create, model=MODEL, prompt=PROMPT, max_tokens=10 ** 9)
    expect_raises(openai.NotFoundError, client.completions.create, model="no-such-model", prompt=PROMPT)
    bad = openai.OpenAI(base_url=base + "/v1", api_key="wrong", max_retries=0)
    expect_raises(openai.AuthenticationError, bad.completions.create, model=MODEL, prompt=PROMPT)
    expect_raises(openai.AuthenticationError, bad.models.list)
    expect_raises(openai.NotFoundError, client.get, "/no/such/route", cast_to=object)


def test_raw_sse_with_curl(client, base):
    body = json.dumps({"model": MODEL, "prompt": PROMPT, "max_tokens": 5, "temperature": 0, "stream": True})
    out = subprocess.run(["curl", "-sS", "-N", "-i", "--max-time", "30", "-H", f"Authorization: Bearer {KEY}",
                          "-H", "Content-Type: application/json", "-d", body, base + "/v1/completions"],
                         capture_output=True, check=True).stdout.decode()
    head, _, payload = out.partition("\r\n\r\n")
    check(head.startswith("HTTP/1.1 200") and "text/event-stream" in head.lower(), f"head {head}")
    check(payload.endswith("data: [DONE]\n\n"), f"tail {payload[-60:]!r}")
    events = payload.split("\n\n")[:-1]
    check(all(ev.startswith("data: ") for ev in events), f"framing {events}")
    for ev in events[:-1]:
        json.loads(ev[len("data: "):])


def test_health_and_metrics_open(client, base):
    with urllib.request.urlopen(base + "/health", timeout=10) as r:
        check(r.status == 200, "health")
    with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
        check("version=0.0.4" in r.headers.get("Content-Type", ""), "metrics content type")
        text = r.read().decode()
    for name in ("deepbatch:time_to_first_token_seconds_bucket", "deepbatch:inter_token_latency_seconds_count",
                 "deepbatch:e2e_request_latency_seconds_sum", "deepbatch:request_queue_time_seconds_count",
                 "deepbatch:kv_cache_usage_perc", "deepbatch:num_requests_running",
                 "deepbatch:prefix_cache_hits_total", "deepbatch:time_per_output_token_seconds_count"):
        check(name in text, f"{name} missing from /metrics")
    check(metric_value(text, "deepbatch:request_success_total", {"finished_reason": "length"}) > 0, "successes")
    check(metric_value(text, "deepbatch:generation_tokens_total") > 0, "generation tokens")
    check(metric_value(text, "deepbatch:http_requests_total", {"code": "401"}) >= 1, "401 counted")
    check(metric_value(text, "deepbatch:prefix_cache_hits_total") > 0, "repeated prompts hit the prefix cache")


ARGS = None


# Run time (one of the suite's slowest, tests/README.md): one server; the time is the
# many short generations that cover each endpoint and option through the official client.
def main():
    global ARGS
    ARGS = parse_args()
    return run_tests_on_server(
        ARGS,
        ["--api-key", KEY, "--served-model-name", MODEL, "--kv-cache-memory", "64M", "--max-num-seqs", "16", "-t", "2"],
        [test_models, test_completion, test_chat, test_stream_matches_non_stream, test_n_samples, test_best_of,
         test_logprobs,
         test_echo, test_echo_logprobs, test_seed, test_stop, test_errors, test_raw_sse_with_curl, test_health_and_metrics_open],
        lambda base: (openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0, timeout=60), base))


if __name__ == "__main__":
    sys.exit(main())
