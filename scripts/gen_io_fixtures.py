#!/usr/bin/env python3
"""Writes the io test fixtures with the reference Python writers (packages `gguf`
and `safetensors`), so that the C++ readers are checked against files they did
not produce. Run from the repository root:

    python3 scripts/gen_io_fixtures.py

Outputs (committed): tests/data/io/reference.gguf, tests/data/io/reference.safetensors.
The expected values are asserted in tests/unit/io/reference_fixtures_test.cpp.
"""
import os

import numpy as np
import gguf
from safetensors.numpy import save_file

OUT = os.path.join("tests", "data", "io")


def write_gguf(path):
    w = gguf.GGUFWriter(path, arch="llama")
    w.add_uint32("test.u32", 123456)
    w.add_int32("test.i32", -42)
    w.add_float32("test.f32", 0.125)
    w.add_bool("test.bool", True)
    w.add_string("test.str", "hello gguf")
    w.add_array("test.strs", ["a", "bc", ""])
    w.add_array("test.ints", [1, -2, 3])
    w.add_array("test.floats", [0.5, 1.5])
    w.add_tensor("f32.weight", np.arange(6, dtype=np.float32).reshape(2, 3))
    w.add_tensor("f16.weight", np.array([1.0, -2.0, 0.5, 4.0], dtype=np.float16))
    # One Q8_0 row of 32 elements: f16 scale 1.0 (0x3c00) then int8 quants 0..31.
    q8 = np.concatenate([np.frombuffer(np.float16(1.0).tobytes(), dtype=np.uint8),
                         np.arange(32, dtype=np.int8).view(np.uint8)])
    w.add_tensor("q8.weight", q8.reshape(1, 34), raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_safetensors(path):
    save_file({
        "a.weight": np.arange(6, dtype=np.float32).reshape(2, 3),
        "b.bias": np.array([1.0, 2.0, 3.0, -4.0], dtype=np.float16),
        "c.ids": np.array([7, -8], dtype=np.int64),
    }, path, metadata={"format": "np"})


if __name__ == "__main__":
    write_gguf(os.path.join(OUT, "reference.gguf"))
    write_safetensors(os.path.join(OUT, "reference.safetensors"))
