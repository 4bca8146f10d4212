// Engine options by the values the command line and the Python API give them
// (a policy by name, 0 for "auto"), set on an EngineConfig: one parser for each,
// so that both front ends accept the same values and mean the same by them.
#pragma once
#include <string>

#include "engine/engine.h"

namespace db {

// "reserve" or "first-chunk" (sched/scheduler_config.h); throws db::Error naming
// `what` (the option as its caller spells it) and the accepted names otherwise.
AdmissionPolicy admission_policy_from_name(const std::string& name, const std::string& what);

// The running cap and the step's token budget: n > 0 fixes the value; 0 leaves it
// to the engine (EngineConfig::auto_max_num_seqs / auto_max_num_batched_tokens:
// the default, or for an MoE model the choice of engine/moe_batch_sizing.h, logged
// at start). Throws db::Error naming `what` for n < 0.
void set_max_num_seqs(EngineConfig& c, int n, const std::string& what);
void set_max_num_batched_tokens(EngineConfig& c, int n, const std::string& what);

}  // namespace db
