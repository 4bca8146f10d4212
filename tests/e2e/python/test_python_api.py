"""The Python package: LLM.generate and LLM.chat give exactly what `deepbatch run` gives
for the same requests (greedy), per-prompt parameters, token-id prompts, errors as Python
exceptions, two threads generating at once (the GIL released), Ctrl-C, and memory
returned when the LLM is deleted."""
import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import _thread

import pytest

from deepbatch import LLM, AsyncLLM, SamplingParams

SOURCE_DIR = os.environ["DEEPBATCH_SOURCE_DIR"]
BINARY = os.environ["DEEPBATCH_BINARY"]
MODEL = os.path.join(SOURCE_DIR, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
KV_MEMORY = 64 << 20
PROMPTS = [
    "The three primary colors are",
    "def fibonacci(n):",
    "Once upon a time, in a small village,",
    "List three uses of copper:",
]
QUESTION = [{"role": "user", "content": "Name two planets of the solar system."}]


# Run time (one of the suite's slowest, tests/README.md): one engine for the module; a few
# tests need their own (int8 KV, deletion, quantized checkpoints) or `deepbatch run`'s
# answers to compare with.
@pytest.fixture(scope="module")
def llm():
    assert os.path.exists(MODEL), f"{MODEL} is missing: run scripts/setup.sh"
    return LLM(MODEL, threads=2, kv_cache_memory=KV_MEMORY)


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def run_offline(requests):
    """The bodies' answers from `deepbatch run`, by custom_id."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "in.jsonl"), os.path.join(tmp, "out.jsonl")
        with open(src, "w") as f:
            for i, (url, body) in enumerate(requests):
                f.write(json.dumps({"custom_id": f"r{i}", "method": "POST", "url": url, "body": body}) + "\n")
        subprocess.run([BINARY, "run", "-m", MODEL, "-t", "2", "--kv-cache-memory", str(KV_MEMORY), "-i", src,
                        "-o", dst, "--no-progress"], check=True, capture_output=True, timeout=300)
        with open(dst) as f:
            records = [json.loads(line) for line in f]
    return {r["custom_id"]: r["response"]["body"] for r in records}


def test_generate_and_chat_equal_deepbatch_run(llm):
    greedy = SamplingParams(temperature=0, max_tokens=24)
    outs = llm.generate(PROMPTS, greedy)
    answer = llm.chat(QUESTION, greedy)
    requests = [("/v1/completions", {"model": "m", "prompt": p, "temperature": 0, "max_tokens": 24}) for p in PROMPTS]
    requests.append(("/v1/chat/completions", {"model": "m", "messages": QUESTION, "temperature": 0, "max_tokens": 24}))
    offline = run_offline(requests)
    assert [o.prompt for o in outs] == PROMPTS
    for i, out in enumerate(outs):
        choice = offline[f"r{i}"]["choices"][0]
        assert out.outputs[0].text == choice["text"], PROMPTS[i]
        assert out.outputs[0].finish_reason == choice["finish_reason"]
        assert len(out.outputs[0].token_ids) == offline[f"r{i}"]["usage"]["completion_tokens"]
        assert out.prompt_token_ids == llm.encode(PROMPTS[i])
    chat = offline[f"r{len(PROMPTS)}"]["choices"][0]
    assert answer[0].outputs[0].text == chat["message"]["content"]
    assert "Name two planets" in answer[0].prompt
    tokenizer = llm.get_tokenizer()
    assert tokenizer.apply_chat_template(QUESTION, tokenize=True) == answer[0].prompt_token_ids
    assert tokenizer.apply_chat_template(QUESTION) == answer[0].prompt
    assert tokenizer.decode(tokenizer.encode("copper wire")) == "copper wire"


def test_per_prompt_parameters_and_token_prompts(llm):
    params = [SamplingParams(temperature=0, max_tokens=k) for k in (3, 7)]
    outs = llm.generate(PROMPTS[:2], params)
    assert [len(o.outputs[0].token_ids) for o in outs] == [3, 7]
    ids = llm.encode(PROMPTS[0])
    by_ids = llm.generate([ids, {"prompt_token_ids": ids}], SamplingParams(temperature=0, max_tokens=7))
    by_text = llm.generate(PROMPTS[0], SamplingParams(temperature=0, max_tokens=7))
    assert by_ids[0].outputs[0].token_ids == by_text[0].outputs[0].token_ids == by_ids[1].outputs[0].token_ids
    assert by_ids[0].prompt_token_ids == ids


def test_samples_logprobs_and_stop(llm):
    out = llm.generate(PROMPTS[2], SamplingParams(n=3, seed=7, temperature=0.8, max_tokens=12, logprobs=2))[0]
    assert [c.index for c in out.outputs] == [0, 1, 2]
    for c in out.outputs:
        assert len(c.logprobs) == len(c.token_ids)
        assert all(t in entry for t, entry in zip(c.token_ids, c.logprobs))
        assert c.cumulative_logprob == pytest.approx(sum(e[t].logprob for t, e in zip(c.token_ids, c.logprobs)))
    again = llm.generate(PROMPTS[2], SamplingParams(n=3, seed=7, temperature=0.8, max_tokens=12, logprobs=2))[0]
    assert [c.token_ids for c in again.outputs] == [c.token_ids for c in out.outputs]
    greedy = llm.generate(PROMPTS[0], SamplingParams(temperature=0, max_tokens=24))[0].outputs[0].text
    word = greedy.split()[1]
    stopped = llm.generate(PROMPTS[0], SamplingParams(temperature=0, max_tokens=24, stop=word))[0].outputs[0]
    assert stopped.finish_reason == "stop" and stopped.stop_reason == word and word not in stopped.text


def test_streaming_equals_non_streaming(llm):
    params = SamplingParams(temperature=0, max_tokens=32, logprobs=1)
    whole = llm.generate(PROMPTS[2], params)[0]
    states = list(llm.generate_stream(PROMPTS[2], params))
    assert len(states) > 1
    for before, after in zip(states, states[1:]):
        assert after.outputs[0].text.startswith(before.outputs[0].text)
        assert after.outputs[0].token_ids[:len(before.outputs[0].token_ids)] == before.outputs[0].token_ids
    assert [s.finished for s in states] == [False] * (len(states) - 1) + [True]
    assert states[-1].outputs == whole.outputs
    chat = llm.chat(QUESTION, params)[0]
    assert list(llm.chat_stream(QUESTION, params))[-1].outputs == chat.outputs


def test_a_stream_closed_early_is_aborted(llm):
    stream = llm.generate_stream(PROMPTS[0], SamplingParams(temperature=0, max_tokens=2000, ignore_eos=True))
    first = next(stream)
    assert not first.finished
    stream.close()
    outs = llm.generate(PROMPTS, SamplingParams(temperature=0, max_tokens=8))
    assert all(len(o.outputs[0].token_ids) == 8 for o in outs)


def test_async_requests_run_together(llm):
    params = SamplingParams(temperature=0, max_tokens=16)
    expected = [o.outputs[0].text for o in llm.generate(PROMPTS, params)]
    engine = AsyncLLM(llm=llm)

    async def last(prompt):
        out = None
        async for out in engine.generate(prompt, params):
            pass
        return out.outputs[0].text

    async def main():
        return await asyncio.gather(*(last(p) for p in PROMPTS))

    assert asyncio.run(main()) == expected


def wait_until_idle(llm, seconds=30.0):
    deadline = time.monotonic() + seconds
    while llm.get_num_unfinished_requests() and time.monotonic() < deadline:
        time.sleep(0.05)
    return llm.get_num_unfinished_requests() == 0


def test_cancelling_an_async_request_mid_step_aborts_it(llm):
    """A task cancelled while it awaits a step (the executor inside next()) ends its
    request: the engine goes idle long before the request's 2000 tokens."""
    engine = AsyncLLM(llm=llm)
    assert wait_until_idle(llm)
    before = llm.stats()["generated_tokens"]

    async def main():
        first = asyncio.Event()

        async def consume():
            async for _ in engine.generate(PROMPTS[1], SamplingParams(temperature=0, max_tokens=2000, ignore_eos=True)):
                first.set()

        task = asyncio.create_task(consume())
        await first.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert wait_until_idle(llm), "the cancelled request still runs"
    generated = llm.stats()["generated_tokens"] - before
    assert 0 < generated < 1000, generated


def test_progress_bar(llm, capsys):
    llm.generate(PROMPTS, SamplingParams(temperature=0, max_tokens=48), use_tqdm=True)
    err = capsys.readouterr().err
    assert "Processed prompts" in err and "tok/s" in err and "4/4" in err, err


def unknown_architecture_copy(tmp_path) -> str:
    """The default model with its general.architecture ("llama") renamed "mamba", an
    architecture the engine does not implement."""
    data = bytearray(open(MODEL, "rb").read())
    key = b"general.architecture"
    at = data.index(key) + len(key) + 4 + 8  # the key, its value type (u32), the string length (u64)
    assert data[at:at + 5] == b"llama"
    data[at:at + 5] = b"mamba"
    path = tmp_path / "unknown-architecture.gguf"
    path.write_bytes(bytes(data))
    return str(path)


def test_bad_inputs_raise(llm, tmp_path):
    with pytest.raises(ValueError, match="temperature"):
        llm.generate("hi", SamplingParams(temperature=-1))
    with pytest.raises(ValueError, match="vocabulary|token"):
        llm.generate([[10**7]])
    with pytest.raises(ValueError, match="2 sampling parameters for 1 prompts"):
        llm.generate("hi", [SamplingParams(), SamplingParams()])
    with pytest.raises(ValueError, match="no-such-model.gguf"):
        LLM("no-such-model.gguf")
    with pytest.raises(TypeError, match="unknown engine option 'max_seqs'"):
        LLM(MODEL, max_seqs=4)
    with pytest.raises(ValueError, match="mamba"):
        LLM(unknown_architecture_copy(tmp_path), threads=1)
    # The engine still serves after the refusals.
    assert llm.generate("hi", SamplingParams(max_tokens=2))[0].outputs[0].token_ids


def test_every_engine_option_of_the_cli_is_taken(llm):
    """The CLI's engine options by their Python names: all at once the greedy output is
    unchanged; max_num_seqs reaches the engine (one sequence at a time: a step per token);
    bad values raise."""
    params = SamplingParams(temperature=0, max_tokens=8, ignore_eos=True)
    expected = [o.outputs[0].token_ids for o in llm.generate(PROMPTS, params, use_tqdm=False)]
    options = dict(threads=1, max_num_seqs=1, max_num_batched_tokens=512, long_prefill_threshold=64, block_size=64,
                   kv_cache_dtype="f32", kv_cache_memory=KV_MEMORY, enable_prefix_caching=False,
                   kv_watermarks=(0, 0.02, 0.04), max_queue_wait=[0, 30, 60], queue_timeout_action="reject",
                   interactive_step_tokens=8, interactive_hold=0.5, memory_guard=True, memory_guard_high=0.95,
                   memory_guard_low=0.85, memory_limit=8 << 30, sla_tpot_p99=5.0, sla_ttft_p99=10.0, sla_window=1.0,
                   speculative="ngram", num_speculative_tokens=3, ngram_min=2, ngram_max=3, speculative_adaptive=False)
    one_at_a_time = LLM(MODEL, **options)
    outs = one_at_a_time.generate(PROMPTS, params, use_tqdm=False)
    assert [o.outputs[0].token_ids for o in outs] == expected
    # One sequence per step: each prompt takes its own prefill and at least two steps
    # for 8 tokens (at most 1 + 3 drafts a step); four at once take 9 steps in all.
    assert one_at_a_time.stats()["steps"] >= len(PROMPTS) * 3, one_at_a_time.stats()
    del one_at_a_time
    with pytest.raises(ValueError, match="kv_watermarks"):
        LLM(MODEL, kv_watermarks=(0.5, 0.1, 0))
    with pytest.raises(ValueError, match="queue_timeout_action"):
        LLM(MODEL, queue_timeout_action="drop")
    with pytest.raises(TypeError, match="memory_guard"):
        LLM(MODEL, memory_guard="off")
    with pytest.raises(TypeError, match="kv_watermarks"):
        LLM(MODEL, kv_watermarks=(0, 0.1))
    with pytest.raises(ValueError, match="speculative_model"):
        LLM(MODEL, speculative="ngram", speculative_model=MODEL)


def test_int8_kv_cache_holds_more_tokens():
    """kv_cache_dtype="q8_0" reaches the engine: the same kv_cache_memory holds 1.88x the
    blocks of f16 (rows of 34-byte blocks of 32 values) and the engine generates; an
    unknown name is refused with the accepted ones."""
    f16 = LLM(MODEL, threads=1, kv_cache_memory=KV_MEMORY)
    f16_blocks = f16.stats()["num_blocks"]
    del f16
    q8 = LLM(MODEL, threads=1, kv_cache_memory=KV_MEMORY, kv_cache_dtype="q8_0")
    assert 1.85 < q8.stats()["num_blocks"] / f16_blocks < 1.9, (q8.stats()["num_blocks"], f16_blocks)
    out = q8.generate("hi", SamplingParams(temperature=0, max_tokens=4, ignore_eos=True))
    assert len(out[0].outputs[0].token_ids) == 4
    del q8
    with pytest.raises(ValueError, match="q8_0"):
        LLM(MODEL, kv_cache_dtype="q4_0")


def test_admission_and_decode_headroom_reach_the_engine():
    """admission and decode_headroom, as --admission and --decode-headroom: on a pool of
    about 24 blocks, 16 requests of 48 tokens (4 blocks each) preempt one another under
    "first-chunk", never under "reserve" (each admitted with all its outputs reserved),
    and again under "reserve" when decode_headroom=1 reserves only one output each; the
    greedy tokens are the same all three ways. Bad values raise, naming the option."""
    prompts = [f"{p} (variant {i})" for i in range(4) for p in PROMPTS]
    params = SamplingParams(temperature=0, max_tokens=48, ignore_eos=True)
    small_pool = 24 * 16 * 23040  # 24 blocks of 16 tokens at 23040 bytes/token (f16 KV)
    runs = {}
    for name, options in [("first-chunk", dict(admission="first-chunk")), ("reserve", dict(admission="reserve")),
                          ("headroom 1", dict(decode_headroom=1))]:
        engine = LLM(MODEL, threads=2, kv_cache_memory=small_pool, **options)
        assert 20 <= engine.stats()["num_blocks"] <= 26, engine.stats()
        tokens = [o.outputs[0].token_ids for o in engine.generate(prompts, params, use_tqdm=False)]
        runs[name] = (tokens, engine.stats())
        del engine
        gc.collect()
    assert runs["first-chunk"][1]["preemptions"] > 0, runs["first-chunk"][1]
    assert runs["reserve"][1]["preemptions"] == 0, runs["reserve"][1]
    assert runs["headroom 1"][1]["preemptions"] > 0, runs["headroom 1"][1]
    for name, (tokens, stats) in runs.items():
        assert stats["finished_sequences"] == len(prompts), (name, stats)
        assert tokens == runs["reserve"][0], name
    with pytest.raises(ValueError, match="admission must be reserve or first-chunk, got 'fifo'"):
        LLM(MODEL, admission="fifo")
    with pytest.raises(TypeError, match="admission"):
        LLM(MODEL, admission=1)
    with pytest.raises(ValueError, match="decode_headroom: must be at least 1"):
        LLM(MODEL, decode_headroom=0)
    with pytest.raises(ValueError, match="max_num_seqs must not be negative"):
        LLM(MODEL, max_num_seqs=-1)


def test_moe_models_size_their_batch_as_the_cli_does(capfd):
    """Unset (or 0), max_num_seqs and max_num_batched_tokens are the CLI's auto: an MoE
    model's engine sizes them from the measured bandwidth, int8 peak and KV pool (the
    pool bounded at decode_headroom tokens a sequence) and prints the choice; a given
    value is kept; a dense model keeps 64 and 2048 without a word."""
    moe = os.path.join(SOURCE_DIR, "tests", "data", "model", "deepseek_v3_tiny_fp8")  # a checkpoint with a tokenizer
    capfd.readouterr()
    for options in [dict(), dict(max_num_seqs=0, max_num_batched_tokens=0)]:
        del_me = LLM(moe, threads=1, kv_cache_memory=1 << 24, decode_headroom=96, **options)
        del del_me
        err = capfd.readouterr().err
        assert "MoE batch: --max-num-seqs" in err and "of 96 tokens" in err, err
        assert "; in use: --max-num-seqs" in err, err
    fixed = LLM(moe, threads=1, kv_cache_memory=1 << 24, max_num_seqs=8, max_num_batched_tokens=100)
    out = fixed.generate("hello", SamplingParams(max_tokens=3, ignore_eos=True), use_tqdm=False)
    assert len(out[0].outputs[0].token_ids) == 3
    del fixed
    assert "MoE batch" not in capfd.readouterr().err
    half = LLM(moe, threads=1, kv_cache_memory=1 << 24, max_num_seqs=8)
    del half
    assert "in use: --max-num-seqs 8, --max-num-batched-tokens 2048" in capfd.readouterr().err
    dense = LLM(MODEL, threads=1, kv_cache_memory=KV_MEMORY)
    del dense
    assert "MoE batch" not in capfd.readouterr().err


def test_two_threads_generate_at_once(llm):
    """A long generation on one thread does not hold the GIL: a short one on the main
    thread finishes while it runs (batched beside it by the engine)."""
    long_done = threading.Event()

    def long_job():
        llm.generate(PROMPTS[1], SamplingParams(temperature=0, max_tokens=400, ignore_eos=True))
        long_done.set()

    t = threading.Thread(target=long_job)
    t.start()
    time.sleep(0.3)
    short = llm.generate(PROMPTS[0], SamplingParams(temperature=0, max_tokens=4))
    assert not long_done.is_set(), "the short request waited for the long one"
    assert len(short[0].outputs[0].token_ids) == 4
    t.join()
    assert long_done.is_set()


def test_two_threads_share_the_engines_steps(llm):
    """Two threads' calls run in the same engine steps, so together they take about half
    the steps of the same calls one after the other: what makes them faster than
    serialized (bench/python measures the time). A call holding the GIL would make the
    second wait, and the steps add up."""
    params = SamplingParams(temperature=0, max_tokens=64, ignore_eos=True)
    halves = [PROMPTS[:2], PROMPTS[2:]]

    def steps_of(run) -> int:
        assert wait_until_idle(llm)
        before = llm.stats()["steps"]
        run()
        return llm.stats()["steps"] - before

    serial_outputs = []
    serial = steps_of(lambda: serial_outputs.extend(llm.generate(h, params, use_tqdm=False) for h in halves))
    together_outputs = [None, None]
    start = threading.Barrier(2)

    def job(i):
        start.wait()
        together_outputs[i] = llm.generate(halves[i], params, use_tqdm=False)

    def run_together():
        threads = [threading.Thread(target=job, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)

    together = steps_of(run_together)
    assert [[o.outputs[0].token_ids for o in outs] for outs in together_outputs] == \
        [[o.outputs[0].token_ids for o in outs] for outs in serial_outputs]
    assert serial >= 128 and together <= 0.75 * serial, (serial, together)


def test_ctrl_c_aborts_cleanly(llm):
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        llm.generate(PROMPTS, SamplingParams(temperature=0, max_tokens=2000, ignore_eos=True))
    assert time.monotonic() - started < 30
    timer.join()
    assert wait_until_idle(llm, 5.0)
    # The aborted requests' KV blocks came back: a full-size batch still runs.
    outs = llm.generate(PROMPTS, SamplingParams(temperature=0, max_tokens=8))
    assert all(len(o.outputs[0].token_ids) == 8 for o in outs)


def test_deleting_the_llm_returns_its_memory():
    gc.collect()
    before = rss_bytes()
    llm = LLM(MODEL, threads=2, kv_cache_memory=256 << 20)
    llm.generate(PROMPTS * 8, SamplingParams(temperature=0, max_tokens=64, ignore_eos=True))
    loaded = rss_bytes()
    del llm
    gc.collect()
    after = rss_bytes()
    assert loaded > before + (64 << 20), (before, loaded)
    assert after <= before * 1.10, f"RSS {before >> 20} MiB before, {loaded >> 20} loaded, {after >> 20} after"


def test_the_installed_package_runs():
    """`pip install .` (scripts/setup.sh and scripts/test.sh run it) installed the package:
    it imports from site-packages, outside this build's PYTHONPATH, and generates."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = ("import deepbatch, sys; from deepbatch import LLM, SamplingParams; "
            f"llm = LLM({MODEL!r}, threads=1, kv_cache_memory={KV_MEMORY}); "
            "out = llm.generate('Hello', SamplingParams(temperature=0, max_tokens=4), use_tqdm=False); "
            "print(deepbatch.__file__, len(out[0].outputs[0].token_ids))")
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=tempfile.gettempdir(), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, f"the installed package fails (run: python3 -m pip install --no-build-isolation .):\n{r.stderr}"
    path, tokens = r.stdout.split()
    assert "site-packages" in path and tokens == "4", r.stdout


def test_a_raising_progress_callback_stops_the_call(llm):
    calls = []

    def progress(done, tokens):
        calls.append(tokens)
        raise RuntimeError("stop here")

    body = json.dumps({"prompt": PROMPTS[0], "temperature": 0, "max_tokens": 1500, "ignore_eos": True})
    with pytest.raises(RuntimeError, match="stop here"):
        llm._core.generate("completions", [body] * 2, progress)
    assert len(calls) == 1
    outs = llm.generate(PROMPTS, SamplingParams(temperature=0, max_tokens=8))
    assert all(len(o.outputs[0].token_ids) == 8 for o in outs)


def test_quantized_checkpoints_load_with_quantize():
    """FP8 and AWQ checkpoints (tests/data/model) load through LLM; quantize picks the type."""
    data = os.path.join(SOURCE_DIR, "tests", "data", "model")
    params = SamplingParams(max_tokens=3, ignore_eos=True)
    for name, quantize in [("deepseek_v3_tiny_fp8", "Q4_0"), ("deepseek_v3_tiny_fp8", None), ("qwen2_tiny_awq", None)]:
        llm = LLM(os.path.join(data, name), threads=2, kv_cache_memory=1 << 24, quantize=quantize)
        out = llm.generate(["hello"], params)
        assert len(out[0].outputs[0].token_ids) == 3
        del llm
        gc.collect()
    with pytest.raises(ValueError, match="quantize type must be one of"):
        LLM(os.path.join(data, "qwen2_tiny_awq"), threads=2, quantize="Q9_9")


def test_pack_loads_a_pre_packed_copy_with_the_same_output(llm, tmp_path, monkeypatch):
    """LLM(pack=True) writes the default model's pre-packed copy into the cache
    ($XDG_CACHE_HOME/deepbatch/packed) and greedy output is unchanged."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    params = SamplingParams(max_tokens=8, ignore_eos=True, temperature=0)
    want = [o.outputs[0].token_ids for o in llm.generate(["The capital of France is"], params)]
    packed = LLM(MODEL, threads=2, kv_cache_memory=KV_MEMORY, pack=True)
    got = [o.outputs[0].token_ids for o in packed.generate(["The capital of France is"], params)]
    assert got == want
    copies = os.listdir(tmp_path / "deepbatch" / "packed")
    assert len(copies) == 1 and copies[0].endswith(".gguf"), copies
    del packed
    gc.collect()
    with pytest.raises(TypeError, match="pack must be a bool"):
        LLM(MODEL, threads=2, pack="yes")
