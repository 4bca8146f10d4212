"""Tool calling through `deepbatch serve` on the default model with the official
openai client: tool_choice "required" and a named function always give calls whose
arguments validate against the function's parameters (greedy and sampled with n > 1,
whole and streamed as tool-call deltas); parallel_tool_calls false gives one call;
the pydantic `tools=` flow of `beta.chat.completions.parse` returns parsed
arguments; with tool_choice auto, calls the model writes in the hermes format are
read out of its answer, whole and streamed (the default model does not call tools by
itself, so its output is steered into a call with guided_regex, and the server is
told the format with --tool-call-parser, as its template shows none); a template
that cannot render a turn with calls gives a clear 400; `deepbatch run` honours
tools in batch files; malformed tools get 400. DeepSeek's format and a template
that renders calls and tool results are tested in e2e_deepseek_serve."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
import jsonschema  # noqa: E402
import openai  # noqa: E402
import pydantic  # noqa: E402
from e2e_main import check, expect_raises, parse_args, run_tests_on_server  # noqa: E402
import server_fixture  # noqa: E402

ARGS = None
MODEL = "tiny"
MAX_TOKENS = 120
WEATHER = {"type": "object",
           "properties": {"city": {"type": "string", "maxLength": 30},
                          "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
           "required": ["city", "unit"], "additionalProperties": False}
ADD = {"type": "object", "properties": {"a": {"type": "integer", "minimum": -1000, "maximum": 1000},
                                        "b": {"type": "integer", "minimum": -1000, "maximum": 1000}},
       "required": ["a", "b"], "additionalProperties": False}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city",
                                           "parameters": WEATHER}},
         {"type": "function", "function": {"name": "add", "description": "Add two integers", "parameters": ADD}}]
SCHEMAS = {"get_weather": WEATHER, "add": ADD}
ASK = [{"role": "user", "content": "What is the weather in Paris, in celsius?"}]


def expect_calls(choice, where, names=None):
    calls = choice.message.tool_calls or []
    check(calls, f"{where}: no tool calls: {choice.message}")
    check(choice.finish_reason == "tool_calls", f"{where}: finish {choice.finish_reason}")
    check(choice.message.content is None, f"{where}: content beside the calls: {choice.message.content!r}")
    for c in calls:
        check(c.type == "function" and c.id.startswith("call_"), f"{where}: call {c}")
        check(c.function.name in (names or SCHEMAS), f"{where}: function {c.function.name}")
        args = json.loads(c.function.arguments)
        errors = list(jsonschema.Draft202012Validator(SCHEMAS[c.function.name]).iter_errors(args))
        check(not errors, f"{where}: {c.function.arguments} breaks {c.function.name}'s schema: {errors[:1]}")
    return calls


def test_required_and_named(client):
    r = client.chat.completions.create(model=MODEL, messages=ASK, tools=TOOLS, tool_choice="required",
                                       max_tokens=MAX_TOKENS, temperature=0)
    expect_calls(r.choices[0], "required, greedy")
    # Sampled, a small model may list calls until max_tokens; one call per answer keeps them short.
    r = client.chat.completions.create(model=MODEL, messages=ASK, tools=TOOLS, tool_choice="required",
                                       parallel_tool_calls=False, max_tokens=MAX_TOKENS, temperature=0.9, seed=5, n=3)
    check(len(r.choices) == 3, f"n=3 gave {len(r.choices)} choices")
    for c in r.choices:
        check(len(expect_calls(c, f"required, sampled choice {c.index}")) == 1,
              f"parallel_tool_calls false: {c.message.tool_calls}")
    named = {"type": "function", "function": {"name": "add"}}
    r = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "What is 2 plus 3?"}],
                                       tools=TOOLS, tool_choice=named, max_tokens=MAX_TOKENS, temperature=0)
    calls = expect_calls(r.choices[0], "named", names=["add"])
    check(len(calls) == 1, f"named: {len(calls)} calls")


def streamed_calls(client, **kwargs):
    """The calls a streamed answer builds from its deltas, and its finish reason."""
    calls, finish = {}, None
    for chunk in client.chat.completions.create(model=MODEL, stream=True, **kwargs):
        for ch in chunk.choices:
            finish = ch.finish_reason or finish
            check(not ch.delta.content, f"content in a tool-call stream: {ch.delta}")
            for d in ch.delta.tool_calls or []:
                if d.index not in calls:
                    check(d.id and d.function.name, f"a call's first delta lacks id or name: {d}")
                    calls[d.index] = {"id": d.id, "name": d.function.name, "arguments": ""}
                calls[d.index]["arguments"] += d.function.arguments or ""
    return [calls[i] for i in sorted(calls)], finish


def test_streamed_calls_match(client):
    for choice in ("required", {"type": "function", "function": {"name": "get_weather"}}):
        kwargs = dict(messages=ASK, tools=TOOLS, tool_choice=choice, max_tokens=MAX_TOKENS, temperature=0)
        whole = client.chat.completions.create(model=MODEL, **kwargs).choices[0]
        streamed, finish = streamed_calls(client, **kwargs)
        want = [(c.function.name, json.loads(c.function.arguments)) for c in whole.message.tool_calls]
        got = [(c["name"], json.loads(c["arguments"])) for c in streamed]
        check(got == want, f"{choice}: streamed {got} != whole {want}")
        check(finish == "tool_calls", f"{choice}: streamed finish {finish}")


class GetWeather(pydantic.BaseModel):
    city: str = pydantic.Field(max_length=30)
    unit: str = pydantic.Field(pattern="^(celsius|fahrenheit)$")


def test_openai_parse_with_pydantic_tool(client):
    r = client.beta.chat.completions.parse(model=MODEL, messages=ASK, tools=[openai.pydantic_function_tool(GetWeather)],
                                           tool_choice={"type": "function", "function": {"name": "GetWeather"}},
                                           max_tokens=MAX_TOKENS, temperature=0)
    call = r.choices[0].message.tool_calls[0]
    check(isinstance(call.function.parsed_arguments, GetWeather), f"parsed: {r.choices[0].message}")
    print(f"  parsed: {call.function.name}({call.function.parsed_arguments!r})")


# The hermes format, as a regex: a sentence, then a call to get_weather.
STEERED = (r"I will check\.\n<tool_call>\n\{\"name\": \"get_weather\", \"arguments\": "
           r"\{\"city\": \"Paris\", \"unit\": \"celsius\"\}\}\n</tool_call>")


def test_auto_reads_calls_in_the_model_format(client):
    kwargs = dict(messages=ASK, tools=TOOLS, max_tokens=MAX_TOKENS, temperature=0, extra_body={"guided_regex": STEERED})
    r = client.chat.completions.create(model=MODEL, **kwargs).choices[0]
    check(r.message.content == "I will check.", f"auto: content {r.message.content!r}")
    calls = r.message.tool_calls or []
    check(len(calls) == 1 and calls[0].function.name == "get_weather", f"auto: calls {calls}")
    check(json.loads(calls[0].function.arguments) == {"city": "Paris", "unit": "celsius"}, f"auto: {calls[0]}")
    check(r.finish_reason == "tool_calls", f"auto: finish {r.finish_reason}")
    content, streamed, finish = "", {}, None
    for chunk in client.chat.completions.create(model=MODEL, stream=True, **kwargs):
        for ch in chunk.choices:
            content += ch.delta.content or ""
            finish = ch.finish_reason or finish
            for d in ch.delta.tool_calls or []:
                streamed.setdefault(d.index, [d.function.name, ""])[1] += d.function.arguments or ""
    check(content == "I will check.", f"auto, streamed: content {content!r}")
    check(streamed == {0: ["get_weather", calls[0].function.arguments]}, f"auto, streamed: calls {streamed}")
    check(finish == "tool_calls", f"auto, streamed: finish {finish}")
    # tool_choice none: the same text is the answer, nothing is read out of it.
    r = client.chat.completions.create(model=MODEL, tool_choice="none", **kwargs).choices[0]
    check(not r.message.tool_calls and "<tool_call>" in r.message.content, f"none: {r.message}")


def test_auto_answers_in_text(client):
    """auto: the model may answer in text; whatever it writes comes back as content or calls."""
    r = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "Say hello."}], tools=TOOLS,
                                       max_tokens=16, temperature=0)
    m = r.choices[0].message
    check(m.content or m.tool_calls, f"auto: empty answer {m}")


def test_template_without_calls_gets_400(client):
    """The default model's template renders every turn's content: a turn of calls alone cannot be shown."""
    history = ASK + [{"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 1, \"b\": 2}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "3"}]
    e = expect_raises(openai.BadRequestError, client.chat.completions.create, model=MODEL, messages=history,
                      tools=TOOLS, max_tokens=4)
    check(e.body.get("param") == "messages" and "template" in e.body.get("message", ""), f"{e.body}")


def test_bad_tools_get_400(client):
    cases = [
        (dict(tools=[{"type": "function", "function": {"name": "bad name"}}]), "tools[0].function.name"),
        (dict(tools=TOOLS, tool_choice={"type": "function", "function": {"name": "missing"}}),
         "tool_choice.function.name"),
        (dict(tool_choice="required"), "tool_choice"),
        (dict(tools=TOOLS, tool_choice="required", response_format={"type": "json_object"}), "tool_choice"),
        (dict(tools=[{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
            "x": {"type": "string", "pattern": "(unclosed"}}}}}], tool_choice="required"), "tool_choice"),
    ]
    for kwargs, param in cases:
        e = expect_raises(openai.BadRequestError, client.chat.completions.create, model=MODEL, messages=ASK,
                          max_tokens=4, **kwargs)
        check(e.body.get("param") == param, f"{kwargs}: {e.body}")


def test_offline_batch_run(client):
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "in.jsonl"), os.path.join(d, "out.jsonl")
        with open(src, "w") as f:
            for i, choice in enumerate(["required", {"type": "function", "function": {"name": "add"}}]):
                body = {"model": MODEL, "messages": ASK, "tools": TOOLS, "tool_choice": choice,
                        "max_tokens": MAX_TOKENS, "temperature": 0}
                f.write(json.dumps({"custom_id": f"r{i}", "method": "POST", "url": "/v1/chat/completions",
                                    "body": body}) + "\n")
        r = subprocess.run([ARGS.binary, "run", "-m", server_fixture.default_model(ARGS.source_dir), "-t", "2",
                            "--tool-call-parser", "hermes", "-i", src, "-o", out],
                           capture_output=True, text=True, timeout=600)
        check(r.returncode == 0, f"deepbatch run failed ({r.returncode}): {r.stderr[-2000:]}")
        with open(out) as f:
            records = {rec["custom_id"]: rec for rec in map(json.loads, f)}
    for cid in ("r0", "r1"):
        choice = openai.types.chat.chat_completion.Choice.model_validate(
            records[cid]["response"]["body"]["choices"][0])
        expect_calls(choice, f"deepbatch run {cid}")


def main():
    global ARGS
    args = ARGS = parse_args()
    tests = [test_required_and_named, test_streamed_calls_match, test_openai_parse_with_pydantic_tool,
             test_auto_reads_calls_in_the_model_format, test_auto_answers_in_text, test_template_without_calls_gets_400,
             test_bad_tools_get_400, test_offline_batch_run]

    def clients(base):
        return (openai.OpenAI(base_url=base + "/v1", api_key="none", max_retries=0, timeout=300),)

    return run_tests_on_server(args, ["--served-model-name", MODEL, "--no-batch-api", "-t", "2",
                                      "--tool-call-parser", "hermes"], tests, clients)


if __name__ == "__main__":
    sys.exit(main())
