"""Structured outputs through `deepbatch serve` on the default model: every output of
a corpus of JSON schemas (schema_corpus.py) parses and validates against its schema,
greedy and sampled with n > 1, non-streamed and streamed; json_object, guided_regex,
guided_choice and guided_grammar hold; invalid schemas and conflicting fields get 400;
`deepbatch run` constrains batch-file requests the same way; and the official openai client's `beta.chat.completions.parse(response_format=Model)`
flow returns a parsed pydantic object."""
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
sys.path.insert(0, os.path.dirname(__file__))
import jsonschema  # noqa: E402
import openai  # noqa: E402
import pydantic  # noqa: E402
from e2e_main import check, expect_raises, parse_args, run_tests_on_server  # noqa: E402
import server_fixture  # noqa: E402
from schema_corpus import CORPUS  # noqa: E402

ARGS = None

MODEL = "tiny"
MAX_TOKENS = 200


def validator(schema):
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def response_format(name, schema):
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


def expect_valid(name, schema, text, finish, where):
    check(finish == "stop", f"{name} ({where}): finish {finish}, text {text!r}")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise AssertionError(f"{name} ({where}): not JSON ({e}): {text!r}") from e
    errors = sorted(validator(schema).iter_errors(value), key=str)
    check(not errors, f"{name} ({where}): {text!r} breaks the schema: {errors[0].message if errors else ''}")


def run_corpus_entry(client, entry):
    name, prompt, schema = entry
    messages = [{"role": "user", "content": prompt + " Answer in JSON."}]
    fmt = response_format(name, schema)
    greedy = client.chat.completions.create(model=MODEL, messages=messages, max_tokens=MAX_TOKENS, temperature=0,
                                            response_format=fmt)
    expect_valid(name, schema, greedy.choices[0].message.content, greedy.choices[0].finish_reason, "greedy")
    sampled = client.chat.completions.create(model=MODEL, messages=messages, max_tokens=MAX_TOKENS, temperature=0.9,
                                             seed=11, n=2, response_format=fmt)
    check(len(sampled.choices) == 2, f"{name}: n=2 gave {len(sampled.choices)} choices")
    for c in sampled.choices:
        expect_valid(name, schema, c.message.content, c.finish_reason, f"sampled choice {c.index}")
    return name


def test_schema_corpus(client, base):
    with concurrent.futures.ThreadPoolExecutor(16) as ex:  # concurrent: the engine batches them
        done = list(ex.map(lambda e: run_corpus_entry(client, e), CORPUS))
    print(f"  {len(done)} schemas: greedy and sampled (n=2) outputs all valid")


def test_streamed_outputs_validate(client, base):
    for name, prompt, schema in CORPUS[:6]:
        text, finish = "", None
        for chunk in client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": prompt}], max_tokens=MAX_TOKENS, temperature=0,
                response_format=response_format(name, schema), stream=True):
            for c in chunk.choices:
                text += c.delta.content or ""
                finish = c.finish_reason or finish
        expect_valid(name, schema, text, finish, "streamed")


def test_json_object_and_guided_extensions(client, base):
    r = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "Give the name and age of a person as a JSON object."}],
                                       max_tokens=MAX_TOKENS, temperature=0, response_format={"type": "json_object"})
    check(isinstance(json.loads(r.choices[0].message.content), dict), f"json_object: {r.choices[0].message.content!r}")
    r = client.completions.create(model=MODEL, prompt="My phone number is", max_tokens=20, temperature=0,
                                  extra_body={"guided_regex": "[0-9]{3}-[0-9]{4}"})
    check(re.fullmatch(r"[0-9]{3}-[0-9]{4}", r.choices[0].text), f"guided_regex: {r.choices[0].text!r}")
    r = client.completions.create(model=MODEL, prompt="Is the sea salty? Answer:", max_tokens=5, temperature=1.0,
                                  n=4, seed=3, extra_body={"guided_choice": ["yes", "no"]})
    check(all(c.text in ("yes", "no") for c in r.choices), f"guided_choice: {[c.text for c in r.choices]}")
    r = client.completions.create(model=MODEL, prompt="Count:", max_tokens=30, temperature=0,
                                  extra_body={"guided_grammar": 'root ::= "one" (", " ("two" | "three")){0,2} "."'})
    check(re.fullmatch(r"one(, (two|three)){0,2}\.", r.choices[0].text), f"guided_grammar: {r.choices[0].text!r}")
    r = client.completions.create(model=MODEL, prompt="A user record:", max_tokens=MAX_TOKENS, temperature=0,
                                  extra_body={"guided_json": {"type": "object", "required": ["id"],
                                                              "properties": {"id": {"type": "integer", "maximum": 999}}}})
    check(isinstance(json.loads(r.choices[0].text)["id"], int), f"guided_json: {r.choices[0].text!r}")


def test_invalid_constraints_get_400(client, base):
    msgs = [{"role": "user", "content": "x"}]
    e = expect_raises(openai.BadRequestError, client.chat.completions.create, model=MODEL, messages=msgs, max_tokens=4,
                      response_format=response_format("bad", {"type": "object", "properties": 3}))
    check(e.body.get("param") == "response_format", f"invalid schema: {e.body}")
    e = expect_raises(openai.BadRequestError, client.completions.create, model=MODEL, prompt="x", max_tokens=4,
                      extra_body={"guided_regex": "([0-9]"})
    check(e.body.get("param") == "guided_regex", f"invalid regex: {e.body}")
    e = expect_raises(openai.BadRequestError, client.completions.create, model=MODEL, prompt="x", max_tokens=4,
                      extra_body={"guided_regex": "a", "guided_choice": ["a"]})
    check(e.body.get("param") in ("guided_regex", "guided_choice"), f"two constraints: {e.body}")
    e = expect_raises(openai.BadRequestError, client.completions.create, model=MODEL, prompt="x", max_tokens=4,
                      extra_body={"guided_regex": "a", "ignore_eos": True})
    check(e.body.get("param") == "ignore_eos", f"ignore_eos with a constraint: {e.body}")


def test_offline_batch_run(client, base):
    """`deepbatch run` reads the same request bodies from a batch file."""
    entries = CORPUS[:8]
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "in.jsonl"), os.path.join(d, "out.jsonl")
        with open(src, "w") as f:
            for name, prompt, schema in entries:
                body = {"model": MODEL, "messages": [{"role": "user", "content": prompt}], "max_tokens": MAX_TOKENS,
                        "temperature": 0, "response_format": response_format(name, schema)}
                f.write(json.dumps({"custom_id": name, "method": "POST", "url": "/v1/chat/completions",
                                    "body": body}) + "\n")
        r = subprocess.run([ARGS.binary, "run", "-m", server_fixture.default_model(ARGS.source_dir), "-t", "2",
                            "-i", src, "-o", out], capture_output=True, text=True, timeout=600)
        check(r.returncode == 0, f"deepbatch run failed ({r.returncode}): {r.stderr[-2000:]}")
        with open(out) as f:
            records = {rec["custom_id"]: rec for rec in map(json.loads, f)}
    for name, _, schema in entries:
        body = records[name]["response"]["body"]
        c = body["choices"][0]
        expect_valid(name, schema, c["message"]["content"], c["finish_reason"], "deepbatch run")


class City(pydantic.BaseModel):
    name: str = pydantic.Field(max_length=20)
    country: str = pydantic.Field(max_length=20)
    population: int = pydantic.Field(ge=0, le=99_999_999)  # unbounded, a small model may write digits forever


def test_openai_parse_with_pydantic(client, base):
    r = client.beta.chat.completions.parse(model=MODEL, messages=[{"role": "user", "content": "Tell me about Paris."}],
                                           max_tokens=MAX_TOKENS, temperature=0, response_format=City)
    parsed = r.choices[0].message.parsed
    check(isinstance(parsed, City), f"parsed: {r.choices[0].message}")
    print(f"  parsed: {parsed!r}")


# Run time (one of the suite's slowest, tests/README.md): every schema of the corpus is
# answered greedy and sampled (n = 2), up to 200 tokens each, on one server.
def main():
    global ARGS
    args = ARGS = parse_args()
    tests = [test_schema_corpus, test_streamed_outputs_validate, test_json_object_and_guided_extensions,
             test_invalid_constraints_get_400, test_offline_batch_run, test_openai_parse_with_pydantic]

    def clients(base):
        return (openai.OpenAI(base_url=base + "/v1", api_key="none", max_retries=0, timeout=300), base)

    return run_tests_on_server(args, ["--served-model-name", MODEL, "--no-batch-api", "-t", "2"], tests, clients)


if __name__ == "__main__":
    sys.exit(main())
