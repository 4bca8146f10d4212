"""`deepbatch serve` end to end on test-sized random-weight deepseek2 GGUFs (V2 and V3
forms) with DeepSeek-V3's tokenizer and chat template, over plain HTTP (urllib):
/v1/models, /v1/completions and /v1/chat/completions, streaming (SSE) and not. Checks
structure: token counts, finish reasons, the latent KV pool summary printed at start,
the chat template applied (a chat turn gives the same tokens and greedy text as its
rendering sent as a completion prompt), the same text for the same greedy or seeded
request, and a stream that adds up to the non-streamed response."""
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


def main():
    args = m.parse_args()
    tests = [test_models, test_completion, test_chat_applies_the_template, test_chat_stream, test_seeded_samples]
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
