#!/usr/bin/env python3
"""Generates tests/data/kernels/quant_<TYPE>.json: a few blocks of each weight
format with their expected dequantized floats, computed by the `gguf` Python
package (the reference GGML format implementation in Python).

For Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, F16 and BF16 the blocks come from gguf.quants.quantize()
of the stored `input` floats, so the fixture also checks our quantizers byte for
byte. K-quant blocks (no quantizer in gguf) are random bytes with sane fp16
super-block scales; every bit pattern of the other fields is valid.

Usage: python3 scripts/gen_quant_fixtures.py   (from the repository root)
"""
import json
import pathlib

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import quants

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "kernels"
RNG = np.random.default_rng(20240611)


def floats_for(n: int) -> np.ndarray:
    """Gaussian values with a zero block, an outlier, a constant block and a subnormal."""
    x = RNG.standard_normal(n).astype(np.float32) * np.float32(0.7)
    x[32:64] = 0.0                      # all-zero block (scale 0)
    x[70] = np.float32(9.5)             # outlier dominating its block
    x[96:128] = np.float32(-0.25)       # constant block
    x[5] = np.float32(3e-6)             # fp16 subnormal range
    x[6] = np.float32(-0.0)
    return x


def random_k_blocks(qtype: T, n_blocks: int) -> np.ndarray:
    size = quants.GGML_QUANT_SIZES[qtype][1]
    raw = RNG.integers(0, 256, size=(n_blocks, size), dtype=np.uint8)
    d = (RNG.uniform(0.002, 0.05, n_blocks)).astype(np.float16).view(np.uint8).reshape(n_blocks, 2)
    dmin = (RNG.uniform(0.001, 0.03, n_blocks)).astype(np.float16).view(np.uint8).reshape(n_blocks, 2)
    if qtype == T.Q6_K:
        raw[:, -2:] = d                 # d is the last field
    else:
        raw[:, 0:2] = d                 # d, dmin lead Q4_K / Q5_K
        raw[:, 2:4] = dmin
    return raw.reshape(-1)


def write(name: str, qtype: T, n: int, raw: np.ndarray, inp):
    expected = quants.dequantize(raw.reshape(1, -1), qtype).reshape(-1).astype(np.float32)
    assert expected.size == n and np.all(np.isfinite(expected))
    doc = {
        "type": name,
        "n": n,
        "input": None if inp is None else [float(v) for v in inp],
        "blocks_hex": raw.tobytes().hex(),
        "expected": [float(v) for v in expected],
    }
    (OUT / f"quant_{name}.json").write_text(json.dumps(doc, indent=0) + "\n")


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    n = 5 * 32
    for name, qtype in (("Q4_0", T.Q4_0), ("Q4_1", T.Q4_1), ("Q8_0", T.Q8_0), ("BF16", T.BF16)):
        x = floats_for(n)
        write(name, qtype, n, quants.quantize(x.reshape(1, -1), qtype).reshape(-1), x)
    x = floats_for(n)
    x[7] = np.float32(65504.0)          # largest finite half
    x[8] = np.float32(1.0 + 2.0 ** -11)  # tie: rounds to even (1.0)
    write("F16", T.F16, n, x.astype(np.float16).view(np.uint8), x)
    for name, qtype in (("Q4_K", T.Q4_K), ("Q5_K", T.Q5_K), ("Q6_K", T.Q6_K)):
        write(name, qtype, 3 * 256, random_k_blocks(qtype, 3), None)
    for name, qtype in (("Q5_0", T.Q5_0), ("Q5_1", T.Q5_1)):  # after the others: their draws stay as they were
        x = floats_for(n)
        write(name, qtype, n, quants.quantize(x.reshape(1, -1), qtype).reshape(-1), x)


if __name__ == "__main__":
    main()
