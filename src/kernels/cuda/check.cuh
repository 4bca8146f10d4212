// CUDA error handling for the .cu files: every runtime call and launch goes through
// check(), which turns a CUDA error into a db::Error naming the call.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "util/error.h"

namespace db::kernels::cuda {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string("CUDA ") + what + ": " + cudaGetErrorString(e));
}
// After a kernel launch: a bad configuration surfaces here, execution errors at the next sync.
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

inline cudaStream_t stream_of(void* handle) { return static_cast<cudaStream_t>(handle); }

inline unsigned blocks_for(int64_t n, int per_block) { return static_cast<unsigned>((n + per_block - 1) / per_block); }

}  // namespace db::kernels::cuda
