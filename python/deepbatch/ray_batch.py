"""python -m deepbatch.ray_batch -m MODEL -i requests.jsonl -o results.jsonl [--ray-address auto]

Runs an OpenAI Batch API JSONL file on a Ray cluster (deepbatch.ray.run_batch_file):
`ray start --head` on one machine, `ray start --address HEAD:6379` on the others, then
this command on any of them. Rerunning it resumes: records already in the output stay."""
import argparse
import json
import sys

from .ray import run_batch_file


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m deepbatch.ray_batch", description=__doc__.splitlines()[0])
    p.add_argument("-m", "--model", required=True, help="GGUF file or checkpoint directory, at the same path on every node")
    p.add_argument("-i", "--input", required=True, help="OpenAI Batch API request file (JSONL)")
    p.add_argument("-o", "--output", required=True, help="OpenAI batch output file (JSONL); resumed when it exists")
    p.add_argument("--ray-address", default="auto", help="the cluster to join ('auto': the running one; 'local': a new one)")
    p.add_argument("--actors", type=int, default=2, help="engines, one per actor")
    p.add_argument("--cpus-per-actor", type=int, default=1, help="CPUs (and engine threads) per actor")
    p.add_argument("--batch-size", type=int, default=8, help="requests per task")
    p.add_argument("--kv-cache-memory", type=int, default=None, help="bytes of KV cache per actor")
    p.add_argument("--max-num-seqs", type=int, default=None, help="running sequences per actor at most")
    p.add_argument("--model-name", default="deepbatch", help="'model' in responses of requests that name none")
    a = p.parse_args(argv)
    engine = {k: v for k, v in {"kv_cache_memory": a.kv_cache_memory, "max_num_seqs": a.max_num_seqs}.items()
              if v is not None}
    try:
        summary = run_batch_file(a.input, a.output, a.model, engine, actors=a.actors,
                                 cpus_per_actor=a.cpus_per_actor, batch_size=a.batch_size, model_name=a.model_name,
                                 ray_address=None if a.ray_address == "local" else a.ray_address)
    except (ValueError, RuntimeError, OSError) as e:  # a bad file or a busy output: no traceback
        print(f"deepbatch.ray_batch: error: {e}", file=sys.stderr)
        return 1
    print(json.dumps(summary), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
