#include "model/layer_profile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "util/error.h"

namespace db {

const char* layer_block_name(LayerBlock b) {
  switch (b) {
    case LayerBlock::Embed: return "embed";
    case LayerBlock::AttnQkv: return "qkv";
    case LayerBlock::AttnAbsorb: return "absorb";
    case LayerBlock::AttnCore: return "attn";
    case LayerBlock::AttnOut: return "o_proj";
    case LayerBlock::Router: return "router";
    case LayerBlock::Experts: return "experts";
    case LayerBlock::Shared: return "shared";
    case LayerBlock::DenseFfn: return "dense";
    case LayerBlock::Head: return "head";
    case LayerBlock::kCount: break;
  }
  return "?";
}

bool layer_profile_requested() {
  const char* v = std::getenv("DB_PROFILE_LAYERS");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

LayerProfile::LayerProfile(int n_layers) : n_layers_(n_layers) {
  DB_CHECK(n_layers >= 0, "LayerProfile: negative layer count");
}

double LayerProfile::Group::block_total(LayerBlock b) const {
  double s = 0;
  for (size_t i = static_cast<size_t>(b); i < seconds.size(); i += kBlocks) s += seconds[i];
  return s;
}

double LayerProfile::Group::total() const {
  double s = 0;
  for (double v : seconds) s += v;
  return s;
}

void LayerProfile::begin_step(int64_t tokens, int64_t seqs) {
  open_ = nullptr;
  for (Group& g : groups_)
    if (g.tokens == tokens && g.seqs == seqs) open_ = &g;
  if (!open_) {
    Group g;
    g.tokens = tokens;
    g.seqs = seqs;
    g.seconds.assign(static_cast<size_t>(n_layers_ + 1) * kBlocks, 0.0);
    groups_.push_back(std::move(g));
    open_ = &groups_.back();
  }
  step_start_ = Clock::now();
}

void LayerProfile::end_step() {
  if (!open_) return;
  open_->step_seconds += std::chrono::duration<double>(Clock::now() - step_start_).count();
  ++open_->steps;
  open_ = nullptr;
}

void LayerProfile::add(int row, LayerBlock b, double seconds) {
  if (!open_) return;
  DB_CHECK(row >= 0 && row <= n_layers_ && b < LayerBlock::kCount, "LayerProfile::add: row or block out of range");
  open_->seconds[static_cast<size_t>(row) * kBlocks + static_cast<size_t>(b)] += seconds;
}

namespace {

// Appends printf-formatted text to out.
template <typename... Args>
void append(std::string& out, const char* fmt, Args... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  out += buf;
}

void append_group(std::string& out, const LayerProfile::Group& g, int n_layers) {
  const double per_step_ms = 1e3 / static_cast<double>(g.steps);
  const double step_ms = g.step_seconds * per_step_ms, blocks_ms = g.total() * per_step_ms;
  append(out, "layer profile: %lld steps of %lld tokens in %lld sequences: %.3f ms per step, blocks %.3f ms (%.1f%%)\n",
         static_cast<long long>(g.steps), static_cast<long long>(g.tokens), static_cast<long long>(g.seqs), step_ms,
         blocks_ms, step_ms > 0 ? 100.0 * blocks_ms / step_ms : 0.0);
  append(out, "%8s", "layer");
  for (size_t b = 0; b < LayerProfile::kBlocks; ++b) append(out, " %8s", layer_block_name(static_cast<LayerBlock>(b)));
  append(out, " %9s\n", "total");
  for (int row = 0; row <= n_layers; ++row) {
    if (row < n_layers) append(out, "%8d", row); else append(out, "%8s", "step");
    double sum = 0;
    for (size_t b = 0; b < LayerProfile::kBlocks; ++b) {
      const double ms = g.at(row, static_cast<LayerBlock>(b)) * per_step_ms;
      sum += ms;
      if (ms == 0) append(out, " %8s", "-"); else append(out, " %8.3f", ms);
    }
    append(out, " %9.3f\n", sum);
  }
  append(out, "%8s", "sum");
  for (size_t b = 0; b < LayerProfile::kBlocks; ++b)
    append(out, " %8.3f", g.block_total(static_cast<LayerBlock>(b)) * per_step_ms);
  append(out, " %9.3f\n", blocks_ms);
  append(out, "%8s", "share %");
  for (size_t b = 0; b < LayerProfile::kBlocks; ++b)
    append(out, " %8.1f", step_ms > 0 ? 100.0 * g.block_total(static_cast<LayerBlock>(b)) * per_step_ms / step_ms : 0.0);
  append(out, " %9.1f\n", step_ms > 0 ? 100.0 * blocks_ms / step_ms : 0.0);
}

}  // namespace

std::string LayerProfile::table() const {
  std::vector<const Group*> order;
  for (const Group& g : groups_)
    if (g.steps > 0) order.push_back(&g);
  std::stable_sort(order.begin(), order.end(),
                   [](const Group* a, const Group* b) { return a->step_seconds > b->step_seconds; });
  std::string out;
  for (const Group* g : order) append_group(out, *g, n_layers_);
  return out;
}

}  // namespace db
