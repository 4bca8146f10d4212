"""`deepbatch serve` end to end on test-sized random-weight deepseek2 GGUFs (V2 and V3
forms) with DeepSeek-V3's tokenizer and chat template, over plain HTTP (urllib):
/v1/models, /v1/completions and /v1/chat/completions, streaming (SSE) and not. Checks
structure: token counts, finish reasons, the latent KV pool summary printed at start,
the chat template applied (a chat turn gives the same tokens and greedy text as its
rendering sent as a completion prompt), the same text for the same greedy or seeded
request, a stream that adds up to the non-streamed response, `suffix` joined to the
prompt by DeepSeek's fill-in-the-middle tokens, and tools in DeepSeek's
format: a conversation carrying calls and tool results renders as the template
writes it, and calls written with DeepSeek's tool-call tokens (the random model's
output steered with guided_regex) come back as tool_calls, whole and streamed."""
import json
import sys
import urllib.request

import deepseek_models as m
import server_fixture
from e2e_main import run_tests

MODEL = "ds-mini"
SERVER_ARGS = [*m.ENGINE_ARGS, "--served-model-name", MODEL, "--max-num-seqs", "8", "--no-batch-api"]
PROMPT = "The capital of France is"
CHAT = [{"role": "user", "content": "Name a color."}]


def request(base, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, headers={"Content-Type": "application/json"})
    return urllib.request.urlopen(req, timeout=60)


def post(base, path, body):
    with request(base, path, body) as r:
        m.check(r.status == 200 and r.headers.get("Content-Type", "").startswith("application/json"),
                f"{path}: {r.status} {r.headers.get('Content-Type')}")
        return json.load(r)


def post_stream(base, path, body):
    """The JSON chunks of a streamed response; checks the SSE framing and the closing [DONE]."""
    with request(base, path, dict(body, stream=True)) as r:
        m.check(r.status == 200 and "text/event-stream" in r.headers.get("Content-Type", ""),
                f"{path}: {r.status} {r.headers.get('Content-Type')}")
        payload = r.read().decode()
    m.check(payload.endswith("data: [DONE]\n\n"), f"stream tail {payload[-80:]!r}")
    events = payload.split("\n\n")[:-2]
    m.check(events and all(ev.startswith("data: ") for ev in events), f"framing {payload[:400]!r}")
    return [json.loads(ev[len("data: "):]) for ev in events]


def test_models(base, proc):
    with request(base, "/v1/models") as r:
        ids = [d["id"] for d in json.load(r)["data"]]
    m.check(ids == [MODEL], f"models {ids}")
    m.check_kv_summary("\n".join(proc.stdout_lines))


def test_completion(base, proc):
    body = {"model": MODEL, "prompt": PROMPT, "max_tokens": 8, "temperature": 0}
    r = post(base, "/v1/completions", body)
    m.check(r["object"] == "text_completion" and r["model"] == MODEL, f"envelope {r}")
    m.check_choices(r, 8)
    m.check(r["choices"][0]["text"], f"empty text: {r}")
    again = post(base, "/v1/completions", body)
    m.check(again["choices"][0]["text"] == r["choices"][0]["text"], f"greedy twice: {again} vs {r}")

    chunks = post_stream(base, "/v1/completions", dict(body, stream_options={"include_usage": True}))
    text = "".join(c["text"] for ch in chunks for c in ch["choices"])
    finish = [c["finish_reason"] for ch in chunks for c in ch["choices"] if c.get("finish_reason")]
    usage = [ch["usage"] for ch in chunks if ch.get("usage")]
    m.check(text == r["choices"][0]["text"], f"stream {text!r} != {r['choices'][0]['text']!r}")
    m.check(finish == [r["choices"][0]["finish_reason"]], f"stream finish {finish}")
    m.check(usage == [r["usage"]], f"stream usage {usage} vs {r['usage']}")


def test_chat_applies_the_template(base, proc):
    r = post(base, "/v1/chat/completions", {"model": MODEL, "messages": CHAT, "max_tokens": 8, "temperature": 0})
    m.check(r["object"] == "chat.completion" and r["model"] == MODEL, f"envelope {r}")
    m.check_choices(r, 8)
    reply = r["choices"][0]["message"]
    m.check(reply["role"] == "assistant" and reply["content"], f"reply {reply}")
    rendered = post(base, "/v1/completions",
                    {"model": MODEL, "prompt": m.chat_as_text(CHAT[0]["content"]), "max_tokens": 8, "temperature": 0})
    m.check(rendered["usage"] == r["usage"] and rendered["choices"][0]["text"] == reply["content"],
            f"chat {r} vs the rendered prompt's {rendered}")
    plain = post(base, "/v1/completions", {"model": MODEL, "prompt": CHAT[0]["content"], "max_tokens": 1})
    m.check(r["usage"]["prompt_tokens"] == plain["usage"]["prompt_tokens"] + 2,
            f"chat prompt {r['usage']} vs the bare content's {plain['usage']}: <｜User｜>, <｜Assistant｜>")


def test_chat_stream(base, proc):
    body = {"model": MODEL, "messages": CHAT, "max_tokens": 12, "temperature": 0}
    r = post(base, "/v1/chat/completions", body)
    chunks = post_stream(base, "/v1/chat/completions", dict(body, stream_options={"include_usage": True}))
    m.check(all(ch["object"] == "chat.completion.chunk" for ch in chunks), f"chunks {chunks[:2]}")
    deltas = [c["delta"] for ch in chunks for c in ch["choices"]]
    roles = [d["role"] for d in deltas if d.get("role")]
    text = "".join(d.get("content") or "" for d in deltas)
    finish = [c["finish_reason"] for ch in chunks for c in ch["choices"] if c.get("finish_reason")]
    usage = [ch["usage"] for ch in chunks if ch.get("usage")]
    m.check(roles == ["assistant"], f"roles {roles}")
    m.check(text == r["choices"][0]["message"]["content"], f"stream {text!r} vs {r['choices'][0]['message']!r}")
    m.check(finish == [r["choices"][0]["finish_reason"]] and usage == [r["usage"]], f"finish {finish}, usage {usage}")


def test_seeded_samples(base, proc):
    body = {"model": MODEL, "messages": CHAT, "max_tokens": 6, "n": 2, "temperature": 0.9, "seed": 11}
    r = post(base, "/v1/chat/completions", body)
    m.check_choices(r, 6, n=2)
    again = post(base, "/v1/chat/completions", body)
    texts = lambda x: [c["message"]["content"] for c in sorted(x["choices"], key=lambda c: c["index"])]  # noqa: E731
    m.check(texts(again) == texts(r), f"seeded twice: {texts(again)} vs {texts(r)}")


TOOLS = [{"type": "function", "function": {"name": "add", "parameters": {
    "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}}]
CALLS_OPEN, CALL_OPEN, SEP, CALL_CLOSE, CALLS_CLOSE = (
    "<\uff5ctool\u2581calls\u2581begin\uff5c>", "<\uff5ctool\u2581call\u2581begin\uff5c>",
    "<\uff5ctool\u2581sep\uff5c>", "<\uff5ctool\u2581call\u2581end\uff5c>", "<\uff5ctool\u2581calls\u2581end\uff5c>")


def test_suffix_fills_in_the_middle(base, proc):
    body = {"model": MODEL, "prompt": "def add(a, b):\n", "suffix": "\n    return c\n", "max_tokens": 6,
            "temperature": 0}
    r = post(base, "/v1/completions", body)
    # DeepSeek's fill-in-the-middle tokens around the prefix and the suffix.
    fim = "<\uff5cfim\u2581begin\uff5c>def add(a, b):\n<\uff5cfim\u2581hole\uff5c>\n    return c\n<\uff5cfim\u2581end\uff5c>"
    plain = post(base, "/v1/completions", {"model": MODEL, "prompt": fim, "max_tokens": 6, "temperature": 0})
    m.check(r["usage"] == plain["usage"] and r["choices"][0]["text"] == plain["choices"][0]["text"],
            f"suffix {r} vs the FIM prompt's {plain}")


def test_tool_turns_render(base, proc):
    args = '{"a": 1, "b": 2}'
    history = CHAT + [
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "add", "arguments": args}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "3"}]
    r = post(base, "/v1/chat/completions", {"model": MODEL, "messages": history, "tools": TOOLS, "max_tokens": 6,
                                            "temperature": 0})
    # DeepSeek-V3's template: the call spliced in as text, then the tool's output.
    text = (m.chat_as_text(CHAT[0]["content"]) + CALLS_OPEN + CALL_OPEN + "function" + SEP + "add\n```json\n" + args +
            "\n```" + CALL_CLOSE + "<\uff5ctool\u2581outputs\u2581begin\uff5c><\uff5ctool\u2581output\u2581begin\uff5c>3"
            "<\uff5ctool\u2581output\u2581end\uff5c><\uff5ctool\u2581outputs\u2581end\uff5c>")
    rendered = post(base, "/v1/completions", {"model": MODEL, "prompt": text, "max_tokens": 6, "temperature": 0})
    m.check(rendered["usage"]["prompt_tokens"] == r["usage"]["prompt_tokens"],
            f"tool turns rendered to {r['usage']}, the template's text to {rendered['usage']}")


def regex_escape(s):
    return "".join("\\" + c if c in "{}[]()^$.|*+?\\" else c for c in s)


def test_deepseek_tool_calls_parse(base, proc):
    call = (CALLS_OPEN + CALL_OPEN + "function" + SEP + "add\n```json\n{\"a\": 2, \"b\": 3}\n```" + CALL_CLOSE +
            CALLS_CLOSE)
    body = {"model": MODEL, "messages": CHAT, "tools": TOOLS, "max_tokens": 400, "temperature": 0,
            "guided_regex": regex_escape("Adding." + call)}
    r = post(base, "/v1/chat/completions", body)["choices"][0]
    calls = r["message"].get("tool_calls") or []
    m.check(len(calls) == 1 and calls[0]["function"]["name"] == "add", f"calls: {r}")
    m.check(json.loads(calls[0]["function"]["arguments"]) == {"a": 2, "b": 3}, f"arguments: {calls[0]}")
    m.check(r["message"]["content"] == "Adding." and r["finish_reason"] == "tool_calls", f"message: {r}")
    chunks = post_stream(base, "/v1/chat/completions", body)
    deltas = [c["delta"] for ch in chunks for c in ch["choices"]]
    content = "".join(d.get("content") or "" for d in deltas)
    streamed = [t for d in deltas for t in d.get("tool_calls") or []]
    m.check(content == "Adding." and len(streamed) == 1 and
            streamed[0]["function"]["arguments"] == calls[0]["function"]["arguments"], f"streamed: {deltas}")


def main():
    args = m.parse_args()
    tests = [test_models, test_completion, test_chat_applies_the_template, test_chat_stream, test_seeded_samples,
             test_suffix_fills_in_the_middle, test_tool_turns_render, test_deepseek_tool_calls_parse]
    code = 0
    with m.Scratch(args, "deepseek_serve") as scratch:
        for shape in m.MODELS:
            print(f"--- {shape}", flush=True)
            proc, base = server_fixture.start_server(args.binary, args.source_dir, SERVER_ARGS,
                                                     model=scratch.write_model(shape), merge_stderr=True)
            try:
                result = run_tests(tests, base, proc)
            finally:
                rc = server_fixture.stop_server(proc)
            if rc != 0 or result != 0:
                print(f"server exited with {rc}; its output:\n" + "\n".join(proc.stdout_lines[-40:]))
                code = 1
    return code


if __name__ == "__main__":
    sys.exit(main())
