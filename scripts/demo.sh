#!/usr/bin/env bash
# Sets up everything and runs the main job: an offline batch of the example
# requests (OpenAI Batch API JSONL) with the default model, printing throughput.
# The output is journaled: rerunning after an interruption resumes the job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p results
rm -f results/requests.out.jsonl  # a fresh run each time (keep the file and rerun to resume instead)
./build/deepbatch run -m models/SmolLM2-135M-Instruct.Q4_1.gguf \
  -i examples/requests.jsonl -o results/requests.out.jsonl
