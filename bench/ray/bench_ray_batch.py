"""The Ray path against `deepbatch run` on one machine: the same OpenAI batch file (greedy
chat and completion requests) through a local Ray cluster (a head without CPUs and two
one-CPU workers: 2 actors x 1 engine thread) and through `deepbatch run -t 2`,
alternating, reporting wall time and generated tokens per second of each.

    PYTHONPATH=build/python python3 bench/ray/bench_ray_batch.py --requests 200 --repeats 3
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import ray
from ray.cluster_utils import Cluster

from deepbatch.ray import run_batch_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
TOPICS = ["copper", "rain", "a lighthouse", "prime numbers", "bread", "the moon", "rivers", "chess", "owls", "glass"]


def write_requests(path: str, count: int, max_tokens: int) -> None:
    with open(path, "w") as f:
        for i in range(count):
            topic = TOPICS[i % len(TOPICS)]
            if i % 2:
                url, body = "/v1/chat/completions", {"messages": [{"role": "user", "content": f"Tell me about {topic} ({i})."}]}
            else:
                url, body = "/v1/completions", {"prompt": f"An essay about {topic}, part {i}:"}
            body.update({"model": "m", "temperature": 0, "max_tokens": max_tokens, "ignore_eos": True})
            f.write(json.dumps({"custom_id": f"req-{i}", "method": "POST", "url": url, "body": body}) + "\n")


def generated_tokens(path: str) -> int:
    with open(path) as f:
        return sum(json.loads(line)["response"]["body"]["usage"]["completion_tokens"] for line in f)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "deepbatch"))
    a = p.parse_args()
    kv = 256 << 20
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    for _ in range(2):
        cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address, log_to_driver=False)
    times = {"ray 2x1": [], "deepbatch run -t 2": []}
    tokens = {}
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in.jsonl")
        write_requests(src, a.requests, a.max_tokens)
        for r in range(a.repeats):
            out = os.path.join(tmp, f"run{r}.jsonl")
            start = time.monotonic()
            subprocess.run([a.binary, "run", "-m", MODEL, "-t", "2", "--kv-cache-memory", str(kv), "-i", src,
                            "-o", out, "--no-progress"], check=True, capture_output=True)
            times["deepbatch run -t 2"].append(time.monotonic() - start)
            tokens["deepbatch run -t 2"] = generated_tokens(out)
            out = os.path.join(tmp, f"ray{r}.jsonl")
            start = time.monotonic()
            run_batch_file(src, out, MODEL, {"kv_cache_memory": kv}, actors=2, cpus_per_actor=1, batch_size=25)
            times["ray 2x1"].append(time.monotonic() - start)
            tokens["ray 2x1"] = generated_tokens(out)
    ray.shutdown()
    cluster.shutdown()
    base = statistics.median(times["deepbatch run -t 2"])
    for name, t in times.items():
        m = statistics.median(t)
        print(f"{name:20s} median {m:6.1f} s ({', '.join(f'{x:.1f}' for x in t)}), "
              f"{tokens[name] / m:7.1f} generated tok/s, {base / m:.2f}x deepbatch run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
