"""The per-rank expert load series of an expert-parallel server's /metrics, checked against
its per-expert router counts (used by test_expert_parallel.py)."""
import re

from test_collective_faults import check


def check_rank_load(metrics, ep, n_experts):
    """Each rank's deepbatch:expert_parallel_rank_routed_tokens_total must be the routed tokens of its experts
    [r * n / ep, (r + 1) * n / ep) summed over the layers (deepbatch:moe_routed_tokens_total of the same scrape),
    the ranks' must add up to every routed token, and their load shares to 1. Returns the per-rank tokens."""
    per_expert, ranks, shares = [0.0] * n_experts, {}, {}
    for line in metrics.splitlines():
        m = re.match(r'deepbatch:moe_routed_tokens_total\{.*expert="(\d+)"\} (\S+)$', line)
        if m:
            per_expert[int(m.group(1))] += float(m.group(2))
        m = re.match(r'deepbatch:expert_parallel_rank_(routed_tokens_total|load_share)\{.*rank="(\d+)"\} (\S+)$', line)
        if m:
            (ranks if m.group(1) == "routed_tokens_total" else shares)[int(m.group(2))] = float(m.group(3))
    want = [sum(per_expert[r * n_experts // ep:(r + 1) * n_experts // ep]) for r in range(ep)]
    got = [ranks.get(r) for r in range(ep)]
    check(len(ranks) == ep and got == want, f"per-rank routed tokens {ranks} != the expert split's {want}")
    check(sum(got) == sum(per_expert) > 0, f"per-rank routed tokens {got} do not add up to {sum(per_expert)}")
    check(len(shares) == ep and abs(sum(shares.values()) - 1) < 1e-9, f"per-rank load shares {shares}")
    return got
