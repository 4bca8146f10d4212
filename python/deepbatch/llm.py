"""LLM: one engine over one model, for offline batches from Python (vLLM's LLM class)."""
import json
import sys
from typing import Dict, List, Optional, Sequence, Union

from . import _core
from .outputs import CompletionOutput, Logprob, RequestOutput
from .sampling_params import SamplingParams

Prompt = Union[str, List[int], Dict[str, object]]
Message = Dict[str, object]


class LLM:
    """Loads `model` (a GGUF file or checkpoint directory) and starts an engine on it.

    Engine options (None: the CLI's default) are the CLI's engine options with
    underscores (`deepbatch run --help`): threads (0 = all cores), max_num_seqs and
    max_num_batched_tokens (None or 0 = auto: 64 and 2048, for an MoE model sized from
    the measured read bandwidth, int8 peak and KV pool, the choice printed to stderr at
    start), long_prefill_threshold, block_size (16 or 64), kv_cache_dtype
    ("f16", "bf16", "f32", "q8_0"), kv_cache_memory (bytes), kv_cache_fraction (of available
    memory when kv_cache_memory is unset), enable_prefix_caching, admission ("reserve":
    admit a request only when its prompt and its next decode_headroom outputs fit beside
    what the running ones still need; "first-chunk": as soon as its first chunk fits),
    decode_headroom (outputs, >= 1); per priority class (three
    numbers) kv_watermarks and max_queue_wait, queue_timeout_action ("promote" or
    "reject"), interactive_step_tokens, interactive_hold (seconds); memory_guard (bool),
    memory_guard_high, memory_guard_low, memory_limit (bytes); sla_tpot_p99, sla_ttft_p99,
    sla_window (seconds); speculative ("ngram", "draft_model", "mtp"), speculative_model,
    num_speculative_tokens, ngram_min, ngram_max, speculative_adaptive (bool). A load
    option besides: quantize, the type an FP8 / AWQ / GPTQ checkpoint's matrices are
    converted to at load ("Q8_0", "Q4_0", "Q4_1", "Q4_K", "F16", ...; None: Q8_0 for
    FP8, Q4_1 for AWQ / GPTQ), as `deepbatch run --quantize`; and pack (bool), a GGUF
    file loaded through its copy pre-packed for this CPU, written on first use, as
    `deepbatch run --pack`. Raises
    ValueError for a model that cannot be opened or a value out of range, TypeError for an
    unknown option or a value of the wrong type.
    """

    def __init__(self, model: str, **engine_options):
        self._core = _core.Core(str(model), dict(engine_options))
        self._next_id = 0

    def generate(
        self,
        prompts: Union[Prompt, Sequence[Prompt]],
        sampling_params: Optional[Union[SamplingParams, Sequence[SamplingParams]]] = None,
        use_tqdm: Optional[bool] = None,
    ) -> List[RequestOutput]:
        """Completes each prompt (a string, a list of token ids, or {"prompt": ...} /
        {"prompt_token_ids": [...]}) with its sampling parameters (one for all, or one per
        prompt). Returns one RequestOutput per prompt, in input order. The engine batches
        them; the GIL is released while it runs, and Ctrl-C aborts them all. use_tqdm: a
        progress bar with tokens/s (None: when stderr is a terminal)."""
        prompts = _prompt_list(prompts)
        params = _params_list(sampling_params, len(prompts))
        bodies = [json.dumps({"prompt": p, **sp.request_fields(chat=False)}) for p, sp in zip(prompts, params)]
        results = self._run("completions", bodies, use_tqdm)
        return [self._output(r, p if isinstance(p, str) else None, sp) for r, p, sp in zip(results, prompts, params)]

    def generate_stream(self, prompt: Prompt, sampling_params: Optional[SamplingParams] = None) -> "RequestStream":
        """One prompt's output as it grows: a RequestOutput (text and tokens so far) after
        each step that added to it; the last one has finished=True and equals what
        generate() returns. Closing the stream (or dropping it) early aborts the request."""
        params = sampling_params or SamplingParams()
        p = _prompt_list(prompt)
        if len(p) != 1:
            raise ValueError("generate_stream takes one prompt")
        body = json.dumps({"prompt": p[0], **params.request_fields(chat=False)})
        return self._stream(self._core.stream("completions", body), p[0] if isinstance(p[0], str) else None, params)

    def _stream(self, stream, prompt: Optional[str], params: SamplingParams) -> "RequestStream":
        return RequestStream(self, stream, prompt, params)

    def _run(self, endpoint: str, bodies: List[str], use_tqdm: Optional[bool]) -> list:
        if use_tqdm is None:
            use_tqdm = sys.stderr.isatty()
        bar = None
        if use_tqdm:
            try:
                from tqdm import tqdm
            except ImportError:
                use_tqdm = False
            else:
                bar = tqdm(total=len(bodies), desc="Processed prompts", unit="req", dynamic_ncols=True)
        if not use_tqdm:
            return self._core.generate(endpoint, bodies)
        state = {"tokens": 0}

        def progress(done: int, tokens: int) -> None:
            state["tokens"] = tokens
            rate = tokens / bar.format_dict["elapsed"] if bar.format_dict["elapsed"] > 0 else 0.0
            bar.set_postfix_str(f"output {rate:.1f} tok/s", refresh=False)
            bar.update(done - bar.n)

        try:
            results = self._core.generate(endpoint, bodies, progress)
            progress(len(bodies), sum(len(c["token_ids"]) for r in results for c in r["choices"]))
            return results
        finally:
            bar.close()

    def chat(
        self,
        messages: Union[Sequence[Message], Sequence[Sequence[Message]]],
        sampling_params: Optional[Union[SamplingParams, Sequence[SamplingParams]]] = None,
        use_tqdm: Optional[bool] = None,
    ) -> List[RequestOutput]:
        """Answers one conversation (a list of {"role", "content"} messages) or a list of
        them, rendered with the model's chat template."""
        conversations = [messages] if messages and isinstance(messages[0], dict) else list(messages)
        params = _params_list(sampling_params, len(conversations))
        bodies = [json.dumps({"messages": c, **sp.request_fields(chat=True)}) for c, sp in zip(conversations, params)]
        results = self._run("chat", bodies, use_tqdm)
        return [self._output(r, None, sp) for r, sp in zip(results, params)]

    def chat_stream(self, messages: Sequence[Message], sampling_params: Optional[SamplingParams] = None) -> "RequestStream":
        """generate_stream for one conversation."""
        params = sampling_params or SamplingParams()
        body = json.dumps({"messages": list(messages), **params.request_fields(chat=True)})
        return self._stream(self._core.stream("chat", body), None, params)

    def get_tokenizer(self) -> "Tokenizer":
        return Tokenizer(self._core)

    def encode(self, text: str) -> List[int]:
        return self.get_tokenizer().encode(text)

    def decode(self, token_ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        return self.get_tokenizer().decode(token_ids, skip_special_tokens)

    def stats(self) -> Dict[str, float]:
        """The engine's counters now: running, waiting (sequences); prompt_tokens,
        generated_tokens, steps (model steps so far), preemptions (sequences preempted by
        recompute so far), finished_sequences; num_blocks, free_blocks, kv_usage (the KV
        pool)."""
        return self._core.stats()

    def get_num_unfinished_requests(self) -> int:
        """Sequences running or waiting in the engine (a request with n samples counts n)."""
        st = self._core.stats()
        return st["running"] + st["waiting"]

    def _new_id(self) -> str:
        self._next_id += 1
        return str(self._next_id - 1)

    def _output(self, result: dict, prompt: Optional[str], params: SamplingParams,
                request_id: Optional[str] = None) -> RequestOutput:
        ids = result["prompt_token_ids"]
        if prompt is None:
            prompt = self._core.decode(ids, False)
        outputs = [_completion(i, c, params) for i, c in enumerate(result["choices"])]
        return RequestOutput(request_id=request_id or self._new_id(), prompt=prompt, prompt_token_ids=ids,
                             outputs=outputs, finished=result["finished"])


class RequestStream:
    """An iterator over one request's growing RequestOutput (LLM.generate_stream and
    chat_stream). close() aborts the request when it has not finished; it may be called
    from another thread while one waits in next(), which then returns the aborted end."""

    def __init__(self, llm: LLM, stream, prompt: Optional[str], params: SamplingParams):
        self._llm = llm
        self._stream = stream
        self._prompt = prompt
        self._params = params
        self._request_id = llm._new_id()
        self._finished = False

    def __iter__(self) -> "RequestStream":
        return self

    def __next__(self) -> RequestOutput:
        state = next(self._stream)
        self._finished = state["finished"]
        return self._llm._output(state, self._prompt, self._params, self._request_id)

    def close(self) -> None:
        if not self._finished:
            self._stream.abort()

    def __del__(self) -> None:
        self.close()


class Tokenizer:
    """The model's tokenizer and chat template (LLM.get_tokenizer())."""

    def __init__(self, core):
        self._core = core

    def encode(self, text: str) -> List[int]:
        """Token ids of `text` as a prompt (with the model's BOS where it uses one)."""
        return self._core.encode(text)

    def decode(self, token_ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        return self._core.decode(list(token_ids), skip_special_tokens)

    def apply_chat_template(self, messages: Sequence[Message], tokenize: bool = False,
                            add_generation_prompt: bool = True) -> Union[str, List[int]]:
        """The conversation as the model's chat template renders it (token ids with
        tokenize=True, as LLM.chat prompts it)."""
        text = self._core.render_chat(json.dumps(list(messages)), add_generation_prompt)
        return self._core.encode_rendered(text) if tokenize else text


def _completion(index: int, choice: dict, params: SamplingParams) -> CompletionOutput:
    logprobs = None
    cumulative = None
    if params.logprobs is not None and choice["logprobs"] is not None:
        logprobs = []
        for token, lp, top in zip(choice["token_ids"], choice["logprobs"], choice["top_logprobs"]):
            entry = {t: Logprob(logprob=v, rank=rank + 1) for rank, (t, v) in enumerate(top)}
            entry.setdefault(token, Logprob(logprob=lp))
            logprobs.append(entry)
        cumulative = float(sum(choice["logprobs"]))
    return CompletionOutput(
        index=index,
        text=choice["text"],
        token_ids=list(choice["token_ids"]),
        cumulative_logprob=cumulative,
        logprobs=logprobs,
        finish_reason=choice["finish_reason"] or None,  # None while it runs
        stop_reason=choice["stop_reason"] or None,
    )


def _prompt_list(prompts) -> list:
    """Prompts as OpenAI `prompt` values: a string or a list of token ids each."""
    if isinstance(prompts, (str, dict)) or (isinstance(prompts, list) and prompts and isinstance(prompts[0], int)):
        prompts = [prompts]
    out = []
    for p in prompts:
        if isinstance(p, dict):
            if "prompt_token_ids" in p:
                p = list(p["prompt_token_ids"])
            elif "prompt" in p:
                p = p["prompt"]
            else:
                raise ValueError("a prompt dict needs 'prompt' or 'prompt_token_ids'")
        if not isinstance(p, (str, list)):
            raise TypeError(f"a prompt must be a string, a list of token ids or a dict, got {type(p).__name__}")
        out.append(p)
    return out


def _params_list(params, count: int) -> List[SamplingParams]:
    if params is None:
        return [SamplingParams()] * count
    if isinstance(params, SamplingParams):
        return [params] * count
    params = list(params)
    if len(params) != count:
        raise ValueError(f"{len(params)} sampling parameters for {count} prompts")
    return params
