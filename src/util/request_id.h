// The id of a request (and of each sequence it forks into), shared by the KV cache
// manager, the scheduler and the engine without pulling in any of them.
#pragma once
#include <cstdint>

namespace db {

using RequestId = uint64_t;

}  // namespace db
