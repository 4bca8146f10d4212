"""deepbatch.ray on a real local Ray cluster (a head without CPUs and two worker
processes of one CPU each, so each actor's engine gets one thread): a 200-request batch
file gives, record for record, what `deepbatch run` gives (greedy), each custom_id once,
also when one actor is killed (SIGKILL) mid-run; and a rerun resumes from the output."""
import fcntl
import json
import os
import signal
import subprocess
import tempfile
import threading
import time

import pytest
import ray
from ray.cluster_utils import Cluster

from deepbatch import SamplingParams
from deepbatch.ray import build_processor, run_batch_file

SOURCE_DIR = os.environ["DEEPBATCH_SOURCE_DIR"]
BINARY = os.environ["DEEPBATCH_BINARY"]
MODEL = os.path.join(SOURCE_DIR, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
ENGINE = {"kv_cache_memory": 64 << 20}
TOPICS = ["copper", "rain", "a lighthouse", "prime numbers", "bread", "the moon", "rivers", "chess", "owls", "glass"]


# Run time (one of the suite's slowest, tests/README.md): a real local Ray cluster, started
# once for the module, with an engine per actor on one thread; the 200-request reference
# run and the actor killed mid-run are what the module checks.
@pytest.fixture(scope="module")
def cluster():
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    for _ in range(2):
        c.add_node(num_cpus=1)
    ray.init(address=c.address, log_to_driver=False)
    yield c
    ray.shutdown()
    c.shutdown()


@pytest.fixture(scope="module")
def batch_file(tmp_path_factory):
    """200 greedy requests, completions and chats, and `deepbatch run`'s answers to them."""
    d = tmp_path_factory.mktemp("ray_batch")
    src = d / "in.jsonl"
    with open(src, "w") as f:
        for i in range(200):
            topic = TOPICS[i % len(TOPICS)]
            if i % 2:
                url, body = "/v1/chat/completions", {"messages": [{"role": "user", "content": f"Say something about {topic} ({i})."}]}
            else:
                url, body = "/v1/completions", {"prompt": f"Fact {i} about {topic}:"}
            body.update({"model": "m", "temperature": 0, "max_tokens": 12 + i % 5})
            f.write(json.dumps({"custom_id": f"req-{i}", "method": "POST", "url": url, "body": body}) + "\n")
    expected = d / "expected.jsonl"
    subprocess.run([BINARY, "run", "-m", MODEL, "-t", "2", "--kv-cache-memory", str(ENGINE["kv_cache_memory"]),
                    "-i", str(src), "-o", str(expected), "--no-progress"], check=True, capture_output=True, timeout=300)
    return src, read_records(expected)


def read_records(path) -> dict:
    records = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            assert r["custom_id"] not in records, f"{r['custom_id']} twice"
            records[r["custom_id"]] = r
    return records


def answers(record: dict):
    body = record["response"]["body"]
    texts = [c.get("text", c.get("message", {}).get("content")) for c in body["choices"]]
    return record["response"]["status_code"], texts, [c["finish_reason"] for c in body["choices"]], body["usage"]


def expect_same(got: dict, expected: dict):
    assert sorted(got) == sorted(expected)
    for custom_id, record in expected.items():
        assert answers(got[custom_id]) == answers(record), custom_id


def test_a_batch_file_equals_deepbatch_run(cluster, batch_file, tmp_path):
    src, expected = batch_file
    out = tmp_path / "out.jsonl"
    summary = run_batch_file(str(src), str(out), MODEL, ENGINE, actors=2, cpus_per_actor=1, batch_size=20)
    assert summary["records"] == 200
    expect_same(read_records(out), expected)
    # A rerun finds every record in the output (its journal) and runs nothing.
    assert run_batch_file(str(src), str(out), MODEL, ENGINE, actors=2)["records"] == 0
    assert len(read_records(out)) == 200


def record_keys(path) -> list:
    """Every record as (custom_id, error code, error message or answers), sorted: bad lines
    may share a custom_id (a repeated one) or have none."""
    keys = []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r["error"] is not None:
                keys.append((str(r["custom_id"]), r["error"]["code"], r["error"]["message"]))
            else:
                keys.append((r["custom_id"], "", repr(answers(r))))
    return sorted(keys)


def test_bad_lines_and_a_repeated_custom_id_get_deepbatch_runs_records(cluster, tmp_path):
    """A repeated custom_id far from its first line (another batch), bad JSON, a line
    without custom_id, a bad body and a blank line: the same records as `deepbatch run`,
    their line numbers included; a rerun writes nothing, and a journal cut mid-record is
    completed to the same records."""
    lines = []
    for i in range(24):
        body = {"prompt": f"Fact {i} about {TOPICS[i % len(TOPICS)]}:", "temperature": 0, "max_tokens": 6}
        lines.append(json.dumps({"custom_id": f"req-{i}", "method": "POST", "url": "/v1/completions", "body": body}))
    lines[11] = lines[11].replace('"temperature": 0', '"temperature": -1')
    lines.insert(2, '{"custom_id": "broken", "method": ')
    lines.insert(6, json.dumps({"method": "POST", "url": "/v1/completions", "body": {"prompt": "x"}}))
    lines.insert(14, "   ")
    lines.insert(24, lines[1].replace("Fact 1 ", "Another fact "))  # req-1 again, 23 lines on
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n")
    expected = tmp_path / "expected.jsonl"
    subprocess.run([BINARY, "run", "-m", MODEL, "-t", "2", "--kv-cache-memory", str(ENGINE["kv_cache_memory"]),
                    "-i", str(src), "-o", str(expected), "--no-progress"], check=True, capture_output=True, timeout=300)
    want = record_keys(expected)
    codes = sorted(k[1] for k in want if k[1])
    assert codes == ["duplicate_custom_id", "invalid_json", "invalid_value", "missing_custom_id"], codes

    out = tmp_path / "out.jsonl"
    with open(out, "ab") as busy:  # another writer holds the output: refused, nothing written
        fcntl.flock(busy.fileno(), fcntl.LOCK_EX)
        with pytest.raises(RuntimeError, match="another process is writing"):
            run_batch_file(str(src), str(out), MODEL, ENGINE, actors=2)
    assert out.stat().st_size == 0
    summary = run_batch_file(str(src), str(out), MODEL, ENGINE, actors=2, cpus_per_actor=1, batch_size=4)
    assert summary["records"] == len(want)
    assert record_keys(out) == want
    assert run_batch_file(str(src), str(out), MODEL, ENGINE, actors=2, batch_size=4)["records"] == 0

    with open(out, "rb") as f:
        kept = f.read().split(b"\n")
    out.write_bytes(b"\n".join(kept[:10]) + b"\n" + kept[10][:15])  # 10 records and a torn one
    assert run_batch_file(str(src), str(out), MODEL, ENGINE, actors=2, batch_size=4)["records"] == len(want) - 10
    assert record_keys(out) == want


def actor_pids():
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().decode(errors="replace")
        except OSError:
            continue
        if "BatchLinesActor" in cmd:
            pids.append(int(pid))
    return pids


def test_a_killed_actor_loses_and_repeats_nothing(cluster, batch_file, tmp_path):
    """The first 100 requests in batches of 10; an actor is killed once records appear."""
    full, all_expected = batch_file
    src = tmp_path / "in.jsonl"
    with open(full) as f:
        src.write_text("".join(f.readlines()[:100]))
    expected = {k: all_expected[k] for k in (f"req-{i}" for i in range(100))}
    out = tmp_path / "out.jsonl"
    result = {}
    job = threading.Thread(target=lambda: result.update(
        run_batch_file(str(src), str(out), MODEL, ENGINE, actors=2, cpus_per_actor=1, batch_size=10)))
    job.start()
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and time.monotonic() < deadline and job.is_alive():
        pids = actor_pids()
        if pids and out.exists() and out.stat().st_size > 0:
            killed = pids[0]
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.2)
    job.join(timeout=300)
    assert killed is not None, "no actor was running to kill"
    assert not job.is_alive()
    expect_same(read_records(out), expected)


def test_build_processor_maps_a_dataset_of_prompts(cluster):
    prompts = [f"Fact {i} about {TOPICS[i]}:" for i in range(len(TOPICS))]
    processor = build_processor(MODEL, ENGINE, SamplingParams(temperature=0, max_tokens=8, ignore_eos=True), concurrency=2)
    rows = sorted(processor(ray.data.from_items([{"prompt": p} for p in prompts])).take_all(), key=lambda r: r["prompt"])
    assert [r["prompt"] for r in rows] == sorted(prompts)
    assert all(r["num_generated_tokens"] == 8 and r["finish_reason"] == "length" for r in rows)
    assert all(r["generated_text"] for r in rows)
