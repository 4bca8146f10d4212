#!/usr/bin/env bash
# Sets up everything and runs the main job with the default model, printing throughput.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
./build/deepbatch generate -m models/SmolLM2-135M-Instruct.Q4_1.gguf --chat -n 128 \
  -p "Write a short poem about the sea." \
  -p "Explain what a hash table is in two sentences." \
  -p "List three prime numbers and say why they are prime."
