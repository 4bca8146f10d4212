// What computing a chunk of a sequence costs, in token-equivalents: one unit is
// the position-independent work of one token (its matmuls), and each token also
// attends to every position before it and itself:
//
//   cost(n tokens from position p) = sum over i < n of (1 + r * (p + i + 1))
//                                  = n + r * (n * p + n * (n + 1) / 2)
//
// where r = attention_per_position is one context position's attention work over
// one token's matmul work. A chunk deep in a long prompt costs far more than one
// of the same length at its start: with r = 3e-4, a token at position 7,000
// costs 3.1 units. The scheduler sizes long chunks by this cost (budget_split.h),
// so that a step beside a long prefill stays as short as at its start.
//
// r starts from the model's shape (multiply-accumulates, engine/model_macs.h)
// and is refined from measured step times (sched/step_cost_fit.h), because on a
// CPU attention often runs at a lower rate per MAC than the matmuls.
#pragma once
#include <cstdint>

namespace db {

struct PrefillCost {
  // Work of attending to one context position over one token's matmul work (>= 0;
  // 0: cost = tokens, the scheduler's sizing by token count).
  double attention_per_position = 0;

  // The cost of n >= 0 tokens computed from position p >= 0 (p tokens already cached).
  double cost(int64_t p, int64_t n) const;
  // The most tokens, at most `limit`, that a chunk from position p may hold for a
  // cost of at most `budget`; 0 when even one token costs more (or limit <= 0).
  int32_t max_tokens(int64_t p, double budget, int32_t limit) const;
  // The cost-capped chunk: max_tokens(p, budget, limit), but at least one token
  // when limit >= 1, so that a sequence always progresses.
  int32_t chunk(int64_t p, double budget, int32_t limit) const;
};

// r from the model's multiply-accumulates: those of one token's matmuls and those
// one token spends per context position in attention (both > 0, else r = 0).
PrefillCost prefill_cost_from_macs(double linear_macs_per_token, double attention_macs_per_position);

}  // namespace db
