"""Batch inference past one machine, on Ray Data: one deepbatch engine per actor, each
loaded once and fed batches of rows.

- build_processor(model, ...) maps a dataset of prompts to generated text;
- run_batch_file(input, output, model, ...) runs an OpenAI Batch API JSONL file (the
  format of `deepbatch run`) on the cluster and writes the OpenAI batch output.

Each batch of lines runs through the same batch job as `deepbatch run`, so a record is
exactly what it writes. Ray restarts an actor that dies and retries its batch; a batch's
records reach the output only once its task succeeded, so none is lost or written twice.
The output file is also the job's journal: records are appended as batches complete,
and a rerun skips the custom_ids it already holds.
"""
import json
import os
import tempfile
from typing import Callable, Dict, List, Optional

import numpy as np

from .sampling_params import SamplingParams


class BatchLinesActor:
    """For Dataset.map_batches over rows {"line": one request line of a batch file}:
    returns {"custom_id", "record"}, the OpenAI batch output record of each line."""

    def __init__(self, model: str, engine_kwargs: Optional[dict] = None, model_name: str = "deepbatch"):
        from .llm import LLM

        self._llm = LLM(model, **(engine_kwargs or {}))
        self._model_name = model_name

    def __call__(self, batch: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        with tempfile.TemporaryDirectory() as tmp:
            src, dst = os.path.join(tmp, "in.jsonl"), os.path.join(tmp, "out.jsonl")
            with open(src, "w") as f:
                for line in batch["line"]:
                    f.write(str(line).rstrip("\n") + "\n")
            self._llm._core.run_batch(src, dst, self._model_name)
            with open(dst) as f:
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


def _done_ids(output: str) -> set:
    """custom_ids that already have a record in `output` (the journal of an earlier run)."""
    if not os.path.exists(output):
        return set()
    done = set()
    with open(output) as f:
        for line in f:
            if line.strip():
                try:
                    done.add(json.loads(line).get("custom_id"))
                except json.JSONDecodeError:
                    break  # a torn last line: its request runs again
    return done


def _pending_lines(input_path: str, done: set) -> List[str]:
    lines = []
    with open(input_path) as f:
        for line in f:
            if not line.strip():
                continue
            try:
                custom_id = json.loads(line).get("custom_id")
            except (json.JSONDecodeError, AttributeError):
                custom_id = None
            if custom_id is None or custom_id not in done:
                lines.append(line.rstrip("\n"))
    return lines


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
    done = _done_ids(output_path)
    lines = _pending_lines(input_path, done)
    written = 0
    if lines:
        ds = ray.data.from_items([{"line": line} for line in lines])
        ds = ds.map_batches(
            BatchLinesActor,
            fn_constructor_kwargs={"model": model, "engine_kwargs": _actor_options(engine_kwargs, cpus_per_actor),
                                   "model_name": model_name},
            concurrency=actors, num_cpus=cpus_per_actor, batch_size=batch_size)
        with open(output_path, "a") as out:
            for batch in ds.iter_batches(batch_format="numpy", batch_size=None):
                for custom_id, record in zip(batch["custom_id"], batch["record"]):
                    if custom_id and custom_id in done:
                        continue  # never twice, whatever the cluster did
                    if custom_id:
                        done.add(custom_id)
                    out.write(str(record) + "\n")
                    written += 1
                out.flush()
                os.fsync(out.fileno())
    return {"records": written, "skipped": len(done) - written, "seconds": time.monotonic() - started}
