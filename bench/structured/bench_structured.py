#!/usr/bin/env python3
"""Cost of constrained decoding in an offline batch: 64 JSON-schema extraction requests
through `deepbatch run`, against the same requests unconstrained, each of which is made
to generate exactly as many tokens as its constrained twin did (max_tokens = that count,
ignore_eos), so both runs compute the same tokens and differ only by the constraint.
Runs alternate (constrained, unconstrained, ...) --repeats times; prints each run's wall
time (the batch's own, model load excluded), the median ratio, and the time per token
mask the engine reports.

    python3 bench/structured/bench_structured.py [--binary build/deepbatch] [--model M] [--repeats 3]
"""
import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile

SCHEMA = {
    "type": "object",
    "properties": {
        "vendor": {"type": "string", "maxLength": 24},
        "amount": {"type": "number", "minimum": 0, "maximum": 100000},
        "currency": {"enum": ["USD", "EUR", "GBP"]},
        "date": {"type": "string", "format": "date"},
        "quantity": {"type": "integer", "minimum": 0, "maximum": 1000},
        "paid": {"type": "boolean"},
    },
    "required": ["vendor", "amount", "currency", "date", "quantity", "paid"],
    "additionalProperties": False,
}
VENDORS = ["ACME Corp", "Globex", "Initech", "Umbrella Ltd", "Stark Industries", "Wayne Enterprises", "Hooli",
           "Vandelay Imports"]
ITEMS = ["widgets", "gears", "licenses", "crates of paper", "hours of consulting", "spare parts"]


def documents(n, seed):
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        v, item = rng.choice(VENDORS), rng.choice(ITEMS)
        amount, qty = round(rng.uniform(10, 9000), 2), rng.randint(1, 400)
        cur = rng.choice(["USD", "EUR", "GBP"])
        date = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        paid = rng.choice(["has been paid", "is still due"])
        docs.append(f"Invoice #{1000 + i} from {v}, dated {date}: {qty} {item} for a total of {amount} {cur}. "
                    f"The invoice {paid}. Please keep this for your records.")
    return docs


def write_requests(path, docs, constrained, max_tokens):
    with open(path, "w") as f:
        for i, doc in enumerate(docs):
            body = {"model": "m", "temperature": 0,
                    "messages": [{"role": "user", "content": "Extract the invoice fields as JSON:\n" + doc}]}
            if constrained:
                body["max_tokens"] = 256
                body["response_format"] = {"type": "json_schema",
                                           "json_schema": {"name": "invoice", "schema": SCHEMA, "strict": True}}
            else:
                body["max_tokens"] = max_tokens[i]
                body["ignore_eos"] = True
            f.write(json.dumps({"custom_id": f"r{i}", "method": "POST", "url": "/v1/chat/completions",
                                "body": body}) + "\n")


def run(binary, model, threads, src, out):
    if os.path.exists(out):
        os.remove(out)
    r = subprocess.run([binary, "run", "-m", model, "-t", str(threads), "-i", src, "-o", out],
                       capture_output=True, text=True, check=True)
    wall = float(re.search(r"wall time ([0-9.]+) s", r.stderr + r.stdout).group(1))
    masks = re.search(r"constrained outputs: ([0-9]+) token masks, ([0-9.]+) us per mask", r.stderr + r.stdout)
    records = {}
    with open(out) as f:
        for line in f:
            rec = json.loads(line)
            records[rec["custom_id"]] = rec["response"]["body"]
    return wall, (int(masks.group(1)), float(masks.group(2))) if masks else None, records


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    p.add_argument("--binary", default=os.path.join(root, "build", "deepbatch"))
    p.add_argument("--model", default=os.path.join(root, "models", "SmolLM2-135M-Instruct.Q4_1.gguf"))
    p.add_argument("--requests", type=int, default=64)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    docs = documents(a.requests, a.seed)
    with tempfile.TemporaryDirectory() as d:
        constrained, plain, out = (os.path.join(d, x) for x in ("c.jsonl", "u.jsonl", "out.jsonl"))
        write_requests(constrained, docs, True, None)
        _, _, records = run(a.binary, a.model, a.threads, constrained, out)  # warm-up, and the lengths
        lengths = [records[f"r{i}"]["usage"]["completion_tokens"] for i in range(len(docs))]
        valid = sum(1 for i in range(len(docs))
                    if records[f"r{i}"]["choices"][0]["finish_reason"] == "stop"
                    and json.loads(records[f"r{i}"]["choices"][0]["message"]["content"]) is not None)
        write_requests(plain, docs, False, lengths)
        c_walls, u_walls, masks = [], [], []
        for k in range(a.repeats):
            w, m, _ = run(a.binary, a.model, a.threads, constrained, out)
            c_walls.append(w)
            masks.append(m)
            w, _, recs = run(a.binary, a.model, a.threads, plain, out)
            u_walls.append(w)
            got = [recs[f"r{i}"]["usage"]["completion_tokens"] for i in range(len(docs))]
            if got != lengths:
                sys.exit("the unconstrained run generated other lengths than asked for")
            print(f"run {k}: constrained {c_walls[-1]:.2f} s, unconstrained {u_walls[-1]:.2f} s, "
                  f"ratio {c_walls[-1] / u_walls[-1]:.3f}; masks {m[0]} at {m[1]:.1f} us")
    ratio = statistics.median(c / u for c, u in zip(c_walls, u_walls))
    print(f"{len(docs)} requests, {sum(lengths)} output tokens each way, {valid} constrained outputs ended as JSON")
    print(f"median wall: constrained {statistics.median(c_walls):.2f} s, unconstrained {statistics.median(u_walls):.2f} s; "
          f"median ratio {ratio:.3f}")
    print(f"token mask: median {statistics.median(m[1] for m in masks):.1f} us per mask (per constrained token)")


if __name__ == "__main__":
    main()
