"""R1-style reasoning output through `deepbatch serve --reasoning-parser deepseek_r1`:
the text before "</think>" comes back as message.reasoning_content (streamed as
delta.reasoning_content), the rest as content; with no "</think>" all of it is
reasoning and content is null. The default model does not think, so its output is
steered with guided_regex into the shape an R1 model writes. Its own template does
not think, so under the default (auto) nothing is split.

A model that thinks: a test-sized random-weight qwen2 GGUF with DeepSeek-R1-Distill-
Qwen's vocabulary and chat template (bench/make_random_gguf.py --shape r1-qwen-mini,
written at test time). Its answers are split by default; a response_format applies
after "</think>" (a +100 bias makes "</think>" its first token: the constraint lets it
through, then the answer follows the schema), and from the first token with
--reasoning-parser none."""
import json
import os
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
import openai  # noqa: E402
import server_fixture  # noqa: E402
from e2e_main import check, parse_args, run_tests  # noqa: E402

MODEL = "tiny"
THINKING = r"<think>\nTwo and two make four\.\n</think>\n\nFour\."
MESSAGES = [{"role": "user", "content": "What is two plus two?"}]


def ask(client, regex, **kw):
    return client.chat.completions.create(model=MODEL, messages=MESSAGES, max_tokens=40, temperature=0,
                                          extra_body={"guided_regex": regex}, **kw)


def test_split_plain_and_streamed(client):
    r = ask(client, THINKING)
    m = r.choices[0].message.model_dump()
    check(m.get("reasoning_content") == "\nTwo and two make four.\n", f"reasoning: {m}")
    check(m.get("content") == "\n\nFour.", f"content: {m}")
    reasoning, content = "", ""
    for chunk in ask(client, THINKING, stream=True):
        for c in chunk.choices:
            d = c.delta.model_dump()
            reasoning += d.get("reasoning_content") or ""
            content += d.get("content") or ""
    check(reasoning == m["reasoning_content"] and content == m["content"],
          f"streamed {reasoning!r} / {content!r} != {m['reasoning_content']!r} / {m['content']!r}")


def test_unfinished_thinking_is_all_reasoning(client):
    m = ask(client, r"<think>\nHmm, let me count").choices[0].message.model_dump()
    check(m.get("reasoning_content") == "\nHmm, let me count" and m.get("content") is None, f"message: {m}")


def test_default_does_not_split_for_a_model_that_does_not_think(args):
    proc, base = server_fixture.start_server(args.binary, args.source_dir,
                                             ["--served-model-name", MODEL, "--no-batch-api", "-t", "2"])
    try:
        body = {"model": MODEL, "messages": MESSAGES, "max_tokens": 40, "temperature": 0, "guided_regex": THINKING}
        req = urllib.request.Request(base + "/v1/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=120) as r:
            m = json.loads(r.read())["choices"][0]["message"]
    finally:
        server_fixture.stop_server(proc)
    check("reasoning_content" not in m and m["content"].startswith("<think>"), f"message: {m}")


AGE = {"type": "object", "properties": {"age": {"type": "integer", "minimum": 0, "maximum": 99}},
       "required": ["age"], "additionalProperties": False}


def think_end_id(source_dir):
    from gguf import GGUFReader
    field = GGUFReader(os.path.join(source_dir, "tests", "data", "tokenizer", "deepseek-r1-distill-qwen",
                                    "vocab.gguf")).fields["tokenizer.ggml.tokens"]
    return [bytes(field.parts[i]).decode("utf-8", "replace") for i in field.data].index("</think>")


def ask_r1(base, **body):
    body = {"model": "r1", "messages": [{"role": "user", "content": "Give a person's age as JSON."}],
            "max_tokens": 40, "temperature": 0, **body}
    req = urllib.request.Request(base + "/v1/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())["choices"][0]


def test_a_thinking_model(args):
    fmt = {"type": "json_schema", "json_schema": {"name": "age", "schema": AGE}}
    with tempfile.TemporaryDirectory(prefix="deepbatch_r1_") as d:
        model = os.path.join(d, "r1.gguf")
        subprocess.run([sys.executable, os.path.join(args.source_dir, "bench", "make_random_gguf.py"), "--shape",
                        "r1-qwen-mini", "--vocab-from", os.path.join(args.source_dir, "tests", "data", "tokenizer",
                                                                     "deepseek-r1-distill-qwen", "vocab.gguf"),
                        "--out", model], check=True, stdout=subprocess.DEVNULL, timeout=300)
        bias = {str(think_end_id(args.source_dir)): 100}
        for parser in ("auto", "none"):
            proc, base = server_fixture.start_server(args.binary, args.source_dir,
                                                     ["--served-model-name", "r1", "--no-batch-api", "-t", "2",
                                                      "--reasoning-parser", parser], model=model)
            try:
                plain = ask_r1(base, max_tokens=8)["message"]
                constrained = ask_r1(base, response_format=fmt, logit_bias=bias)
            finally:
                server_fixture.stop_server(proc)
            m = constrained["message"]
            if parser == "auto":
                check("reasoning_content" in plain, f"the template thinks: split by default: {plain}")
                check(m.get("reasoning_content") == "", f"'</think>' came first: no reasoning: {m}")
            else:
                check("reasoning_content" not in plain, f"--reasoning-parser none: {plain}")
                check("</think>" not in (m["content"] or ""), f"the constraint applied from the start: {m}")
            check(constrained["finish_reason"] == "stop" and isinstance(json.loads(m["content"])["age"], int),
                  f"{parser}: the answer follows the schema: {constrained}")


# Run time (one of the suite's slowest, tests/README.md): four servers, as the parser
# choice (deepseek_r1, auto, none) is a server flag and the thinking model another file,
# and the random-weight model written first; each server serves a few short requests.
def main():
    args = parse_args()
    proc, base = server_fixture.start_server(args.binary, args.source_dir,
                                             ["--served-model-name", MODEL, "--no-batch-api", "-t", "2",
                                              "--reasoning-parser", "deepseek_r1"])
    client = openai.OpenAI(base_url=base + "/v1", api_key="none", max_retries=0, timeout=120)
    try:
        code = run_tests([test_split_plain_and_streamed, test_unfinished_thinking_is_all_reasoning], client)
    finally:
        rc = server_fixture.stop_server(proc)
    code |= run_tests([test_default_does_not_split_for_a_model_that_does_not_think, test_a_thinking_model], args)
    return code or (1 if rc != 0 else 0)


if __name__ == "__main__":
    sys.exit(main())
