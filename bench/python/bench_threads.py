"""Two Python threads generating at once against the same calls one after the other,
on the default model: with one shared LLM (the engine batches both threads' requests
into the same steps) and with two LLMs of one engine thread each. Alternates the
orders and reports median wall times and the ratio serialized / together.

    PYTHONPATH=build/python python3 bench/python/bench_threads.py --prompts 16 --max-tokens 64 --repeats 5
"""
import argparse
import os
import statistics
import threading
import time

from deepbatch import LLM, SamplingParams

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
TOPICS = ["copper", "rain", "a lighthouse", "prime numbers", "bread", "the moon", "rivers", "chess", "owls", "glass"]


def serialized(llms, halves, params) -> float:
    started = time.monotonic()
    for llm, half in zip(llms, halves):
        llm.generate(half, params, use_tqdm=False)
    return time.monotonic() - started


def together(llms, halves, params) -> float:
    barrier = threading.Barrier(len(halves) + 1)

    def job(llm, half):
        barrier.wait()
        llm.generate(half, params, use_tqdm=False)

    threads = [threading.Thread(target=job, args=(llm, half)) for llm, half in zip(llms, halves)]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.monotonic()
    for t in threads:
        t.join()
    return time.monotonic() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=16, help="prompts in all, half per thread")
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    prompts = [f"Fact {i} about {TOPICS[i % len(TOPICS)]}:" for i in range(args.prompts)]
    halves = [prompts[: len(prompts) // 2], prompts[len(prompts) // 2:]]
    params = SamplingParams(temperature=0, max_tokens=args.max_tokens, ignore_eos=True)
    tokens = args.prompts * args.max_tokens
    setups = {
        "one LLM (2 engine threads), shared": lambda: [LLM(MODEL, threads=2, kv_cache_memory=256 << 20)] * 2,
        "two LLMs (1 engine thread each)": lambda: [LLM(MODEL, threads=1, kv_cache_memory=128 << 20) for _ in range(2)],
    }
    print(f"{args.prompts} prompts x {args.max_tokens} tokens ({tokens} tokens), {args.repeats} repeats")
    for name, make in setups.items():
        llms = make()
        serialized(llms, halves, params)  # warm-up
        times = {"serialized": [], "together": []}
        for r in range(args.repeats):
            order = ["serialized", "together"] if r % 2 == 0 else ["together", "serialized"]
            for which in order:
                times[which].append((serialized if which == "serialized" else together)(llms, halves, params))
        s, t = statistics.median(times["serialized"]), statistics.median(times["together"])
        print(f"{name}: serialized {s:.2f} s ({tokens / s:.0f} tok/s), together {t:.2f} s "
              f"({tokens / t:.0f} tok/s), together is {s / t:.2f}x")
        del llms


if __name__ == "__main__":
    main()
