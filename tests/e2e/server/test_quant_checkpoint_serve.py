"""deepbatch serve on a quantized checkpoint (the FP8 DeepSeek-V3 fixture), as the
directory and as the pre-packed GGUF file `deepbatch convert DIR -o OUT --pack`
writes once: /v1/completions answers each with the greedy text `deepbatch
generate` gives on the directory."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
import server_fixture  # noqa: E402
from e2e_main import check, parse_args, run_tests  # noqa: E402

FIXTURE = os.path.join("tests", "data", "model", "deepseek_v3_tiny_fp8")
PROMPT = "hello world"
MAX_TOKENS = 12
COMMON = ["-t", "2", "--kv-cache-memory", "16M"]


def generate_text(binary, model):
    """The greedy continuation `deepbatch generate` prints after the prompt."""
    r = subprocess.run([binary, "generate", "-m", model, "-p", PROMPT, "-n", str(MAX_TOKENS), *COMMON],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, f"generate failed: {r.stderr}")
    check(r.stdout.startswith(PROMPT) and r.stdout.endswith("\n"), f"generate printed {r.stdout!r}")
    return r.stdout[len(PROMPT):-1]


def served_text(binary, source_dir, model):
    """The text of a greedy /v1/completions request to a server on `model`."""
    proc, base = server_fixture.start_server(binary, source_dir, ["--served-model-name", "m", *COMMON], model=model)
    try:
        body = {"model": "m", "prompt": PROMPT, "max_tokens": MAX_TOKENS, "temperature": 0}
        req = urllib.request.Request(base + "/v1/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            reply = json.load(r)
    finally:
        rc = server_fixture.stop_server(proc)
    check(rc == 0, f"server exited with {rc} after SIGTERM")
    return reply["choices"][0]["text"]


def main():
    args = parse_args()
    directory = os.path.join(args.source_dir, FIXTURE)
    tmp = tempfile.mkdtemp(prefix="deepbatch_quant_serve_")
    try:
        packed = os.path.join(tmp, "v3_fp8.packed.gguf")
        r = subprocess.run([args.binary, "convert", directory, "-o", packed, "--pack", "-t", "2"],
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 0, f"convert failed: {r.stderr}")
        want = generate_text(args.binary, directory)
        check(want != "", "generate produced no text")

        def test_serve_directory():
            got = served_text(args.binary, args.source_dir, directory)
            check(got == want, f"served {got!r}, generate {want!r}")

        def test_serve_converted_packed_file():
            got = served_text(args.binary, args.source_dir, packed)
            check(got == want, f"served {got!r}, generate {want!r}")

        return run_tests([test_serve_directory, test_serve_converted_packed_file])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
