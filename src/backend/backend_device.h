// Where a model computes (`--device cpu|cuda`) and the backend that computes there.
#pragma once
#include <memory>
#include <string>

#include "backend/compute_backend.h"

namespace db {

enum class Device { Cpu, Cuda };

// "cpu" or "cuda"; throws db::Error naming the accepted ones otherwise.
Device device_from_name(const std::string& name);
const char* device_name(Device d);

// "" when this build and machine can compute on d; else why not: "this build has no
// CUDA support: configure with -DDB_CUDA=ON", or "no CUDA device: <CUDA's reason>".
std::string device_unavailable_reason(Device d);

// Bytes a KV pool in backend b's memory may take: utilization (0, 1] of the device's
// memory less what is already in use there (weights, buffers, other processes), as
// vLLM's --gpu-memory-utilization. Throws db::Error for a host backend, a bad
// utilization, or when nothing is left.
int64_t device_kv_budget(const ComputeBackend& b, double utilization);

// A new backend for d; throws db::Error with device_unavailable_reason(d) where it
// cannot compute.
std::unique_ptr<ComputeBackend> make_backend(Device d);

}  // namespace db
