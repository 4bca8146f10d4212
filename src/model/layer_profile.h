// Per-layer wall time of a decoder's blocks, summed over the steps of a run: what
// `DB_PROFILE_LAYERS=1` turns on (model/deepseek_decoder.h), to say which block a
// step's time goes to and so what bounds it.
//
// Every block is one or more parallel regions that the calling thread takes part
// in and waits for (util/thread_pool.h), so the wall time around the block on
// the calling thread is the block's time, workers included. Steps are grouped by
// their shape (tokens and sequences): a run's prompt steps and decode steps land
// in separate groups, and a group's figures are per step of that shape.
//
// Off (no LayerProfile, a null pointer) costs one pointer test per block: no
// clock is read.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace db {

// The blocks a step is split into. The attention rows cover the whole attention
// block: the q / kv projections (with their norms and RoPE), the per-head
// absorbed products (W_UK into the queries, W_UV out of the latent), the cache
// write and paged attention, and the output projection with the residual add
// and the next norm. Each feed-forward kind includes its residual add and norm.
enum class LayerBlock : uint8_t {
  Embed,       // token embedding, RoPE tables, the first norm (step-wide)
  AttnQkv,     // q (q_a, q_b) and kv_a projections, their norms, RoPE
  AttnAbsorb,  // per-head W_UK^T q_nope and W_UV o
  AttnCore,    // latent cache write and paged attention
  AttnOut,     // attn_output projection, residual add, ffn norm
  Router,      // router logits, top-k routing, grouping tokens by expert
  Experts,     // routed experts: gather, gate/up, down, weighted scatter
  Shared,      // shared experts and the final sum (with the block's residual add)
  DenseFfn,    // dense SwiGLU FFN (with the block's residual add)
  Head,        // output norm and logits projection (step-wide)
  kCount
};

// A short column name ("qkv", "experts", ...).
const char* layer_block_name(LayerBlock b);

// True when the environment asks for a profile: DB_PROFILE_LAYERS set, not
// empty and not "0". Read once per call; decoders call it when they are built.
bool layer_profile_requested();

class LayerProfile {
 public:
  // Rows 0..n_layers-1 are the decoder's layers; row n_layers holds the
  // step-wide blocks (Embed, Head).
  explicit LayerProfile(int n_layers);

  int n_layers() const { return n_layers_; }
  int step_row() const { return n_layers_; }

  // Steps of one shape and the time each (row, block) took over them.
  struct Group {
    int64_t tokens = 0, seqs = 0;  // the shape
    int64_t steps = 0;             // completed steps (begin_step .. end_step)
    double step_seconds = 0;       // their wall time, begin to end
    std::vector<double> seconds;   // [(n_layers + 1) * kCount]: row * kCount + block

    double at(int row, LayerBlock b) const { return seconds[static_cast<size_t>(row) * kBlocks + static_cast<size_t>(b)]; }
    double block_total(LayerBlock b) const;  // over the rows
    double total() const;                    // every row and block
  };

  // Opens a step of `tokens` tokens in `seqs` sequences: add() goes to its group
  // until the next begin_step. end_step() closes it and counts its wall time.
  void begin_step(int64_t tokens, int64_t seqs);
  void end_step();
  // Adds `seconds` to (row, b) of the open step's group; nothing when no step is open.
  void add(int row, LayerBlock b, double seconds);

  // Groups in the order their first step ran.
  const std::vector<Group>& groups() const { return groups_; }

  // One table per group, largest total wall time first: ms per step of each
  // layer and block, each block's sum over layers and its share of the step,
  // and the step time the blocks do not cover. Empty when no step completed.
  std::string table() const;

  static constexpr size_t kBlocks = static_cast<size_t>(LayerBlock::kCount);

 private:
  using Clock = std::chrono::steady_clock;
  int n_layers_;
  std::vector<Group> groups_;
  Group* open_ = nullptr;  // the open step's group (stable: groups_ is not resized while a step is open)
  Clock::time_point step_start_;
};

// Times its scope into (row, b) of `profile`; with a null profile reads no clock.
class LayerTimer {
 public:
  LayerTimer(LayerProfile* profile, int row, LayerBlock b) : profile_(profile), row_(row), block_(b) {
    if (profile_) start_ = std::chrono::steady_clock::now();
  }
  ~LayerTimer() {
    if (profile_)
      profile_->add(row_, block_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  LayerTimer(const LayerTimer&) = delete;
  LayerTimer& operator=(const LayerTimer&) = delete;

 private:
  LayerProfile* profile_;
  int row_;
  LayerBlock block_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace db
