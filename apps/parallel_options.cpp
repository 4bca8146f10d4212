#include "parallel_options.h"

#include "util/error.h"

namespace db::cli {

void add_parallel_options(CLI::App& app, dist::ParallelConfig& p) {
  app.add_option("--tensor-parallel-size,--tp", p.tensor_parallel_size,
                 "Ranks that split each layer's attention heads and MLP columns (launch with mpirun -np "
                 "tensor x expert parallel size; needs a build with MPI)")
      ->capture_default_str();
  app.add_option("--expert-parallel-size,--ep", p.expert_parallel_size,
                 "Ranks that split a mixture-of-experts model's routed experts (launch with mpirun; needs a build "
                 "with MPI)")
      ->capture_default_str();
  app.add_option("--tensor-parallel-join", p.tensor_parallel_join,
                 "How tensor-parallel ranks combine each block: gather (attention outputs and MLP activations "
                 "all-gathered, attn_output and ffn_down run whole on every rank: the same results as one process) "
                 "or reduce (Megatron-LM: partial outputs all-reduced; less memory and compute per rank, sums in "
                 "another order)")
      ->check(CLI::IsMember({"gather", "reduce"}))
      ->capture_default_str();
  app.add_option("--collective-timeout", p.collective_timeout_s,
                 "Seconds a rank waits in a collective for the others before it reports the ranks that did not "
                 "arrive and ends the job (so a dead or stopped rank never hangs it)")
      ->capture_default_str();
}

void check_parallel_options(const dist::ParallelConfig& p, bool runs_split_model) {
  dist::check_parallel_config(p, dist::launched_world_size(), dist::built_with_mpi());
  if (p.expert_parallel_size > 1 && !runs_split_model)
    throw Error("--expert-parallel-size " + std::to_string(p.expert_parallel_size) +
                ": this command runs a model in one process; `deepbatch run`, `serve` and `bench` split its experts "
                "across ranks");
  if (p.tensor_parallel_size > 1 && !runs_split_model)
    throw Error("--tensor-parallel-size " + std::to_string(p.tensor_parallel_size) +
                ": this command runs a model in one process; `deepbatch run`, `serve` and `bench` split it across "
                "ranks");
}

}  // namespace db::cli
