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

// A new backend for d; throws db::Error with device_unavailable_reason(d) where it
// cannot compute.
std::unique_ptr<ComputeBackend> make_backend(Device d);

}  // namespace db
