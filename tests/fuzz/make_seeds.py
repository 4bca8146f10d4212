#!/usr/bin/env python3
"""Writes the hand-written seed inputs of the fuzz targets into corpus/<target>/seed-*.

The seeds are the valid shapes each parser must handle (and a few near misses); the
rest of each corpus is what fuzzing found interesting, minimized with -merge=1.
Re-running rewrites the seeds and leaves the other files alone.
"""
import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent

# http_request_fuzz input: byte 0 picks the limits (0x3f: the largest, a budget without
# a cap), bytes 1-3 the piece sizes (0: all at once), then the bytes on the wire.
WHOLE = bytes([0x3F, 0, 0, 0])
BYTEWISE = bytes([0x3F, 1, 1, 1])
SMALL_LIMITS = bytes([0x15, 7, 3, 0])  # head 512, body 16, budget 16; odd piece sizes


def req(method, target, headers=(), body=b"", version=b"HTTP/1.1"):
    lines = [f"{method} {target} ".encode() + version]
    lines += [f"{k}: {v}".encode() for k, v in headers]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def post_json(target, obj, extra=()):
    body = json.dumps(obj).encode()
    return req("POST", target, [("Host", "h"), ("Content-Type", "application/json"),
                                ("Content-Length", str(len(body))), *extra], body)


def chunked(target, body, sizes):
    out, i = b"", 0
    for n in sizes:
        out += f"{n:x}\r\n".encode() + body[i:i + n] + b"\r\n"
        i += n
    out += b"0\r\n\r\n"
    return req("POST", target, [("Host", "h"), ("Transfer-Encoding", "chunked")], out)


COMPLETION = {
    "model": "m", "prompt": "Once upon a time", "max_tokens": 16, "temperature": 0.7, "top_p": 0.9,
    "top_k": 40, "min_p": 0.05, "presence_penalty": 0.5, "frequency_penalty": 0.5,
    "repetition_penalty": 1.1, "seed": 7, "n": 2, "stop": ["\n", "END"], "stop_token_ids": [2],
    "logprobs": 3, "echo": False, "stream": True, "stream_options": {"include_usage": True},
    "ignore_eos": False, "skip_special_tokens": True, "priority": 0, "user": "u",
    "metadata": {"k": {"nested": [1, {"x": None}]}}, "service_tier": "auto",
}
CHAT = {
    "model": "m",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": "Answer in English."},
        {"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "text", "text": "there"}],
         "name": "ann"},
        {"role": "assistant", "content": "Hello.", "tool_calls": None},
        {"role": "user", "content": "Tell me a story \u00e9\u4e2d\U0001F600"},
    ],
    "max_completion_tokens": 32, "max_tokens": 64, "logprobs": True, "top_logprobs": 5,
    "temperature": 0, "seed": 18446744073709551615, "stop": "\n\n", "n": 1, "stream": False,
    "priority": 2, "tools": None, "response_format": None,
}

HTTP_SEEDS = {
    "get_models": WHOLE + req("GET", "/v1/models", [("Host", "h")]),
    "get_health_bytewise": BYTEWISE + req("GET", "/health", [("Host", "h"), ("Connection", "close")]),
    "head_metrics_http10": WHOLE + req("HEAD", "/metrics", version=b"HTTP/1.0"),
    "post_completion": WHOLE + post_json("/v1/completions", {"prompt": "hi", "max_tokens": 4}),
    "post_chat_split": bytes([0x3F, 5, 17, 2]) + post_json(
        "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}),
    "chunked_body": WHOLE + chunked("/v1/completions", b'{"prompt": "hello world"}', [3, 10, 12]),
    "chunked_ext_trailer": WHOLE + req("POST", "/v1/files", [("Host", "h"), ("Transfer-Encoding", "chunked")],
                                       b"4;ext=1\r\nabcd\r\n0\r\nX-Trailer: t\r\n\r\n"),
    "expect_continue": bytes([0x3F, 60, 0, 0]) + req(
        "POST", "/v1/completions",
        [("Host", "h"), ("Expect", "100-continue"), ("Content-Length", "14")], b'{"prompt":"x"}'),
    "expect_other": WHOLE + req("POST", "/v1/files", [("Host", "h"), ("Expect", "200-ok"),
                                                      ("Content-Length", "1")], b"x"),
    "pipelined_three": WHOLE + req("GET", "/v1/models", [("Host", "h")]) + post_json(
        "/v1/completions", {"prompt": [1, 2, 3]}) + req("DELETE", "/v1/files/f1", [("Host", "h")]),
    "pipelined_crlf_between": bytes([0x3F, 9, 0, 3]) + req("GET", "/health", [("Host", "h")]) + b"\r\n\r\n" +
                              req("GET", "/v1/files/abc/content?x=1", [("Host", "h")]),
    "target_relative": WHOLE + req("GET", "v1/x", [("Host", "h")]),
    "target_double_slash_dotdot": WHOLE + req("GET", "//v1/..", [("Host", "h")]),
    "target_dotdot": WHOLE + req("GET", "/v1/../v1/models", [("Host", "h")]),
    "target_encoded_slash": WHOLE + req("GET", "/v1%2Fmodels", [("Host", "h")]),
    "target_percent": WHOLE + req("GET", "/%76%31/./models?a=%2F#", [("Host", "h")]),
    "target_absolute": WHOLE + req("GET", "http://h/v1/models", [("Host", "h")]),
    "target_absolute_https_query": WHOLE + req("GET", "HTTPS://h:8000/v1/batches/b1?limit=2", [("Host", "h")]),
    "target_above_root": WHOLE + req("GET", "/../../etc/passwd", [("Host", "h")]),
    "target_asterisk": WHOLE + req("OPTIONS", "*", [("Host", "h")]),
    "method_not_allowed": WHOLE + req("PUT", "/v1/models", [("Host", "h"), ("Content-Length", "0")]),
    "cancel_batch": WHOLE + req("POST", "/v1/batches/b_1/cancel", [("Host", "h"), ("Content-Length", "0")]),
    "no_host": WHOLE + req("GET", "/v1/models"),
    "two_hosts": WHOLE + req("GET", "/v1/models", [("Host", "a"), ("Host", "b")]),
    "te_and_cl": WHOLE + req("POST", "/v1/files", [("Host", "h"), ("Transfer-Encoding", "chunked"),
                                                   ("Content-Length", "5")], b"0\r\n\r\n"),
    "te_gzip": WHOLE + req("POST", "/v1/files", [("Host", "h"), ("Transfer-Encoding", "gzip, chunked")],
                           b"0\r\n\r\n"),
    "body_over_limit": SMALL_LIMITS + post_json("/v1/completions", {"prompt": "a long prompt over the limit"}),
    "head_over_limit": bytes([0x00, 0, 0, 0]) + req("GET", "/v1/models", [("Host", "h"), ("X-Pad", "p" * 80)]),
    "budget_spent_chunked": bytes([0x1B, 0, 0, 0]) + chunked("/v1/files", b"0123456789abcdefghij", [10, 10]),
    "header_folding_ws": WHOLE + b"GET /health HTTP/1.1\r\nHost:  h \t\r\nX-A:\r\n\r\n",
    "garbage": WHOLE + b"\x00\xffGET / HTTP/9.9\r\n\r\n",
}

JSON_SEEDS = {
    "completion_full": COMPLETION,
    "completion_min": {"prompt": "hi"},
    "completion_prompt_list": {"prompt": ["a", "b", "c"], "max_tokens": 1},
    "completion_token_ids": {"prompt": [1, 15043, 2], "echo": True},
    "completion_token_id_lists": {"prompt": [[1, 2, 3], [4, 5]], "n": 3, "best_of": None},
    "completion_float_ints": {"prompt": "x", "max_tokens": 4.0, "seed": -1, "n": 1e0, "top_k": -1},
    "completion_unknown_nested": {"prompt": "x", "extra": {"a": [[{"b": [None, True, 1.5e300]}]]}},
    "completion_unsupported": {"prompt": "x", "logit_bias": {"50256": -100}, "suffix": "s"},
    "completion_bad_types": {"prompt": 5, "temperature": "hot", "stop": [""], "stop_token_ids": [None, -1]},
    "chat_full": CHAT,
    "chat_min": {"messages": [{"role": "user", "content": "hi"}]},
    "chat_null_content": {"messages": [{"role": "assistant", "content": None}, {"role": "user"}]},
    "chat_bad_part": {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]},
    "chat_bad_role": {"messages": [{"role": "tool", "content": "x", "tool_call_id": "t"}], "top_logprobs": 2},
    "deep_nesting": {"metadata": {"a": {"b": {"c": {"d": {"e": [[[[[1]]]]]}}}}}, "prompt": "x"},
    "chat_tools": {
        "messages": [{"role": "user", "content": "Weather?"},
                     {"role": "assistant", "content": None, "tool_calls": [
                         {"id": "c1", "type": "function", "function": {"name": "get", "arguments": "{\"a\": 1}"}}]},
                     {"role": "tool", "tool_call_id": "c1", "content": "sunny"}],
        "tools": [{"type": "function", "function": {"name": "get", "description": "d", "parameters": {
            "type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}}],
        "tool_choice": {"type": "function", "function": {"name": "get"}}, "parallel_tool_calls": False},
    "chat_tools_required": {"messages": [{"role": "user", "content": "x"}], "tool_choice": "required",
                            "tools": [{"type": "function", "function": {"name": "f"}}]},
    "completion_echo_logprobs_suffix": {"prompt": "def f(", "suffix": "):", "echo": True, "logprobs": 2},
}
JSON_RAW = {
    "duplicate_keys": b'{"prompt": "a", "prompt": [1, 2], "n": 2, "n": 1}',
    "escapes": b'{"prompt": "\\u0000\\ud83d\\ude00\\n\\"\\\\\\/", "user": "\\uDBFF\\uDFFF"}',
    "numbers": b'{"prompt": [0, 2147483647], "temperature": 2.0e0, "top_p": 1E-300, "seed": 1.8446744073709552e19}',
    "not_object": b'[{"prompt": "x"}]',
    "trailing_garbage": b'{"prompt": "x"} {}',
    "bom_ws": b'\xef\xbb\xbf \t\r\n{"prompt":"x"}\n',
    "invalid_utf8": b'{"prompt": "\xc3\x28"}',
}

BATCH_SEEDS = {
    "two_endpoints": [
        {"custom_id": "a", "method": "POST", "url": "/v1/completions", "body": {"prompt": "hi", "max_tokens": 2}},
        {"custom_id": "b", "method": "POST", "url": "/v1/chat/completions", "body": CHAT},
    ],
    "errors": [
        {"custom_id": "a", "method": "GET", "url": "/v1/completions", "body": {}},
        {"custom_id": "a", "method": "POST", "url": "/v1/completions", "body": {"prompt": "x"}},
        {"method": "POST", "url": "/v1/completions", "body": {"prompt": "x"}},
        {"custom_id": "c", "method": "POST", "url": "/v1/embeddings", "body": {"input": "x"}},
        {"custom_id": "d", "method": "POST", "url": "/v1/completions", "body": {"prompt": "x", "stream": True}},
    ],
}
BATCH_RAW = {
    "blank_and_broken": b'\n  \r\n{"custom_id": "x", "method": "POST", "url": "/v1/completions", '
                        b'"body": {"prompt": [1, 2]}}\r\nnot json\n{"custom_id": 5}\n[]',
}


def write(target, name, data):
    d = HERE / "corpus" / target
    d.mkdir(parents=True, exist_ok=True)
    (d / f"seed-{name}").write_bytes(data)


def main():
    for name, data in HTTP_SEEDS.items():
        write("http_request_fuzz", name, data)
    for name, obj in JSON_SEEDS.items():
        write("json_request_fuzz", name, json.dumps(obj, ensure_ascii=False).encode())
    for name, data in JSON_RAW.items():
        write("json_request_fuzz", name, data)
    for name, lines in BATCH_SEEDS.items():
        write("batch_input_fuzz", name, "".join(json.dumps(l) + "\n" for l in lines).encode())
    for name, data in BATCH_RAW.items():
        write("batch_input_fuzz", name, data)


if __name__ == "__main__":
    main()
