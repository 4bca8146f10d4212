"""Shared pieces of the deepseek2 end-to-end tests: test-sized random-weight deepseek2
GGUFs with DeepSeek-V3's tokenizer and chat template, written at test time by
bench/make_random_gguf.py into a scratch directory, and helpers to run the CLI on them.

Random weights give random text, so the tests check structure (exit codes, token counts,
finish reasons, the same greedy text for the same tokens), not content."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

from e2e_main import check  # noqa: E402 - the scripts use it as m.check too

# shape -> extra make_random_gguf.py flags: V2's form with the legacy attn_kv_b in Q4_0; V3's
# form (q_lora, sigmoid router, group-limited routing) with attn_k_b / attn_v_b in Q4_K (Q5_0,
# llama-quantize's fallback, where rows are not a multiple of 256).
MODELS = {
    "deepseek-v2-mini": [],
    "deepseek-v3-mini": ["--split-kv", "--type", "q4_k"],  # Q5_0 for rows not a multiple of 256
}
# Both shapes: 3 layers of one latent row, kv_lora 64 + rope 16, in F16: 3 x 80 x 2 bytes.
KV_SUMMARY = re.compile(r"KV cache: Latent, 3 layers x 80 \(V = first 64\), F16, 480 bytes/token, "
                        r"\d+ tokens/GiB; \d+ blocks of 16 tokens")
# DeepSeek-V3's chat template: {{bos_token}}{{system}}<｜User｜>{{content}}...<｜Assistant｜>
USER, ASSISTANT = "<\uff5cUser\uff5c>", "<\uff5cAssistant\uff5c>"
ENGINE_ARGS = ["-t", "2", "--kv-cache-memory", "16M"]


def chat_as_text(user, system=""):
    """The text of the template's rendering of one user turn (the BOS is added by tokenizing)."""
    return system + USER + user + ASSISTANT


def stem(model):
    """The model file's name without .gguf: a prefix for the files a test writes beside it."""
    return os.path.splitext(os.path.basename(model))[0]


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True, help="path of the deepbatch executable")
    p.add_argument("--source-dir", required=True, help="repository root")
    p.add_argument("--work-dir", help="where the scratch directory goes (default: the system's temp dir)")
    return p.parse_args(argv)


class Scratch:
    """`with Scratch(args, name) as s:` a fresh directory (removed on exit) holding the models."""

    def __init__(self, args, name):
        if args.work_dir:
            os.makedirs(args.work_dir, exist_ok=True)
        self.args = args
        self.dir = tempfile.mkdtemp(prefix=f"deepbatch_{name}_", dir=args.work_dir)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def write_model(self, shape):
        """Writes the random-weight GGUF of `shape` (about 50 MB, a second or two); returns its path."""
        for module in ("numpy", "gguf"):
            try:
                __import__(module)
            except ImportError:
                raise RuntimeError(f"{sys.executable} lacks the Python package {module!r} that "
                                   "bench/make_random_gguf.py needs: run scripts/setup.sh") from None
        src = self.args.source_dir
        out = self.path(shape + ".gguf")
        subprocess.run([sys.executable, os.path.join(src, "bench", "make_random_gguf.py"), "--shape", shape,
                        "--tokenizer-json", os.path.join(src, "tests", "data", "tokenizer", "deepseek-v3"),
                        "--out", out, *MODELS[shape]], check=True, stdout=subprocess.DEVNULL, timeout=120)
        return out


def deepbatch(args, *cmd, expect_rc=0, timeout=120):
    """Runs `deepbatch *cmd`; checks its exit code; returns the CompletedProcess (text)."""
    r = subprocess.run([args.binary, *cmd], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if r.returncode != expect_rc:
        raise AssertionError(f"deepbatch {' '.join(cmd)}: exit {r.returncode}, expected {expect_rc}\n"
                             f"stdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-4000:]}")
    return r


def check_choices(body, max_tokens, n=1):
    """Each choice stopped by length (max_tokens tokens) or EOS (fewer); usage adds up."""
    choices, usage = body["choices"], body["usage"]
    check(sorted(c["index"] for c in choices) == list(range(n)), f"choices {choices}")
    check(all(c["finish_reason"] in ("length", "stop") for c in choices), f"finish reasons {choices}")
    check(usage["prompt_tokens"] > 0 and usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"],
          f"usage {usage}")
    if all(c["finish_reason"] == "length" for c in choices):
        check(usage["completion_tokens"] == n * max_tokens, f"usage {usage} for {n} x {max_tokens} tokens")
    else:
        check(0 < usage["completion_tokens"] <= n * max_tokens, f"usage {usage}")


def check_kv_summary(text):
    check(KV_SUMMARY.search(text), f"no latent KV pool summary in:\n{text[-2000:]}")
