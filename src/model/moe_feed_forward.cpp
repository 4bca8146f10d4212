#include "model/moe_feed_forward.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "model/decoder_steps.h"  // grow
#include "util/error.h"

namespace db {

namespace {

std::string shape_of(const TensorView& t) { return t.shape_str(); }

// NaN compares as -inf so that the orders below stay strict weak orders.
float finite_or_lowest(float v) { return std::isnan(v) ? -std::numeric_limits<float>::infinity() : v; }

// gate / up hold `cols` of the FFN's `ffn` columns (all of them unless tensor parallel).
void check_ffn(const TensorView& gate, const TensorView& up, const TensorView& down, int64_t ffn, int64_t hidden,
               const std::string& what, int64_t cols) {
  const std::vector<int64_t> in_shape{cols, hidden}, out_shape{hidden, ffn};
  if (gate.shape != in_shape || up.shape != in_shape || down.shape != out_shape)
    throw Error(what + ": gate / up / down have shapes " + shape_of(gate) + " / " + shape_of(up) + " / " +
                shape_of(down) + ", expected [" + std::to_string(cols) + ", " + std::to_string(hidden) + "] twice and [" +
                std::to_string(hidden) + ", " + std::to_string(ffn) + "]");
  if (gate.dtype != up.dtype || gate.layout != up.layout)
    throw Error(what + ": gate and up differ in dtype or layout (matmul_swiglu needs them alike)");
}

}  // namespace

TensorView expert_slice(const TensorView& stacked, int64_t e) {
  if (stacked.shape.size() != 3)
    throw Error("expert_slice: expected a stacked {n_experts, rows, cols} tensor, got " + stacked.shape_str());
  if (e < 0 || e >= stacked.shape[0])
    throw Error("expert_slice: expert " + std::to_string(e) + " of a tensor of " + std::to_string(stacked.shape[0]));
  TensorView v;
  v.dtype = stacked.dtype;
  v.shape = {stacked.shape[1], stacked.shape[2]};
  v.layout = stacked.layout;
  v.data = static_cast<const uint8_t*>(stacked.data) + static_cast<size_t>(e) * v.nbytes();
  return v;
}

void prepare_moe_layer_weights(ComputeBackend& b, MoeLayerWeights& w) {
  TensorView router;
  router.dtype = DType::F32;
  router.shape = {w.experts.empty() ? 0 : static_cast<int64_t>(w.experts.size()),
                  w.experts.empty() ? 0 : static_cast<int64_t>(w.router.size() / w.experts.size())};
  router.data = w.router.data();
  w.router_matrix = b.prepare_matrix(router);
  for (ExpertWeights* x = w.experts.data(); x != w.experts.data() + w.experts.size(); ++x)
    for (TensorView* m : {&x->gate, &x->up, &x->down}) *m = b.prepare_matrix(*m);
  for (TensorView* m : {&w.shared.gate, &w.shared.up, &w.shared.down}) *m = b.prepare_matrix(*m);
}

void check_moe_config(const MoeConfig& c) {
  const std::string head = "MoE config: ";
  if (c.n_experts <= 0) throw Error(head + "n_experts must be positive, is " + std::to_string(c.n_experts));
  if (c.n_experts_used <= 0 || c.n_experts_used > c.n_experts)
    throw Error(head + "n_experts_used must be in [1, n_experts = " + std::to_string(c.n_experts) + "], is " +
                std::to_string(c.n_experts_used));
  if (c.n_groups <= 0 || c.n_experts % c.n_groups != 0)
    throw Error(head + "n_groups = " + std::to_string(c.n_groups) + " does not divide n_experts = " +
                std::to_string(c.n_experts));
  if (c.n_groups_used <= 0 || c.n_groups_used > c.n_groups)
    throw Error(head + "n_groups_used must be in [1, n_groups = " + std::to_string(c.n_groups) + "], is " +
                std::to_string(c.n_groups_used));
  if (int64_t{c.n_groups_used} * (c.n_experts / c.n_groups) < c.n_experts_used)
    throw Error(head + "n_groups_used = " + std::to_string(c.n_groups_used) + " groups of " +
                std::to_string(c.n_experts / c.n_groups) + " experts cannot supply n_experts_used = " +
                std::to_string(c.n_experts_used));
  if (c.n_shared_experts < 0 || c.expert_ffn <= 0)
    throw Error(head + "needs expert_ffn > 0 and n_shared_experts >= 0");
  if (!std::isfinite(c.weights_scale)) throw Error(head + "weights_scale is not finite");
}

void route_tokens(const MoeConfig& c, const float* router_logits, int64_t n, const float* score_bias,
                  int32_t* experts, float* weights) {
  const int n_exp = c.n_experts, k = c.n_experts_used, per_group = n_exp / c.n_groups;
  const bool sigmoid = c.gating == ExpertGating::Sigmoid;
  const bool limit_groups = c.n_groups_used < c.n_groups;
  std::vector<float> s(static_cast<size_t>(n_exp)), sel(static_cast<size_t>(n_exp));
  std::vector<float> group_score(static_cast<size_t>(c.n_groups));
  std::vector<int32_t> groups(static_cast<size_t>(c.n_groups)), cand;
  cand.reserve(static_cast<size_t>(n_exp));

  for (int64_t t = 0; t < n; ++t) {
    const float* l = router_logits + t * n_exp;
    // Scores s and selection scores sel.
    if (sigmoid) {
      for (int e = 0; e < n_exp; ++e) {
        s[e] = 1.0f / (1.0f + std::exp(-l[e]));
        sel[e] = finite_or_lowest(score_bias != nullptr ? s[e] + score_bias[e] : s[e]);
      }
    } else {
      float m = -std::numeric_limits<float>::infinity();
      for (int e = 0; e < n_exp; ++e) m = std::max(m, finite_or_lowest(l[e]));
      double sum = 0.0;
      for (int e = 0; e < n_exp; ++e) {
        s[e] = std::exp(finite_or_lowest(l[e]) - m);
        sum += s[e];
      }
      const float inv = static_cast<float>(1.0 / sum);
      for (int e = 0; e < n_exp; ++e) {
        s[e] *= inv;
        sel[e] = finite_or_lowest(score_bias != nullptr ? s[e] + score_bias[e] : s[e]);
      }
    }
    // Eligible experts: all, or those of the n_groups_used best groups.
    cand.clear();
    if (limit_groups) {
      for (int g = 0; g < c.n_groups; ++g) {
        const float* gs = sel.data() + g * per_group;
        float best = gs[0], second = -std::numeric_limits<float>::infinity();
        for (int i = 1; i < per_group; ++i) {
          if (gs[i] > best) {
            second = best;
            best = gs[i];
          } else if (gs[i] > second) {
            second = gs[i];
          }
        }
        // Sigmoid: the two largest summed (a group of one: its only score).
        group_score[g] = sigmoid && per_group >= 2 ? best + second : best;
        groups[g] = g;
      }
      std::partial_sort(groups.begin(), groups.begin() + c.n_groups_used, groups.end(), [&](int32_t a, int32_t b) {
        return group_score[a] > group_score[b] || (group_score[a] == group_score[b] && a < b);
      });
      std::sort(groups.begin(), groups.begin() + c.n_groups_used);
      for (int i = 0; i < c.n_groups_used; ++i)
        for (int e = groups[i] * per_group; e < (groups[i] + 1) * per_group; ++e) cand.push_back(e);
    } else {
      for (int e = 0; e < n_exp; ++e) cand.push_back(e);
    }
    // Top-k by selection score, lower index first on ties.
    std::partial_sort(cand.begin(), cand.begin() + k, cand.end(), [&](int32_t a, int32_t b) {
      return sel[a] > sel[b] || (sel[a] == sel[b] && a < b);
    });
    int32_t* ex = experts + t * k;
    float* wt = weights + t * k;
    float sum = 0.0f;
    for (int j = 0; j < k; ++j) {
      ex[j] = cand[j];
      wt[j] = s[cand[j]];
      sum += wt[j];
    }
    if (c.norm_weights) {
      const float denom = sum + 1e-20f;
      for (int j = 0; j < k; ++j) wt[j] /= denom;
    }
    for (int j = 0; j < k; ++j) wt[j] *= c.weights_scale;
  }
}

void check_moe_layer_weights(const MoeConfig& c, int64_t hidden, const MoeLayerWeights& w, int64_t shared_cols) {
  const size_t n_exp = static_cast<size_t>(c.n_experts);
  if (w.router.size() != n_exp * static_cast<size_t>(hidden))
    throw Error("MoE layer: router has " + std::to_string(w.router.size()) + " floats, expected n_experts x hidden = " +
                std::to_string(n_exp) + " x " + std::to_string(hidden));
  if (!w.score_bias.empty() && w.score_bias.size() != n_exp)
    throw Error("MoE layer: score bias has " + std::to_string(w.score_bias.size()) + " floats, expected " +
                std::to_string(n_exp));
  if (w.experts.size() != n_exp)
    throw Error("MoE layer: " + std::to_string(w.experts.size()) + " routed experts, expected " +
                std::to_string(n_exp));
  for (size_t e = 0; e < n_exp; ++e) {
    const ExpertWeights& x = w.experts[e];
    check_ffn(x.gate, x.up, x.down, c.expert_ffn, hidden, "MoE layer: expert " + std::to_string(e), c.expert_ffn);
  }
  const bool has_shared = w.shared.gate.data != nullptr;
  if (has_shared != (c.n_shared_experts > 0))
    throw Error(std::string("MoE layer: ") + (has_shared ? "has" : "lacks") +
                " shared expert weights, config says n_shared_experts = " + std::to_string(c.n_shared_experts));
  if (has_shared) {
    if (w.shared.up.data == nullptr || w.shared.down.data == nullptr)
      throw Error("MoE layer: shared expert lacks its up or down weights");
    const int64_t ffn = int64_t{c.n_shared_experts} * c.expert_ffn;
    check_ffn(w.shared.gate, w.shared.up, w.shared.down, ffn, hidden, "MoE layer: shared experts",
              shared_cols < 0 ? ffn : shared_cols);
  }
}

MoeFeedForward::MoeFeedForward(const MoeConfig& c, int64_t hidden, ExpertShard shard)
    : c_(c), hidden_(hidden), shard_(shard) {
  check_moe_config(c_);
  if (!shard_.split()) shard_ = ExpertShard{nullptr, 0, c_.n_experts};
  if (shard_.begin < 0 || shard_.begin >= shard_.end || shard_.end > c_.n_experts)
    throw Error("MoE block: expert shard [" + std::to_string(shard_.begin) + ", " + std::to_string(shard_.end) +
                ") is not a part of the " + std::to_string(c_.n_experts) + " experts");
  if (hidden_ <= 0) throw Error("MoE block: hidden must be positive");
  tokens_per_expert_.assign(static_cast<size_t>(c_.n_experts), 0);
  expert_begin_.assign(static_cast<size_t>(c_.n_experts) + 1, 0);
}

void MoeFeedForward::set_shared_join(int64_t cols, ColumnJoin join) {
  shared_cols_ = cols;
  shared_join_ = std::move(join);
}

void MoeFeedForward::reserve(ComputeBackend& b, int64_t n) {
  const int64_t k = c_.n_experts_used;
  const int64_t ffn = std::max<int64_t>(c_.expert_ffn, int64_t{c_.n_shared_experts} * c_.expert_ffn);
  grow(host_logits_, n * c_.n_experts);
  if (experts_.size() < static_cast<size_t>(n * k)) experts_.resize(static_cast<size_t>(n * k));
  grow(weights_, n * k);
  if (assignment_.size() < static_cast<size_t>(n * k)) assignment_.resize(static_cast<size_t>(n * k));
  if (rows_.size() < static_cast<size_t>(n * k)) rows_.resize(static_cast<size_t>(n * k));
  grow(row_weights_, n * k);
  b.grow(logits_, n * c_.n_experts);
  b.grow(routed_, n * hidden_);
  b.grow(xg_, n * hidden_);
  b.grow(yg_, n * hidden_);
  b.grow(hg_, n * ffn);
  b.grow(ug_, n * ffn);
}

void MoeFeedForward::forward(const MoeLayerWeights& w, const float* xn, int64_t n, float* out, ComputeBackend& b,
                             ThreadPool& pool, LayerProfile* profile, int row) {
  check_moe_layer_weights(c_, hidden_, w, shared_join_ ? shared_cols_ : -1);
  if (w.router_matrix.data == nullptr) throw Error("MoE layer: weights not prepared for the backend");
  const int64_t k = c_.n_experts_used, h = hidden_, n_exp = c_.n_experts;
  std::fill(tokens_per_expert_.begin(), tokens_per_expert_.end(), 0);
  last_n_ = n;
  if (n <= 0) return;
  b.set_host_pool(pool);
  reserve(b, n);

  std::optional<LayerTimer> timer(std::in_place, profile, row, LayerBlock::Router);
  // Router logits, and the routing on the host.
  b.matmul(w.router_matrix, xn, n, logits_.data());
  b.to_host(logits_.data(), host_logits_.data(), n * n_exp);
  const float* bias = w.score_bias.empty() ? nullptr : w.score_bias.data();
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    route_tokens(c_, host_logits_.data() + begin * n_exp, end - begin, bias, experts_.data() + begin * k,
                 weights_.data() + begin * k);
  });

  // Group the assignments (token * k + slot) by expert, tokens ascending (a counting sort).
  for (int64_t a = 0; a < n * k; ++a) ++tokens_per_expert_[static_cast<size_t>(experts_[a])];
  expert_begin_[0] = 0;
  for (int64_t e = 0; e < n_exp; ++e) expert_begin_[e + 1] = expert_begin_[e] + tokens_per_expert_[e];
  {
    std::vector<int64_t>& fill = expert_begin_;  // advanced while filling, restored below
    for (int64_t a = 0; a < n * k; ++a) assignment_[fill[experts_[a]]++] = a;
    for (int64_t e = n_exp; e > 0; --e) fill[e] = fill[e - 1];
    fill[0] = 0;
  }
  for (int64_t i = 0; i < n * k; ++i) {
    rows_[i] = static_cast<int32_t>(assignment_[i] / k);
    row_weights_[i] = weights_[assignment_[i]];
  }

  // Routed experts, ascending index; each token's sum gets its terms in that order.
  timer.emplace(profile, row, LayerBlock::Experts);
  b.fill_zero(routed_.data(), n * h);
  if (!shard_.split()) {
    for (int64_t e = 0; e < n_exp; ++e) {
      if (tokens_per_expert_[e] == 0) continue;
      run_expert(b, w.experts[static_cast<size_t>(e)], e, xn, yg_.data());
      add_weighted(b, e, yg_.data());
    }
  } else {
    // This rank's experts' rows, then every rank's (the exchange), in one process's order.
    const int64_t first = expert_begin_[shard_.begin];
    b.grow(mine_, (expert_begin_[shard_.end] - first) * h);
    for (int64_t e = shard_.begin; e < shard_.end; ++e)
      if (tokens_per_expert_[e] > 0)
        run_expert(b, w.experts[static_cast<size_t>(e)], e, xn, mine_.data() + (expert_begin_[e] - first) * h);
    b.grow(all_, n * k * h);
    exchange_expert_rows(shard_, expert_begin_, mine_.data(), h, send_, all_.data());
    for (int64_t e = 0; e < n_exp; ++e)
      if (tokens_per_expert_[e] > 0) add_weighted(b, e, all_.data() + expert_begin_[e] * h);
  }

  // Shared experts over all rows (xn is read by the gate/up product before out is written).
  timer.emplace(profile, row, LayerBlock::Shared);
  if (c_.n_shared_experts > 0) {
    b.matmul_swiglu(w.shared.gate, w.shared.up, xn, n, hg_.data(), ug_.data());
    b.matmul(w.shared.down, shared_join_ ? shared_join_(hg_.data(), n) : hg_.data(), n, out);
    b.add_rows(out, routed_.data(), n, h);
  } else {
    b.copy_rows(routed_.data(), n * h, out, n * h, 1, n * h);
  }
}

void MoeFeedForward::run_expert(ComputeBackend& b, const ExpertWeights& x, int64_t e, const float* xn, float* y) {
  const int64_t h = hidden_, m = tokens_per_expert_[e];
  DB_CHECK(x.gate.data != nullptr, "MoE block: expert " + std::to_string(e) + " runs but was not loaded");
  b.gather_rows(xn, h, rows_.data() + expert_begin_[e], m, xg_.data());
  b.matmul_swiglu(x.gate, x.up, xg_.data(), m, hg_.data(), ug_.data());
  b.matmul(x.down, hg_.data(), m, y);
}

void MoeFeedForward::add_weighted(ComputeBackend& b, int64_t e, const float* y_rows) {
  // Each token appears at most once per expert: the rows are distinct.
  b.add_weighted_rows(y_rows, hidden_, rows_.data() + expert_begin_[e], row_weights_.data() + expert_begin_[e],
                      tokens_per_expert_[e], routed_.data());
}

}  // namespace db
