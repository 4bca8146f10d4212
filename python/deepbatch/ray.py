"""Batch inference past one machine, on Ray Data: one deepbatch engine per actor, each
loaded once and fed batches of rows.

- build_processor(model, ...) maps a dataset of prompts to generated text;
- run_batch_file(input, output, model, ...) runs an OpenAI Batch API JSONL file (the
  format of `deepbatch run`) on the cluster and writes the OpenAI batch output.

The driver plans the file as `deepbatch run` does (bad lines, a repeated custom_id
included, get their error records from it); each batch of the remaining lines runs
through the same batch job on an actor, keeping its line numbers, so a record is
exactly what `deepbatch run` writes. Ray restarts an actor that dies and retries its
batch; a batch's records reach the output only once its task succeeded, so none is lost
or written twice. The output file is also the job's journal: records are appended and
synced as batches complete, and a rerun writes only the records still missing.
"""
import fcntl
import json
import os
import tempfile
from typing import Callable, Dict, List, Optional

import numpy as np

from . import _core
from .sampling_params import SamplingParams


class BatchLinesActor:
    """For Dataset.map_batches over rows {"line_no", "line"} (request lines of a batch
    file and their numbers there): returns {"custom_id", "record"}, the OpenAI batch
    output record of each line."""

    def __init__(self, model: str, engine_kwargs: Optional[dict] = None, model_name: str = "deepbatch"):
        from .llm import LLM

        self._llm = LLM(model, **(engine_kwargs or {}))
        self._model_name = model_name

    def __call__(self, batch: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        lines = [(int(n), str(line)) for n, line in zip(batch["line_no"], batch["line"])]
        with tempfile.TemporaryDirectory() as tmp:
            dst = os.path.join(tmp, "out.jsonl")
            self._llm._core.run_batch_lines(lines, dst, self._model_name)
            with open(dst, encoding="utf-8") as f:
                records = [line.rstrip("\n") for line in f if line.strip()]
        ids = [json.loads(r).get("custom_id") or "" for r in records]
        return {"custom_id": np.array(ids, dtype=object), "record": np.array(records, dtype=object)}


class PromptActor:
    """For Dataset.map_batches over rows with a prompt column: adds generated_text,
    num_generated_tokens and finish_reason (greedy or as `sampling_params` says)."""

    def __init__(self, model: str, engine_kwargs: Optional[dict] = None,
                 sampling_params: Optional[SamplingParams] = None, prompt_column: str = "prompt"):
        from .llm import LLM

        self._llm = LLM(model, **(engine_kwargs or {}))
        self._params = sampling_params or SamplingParams()
        self._column = prompt_column

    def __call__(self, batch: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        outs = self._llm.generate([str(p) for p in batch[self._column]], self._params, use_tqdm=False)
        batch = dict(batch)
        batch["generated_text"] = np.array([o.outputs[0].text for o in outs], dtype=object)
        batch["num_generated_tokens"] = np.array([len(o.outputs[0].token_ids) for o in outs])
        batch["finish_reason"] = np.array([o.outputs[0].finish_reason for o in outs], dtype=object)
        return batch


def _actor_options(engine_kwargs: Optional[dict], cpus_per_actor: int) -> dict:
    kwargs = dict(engine_kwargs or {})
    kwargs.setdefault("threads", cpus_per_actor)
    return kwargs


def build_processor(model: str, engine_kwargs: Optional[dict] = None,
                    sampling_params: Optional[SamplingParams] = None, *, concurrency: int = 1,
                    cpus_per_actor: int = 1, batch_size: int = 16,
                    prompt_column: str = "prompt") -> Callable:
    """processor(ds) -> ds with generated_text, num_generated_tokens and finish_reason
    added: `concurrency` actors of `cpus_per_actor` CPUs (and engine threads) each."""

    def processor(ds):
        return ds.map_batches(
            PromptActor,
            fn_constructor_kwargs={"model": model, "engine_kwargs": _actor_options(engine_kwargs, cpus_per_actor),
                                   "sampling_params": sampling_params, "prompt_column": prompt_column},
            concurrency=concurrency, num_cpus=cpus_per_actor, batch_size=batch_size)

    return processor


def _numbered_lines(input_path: str, wanted: List[int]) -> List[dict]:
    """Rows {"line_no", "line"} of the lines numbered `wanted` (ascending), split on
    newlines alone as the batch job reads them."""
    rows = []
    wanted_iter = iter(wanted)
    next_wanted = next(wanted_iter, None)
    with open(input_path, "rb") as f:
        for line_no, raw in enumerate(f, start=1):
            if next_wanted is None:
                break
            if line_no == next_wanted:
                rows.append({"line_no": line_no, "line": raw.rstrip(b"\n").decode("utf-8")})
                next_wanted = next(wanted_iter, None)
    return rows


def run_batch_file(input_path: str, output_path: str, model: str, engine_kwargs: Optional[dict] = None, *,
                   actors: int = 2, cpus_per_actor: int = 1, batch_size: int = 8,
                   model_name: str = "deepbatch", ray_address: Optional[str] = None) -> dict:
    """Runs the batch file on the Ray cluster at `ray_address` ("auto": the running one;
    None: the one this process is connected to, or a new local one) with `actors`
    engines. Appends each record to output_path as its batch completes. Returns
    {"records", "skipped", "seconds"}."""
    import time

    import ray

    if not ray.is_initialized():
        ray.init(address=ray_address, log_to_driver=False)
    started = time.monotonic()
    # The same plan as `deepbatch run` makes: the journal's torn tail is cut, bad lines
    # (a repeated custom_id included, wherever its first line is) get their records
    # here, and only requests without a record are handed to the actors.
    written = 0
    with open(output_path, "ab") as out:
        try:  # one writer at a time, as for `deepbatch run` (the same lock)
            fcntl.flock(out.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RuntimeError(f"{output_path}: another process is writing this output file") from None
        plan = _core.plan_batch_file(input_path, output_path)
        rows = _numbered_lines(input_path, plan["pending"])

        def append(records) -> None:
            nonlocal written
            for record in records:
                out.write(str(record).encode("utf-8") + b"\n")
                written += 1
            out.flush()
            os.fsync(out.fileno())

        append(plan["records"])
        if rows:
            ds = ray.data.from_items(rows)
            ds = ds.map_batches(
                BatchLinesActor,
                fn_constructor_kwargs={"model": model,
                                       "engine_kwargs": _actor_options(engine_kwargs, cpus_per_actor),
                                       "model_name": model_name},
                concurrency=actors, num_cpus=cpus_per_actor, batch_size=batch_size)
            done = set()
            for batch in ds.iter_batches(batch_format="numpy", batch_size=None):
                fresh = []
                for custom_id, record in zip(batch["custom_id"], batch["record"]):
                    if custom_id not in done:  # never twice, whatever the cluster did
                        done.add(custom_id)
                        fresh.append(record)
                append(fresh)
    return {"records": written, "skipped": plan["skipped"], "seconds": time.monotonic() - started}
