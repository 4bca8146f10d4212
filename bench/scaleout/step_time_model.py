"""Step-time model for DeepSeek-V3 (Q4_0) split over dual-socket servers: one rank per socket,
routed experts partitioned over all ranks (expert parallelism), attention either data-parallel
(each rank attends its share of the sequences) or tensor-parallel (heads split, two all-reduces
per layer). Prints expected decode tokens/s per configuration; docs/scale-out.md explains the
terms and where each input comes from.

    python3 bench/scaleout/step_time_model.py [--socket-read-gbs 300] [--socket-cores 96] ...

Per rank and decode step of B sequences (each rank's share of them under DP attention):
  time = sum over weight groups of max(bytes read / (read bandwidth x read efficiency),
                                       MACs / (int8 peak x efficiency at its tokens per matrix))
       + collectives: per MoE layer a dispatch and a combine all-to-all (each token's hidden
         state to the ranks of its experts and back), under TP attention two all-reduces per
         layer; each costs its link traversals in sequence x the one-way latency + bytes over
         the slowest link it crosses (the transfer part checked under a rate cap in
         e2e_dist_collectives_netns: 0.95-1.05x). Traversals, as Open MPI's TCP transport makes
         them (measured across an added delay, bench/scaleout/link_delay_sweep.py): an
         all-reduce 2 steps, an all-to-all 1, and a step whose message to one peer is above the
         64 KiB eager limit 3 traversals instead of 1 (the first fragment, the receiver's
         answer, the rest).
"""
import argparse

# DeepSeek-V3 as released (config.json): widths, and parameters per group.
HIDDEN, LAYERS, DENSE_LAYERS, EXPERTS, TOP_K, EXPERT_FFN, DENSE_FFN, VOCAB = 7168, 61, 3, 256, 8, 2048, 18432, 129280
HEADS, Q_LORA, KV_LORA, ROPE, NOPE, VDIM = 128, 1536, 512, 64, 128, 128
ATTN = HIDDEN * Q_LORA + Q_LORA * HEADS * (NOPE + ROPE) + HIDDEN * (KV_LORA + ROPE) + \
    KV_LORA * HEADS * (NOPE + VDIM) + HEADS * VDIM * HIDDEN            # 187 M per layer
EXPERT = 3 * HIDDEN * EXPERT_FFN                                       # 44 M
DENSE = 3 * HIDDEN * DENSE_FFN                                         # 396 M
HEAD = VOCAB * HIDDEN                                                  # 927 M
MOE_LAYERS = LAYERS - DENSE_LAYERS
Q4_BYTES = 4.5 / 8  # Q4_0: 18 bytes per 32 weights

# Measured on the 2-core test machine (bench/deepseek/README.md): share of the int8 dot-product
# peak an expert product reaches at a number of tokens per matrix (V2-Lite sweep and the Q4_0
# kernel's 64-token rate), and the share of the read bandwidth a batch-1 decode step reaches
# (the V3 slice: 50%). Below 6 tokens a product is taken to cost what 6 cost (the kernel is
# bound by unpacking the weights there; nothing below 6 was measured).
MAC_EFFICIENCY = [(6, 0.20), (12, 0.30), (24, 0.30), (48, 0.37), (64, 0.62)]
READ_EFFICIENCY = 0.50
EAGER_LIMIT = 65536  # Open MPI's btl_tcp_eager_limit: larger messages wait for the receiver's answer


def mac_efficiency(tokens):
    pts = MAC_EFFICIENCY
    if tokens <= pts[0][0]:
        return pts[0][1] * tokens / pts[0][0]
    for (t0, e0), (t1, e1) in zip(pts, pts[1:]):
        if tokens <= t1:
            return e0 + (e1 - e0) * (tokens - t0) / (t1 - t0)
    return pts[-1][1]


def group_time(params, tokens, a):
    """Seconds for one product of `params` weights over `tokens` rows on one rank."""
    if tokens <= 0:
        return 0.0
    read = params * Q4_BYTES / (a.socket_read_gbs * 1e9 * READ_EFFICIENCY)
    macs = params * tokens / (a.socket_peak_gmacs * 1e9 * mac_efficiency(tokens))
    return max(read, macs)


def traversals(steps, message_bytes):
    """Link trips one after the other of `steps` sequential sends of message_bytes to a peer."""
    return steps * (1 if message_bytes <= EAGER_LIMIT else 3)


def collective_time(bytes_per_rank, servers, ranks, link_gbit, a, trips):
    """One collective where each rank sends bytes_per_rank spread evenly over the others, in
    `trips` trips over the link one after the other (each costs the one-way latency)."""
    if ranks == 1:
        return 0.0
    remote = (ranks - ranks // servers) / (ranks - 1) if servers > 1 else 0.0  # share crossing servers
    per_server_out = bytes_per_rank * remote * (ranks // servers)               # the NIC is per server
    local = bytes_per_rank * (1 - remote)
    t_net = (trips * a.net_latency_us * 1e-6 + per_server_out / (link_gbit / 8 * 1e9)) if remote else 0.0
    t_local = trips * a.socket_latency_us * 1e-6 + local / (a.socket_link_gbs * 1e9)
    return max(t_net, t_local)


def step(batch, servers, link_gbit, attention, a):
    """(seconds per decode step, bytes each rank sends per token) for the whole job."""
    ranks = servers * 2
    seqs = batch / ranks if attention == "dp" else batch  # sequences a rank attends
    attn_params = ATTN / ranks if attention == "tp" else ATTN
    attn_tokens = max(seqs, 1) if attention == "dp" else batch
    t = LAYERS * group_time(attn_params, attn_tokens, a)
    t += DENSE_LAYERS * group_time(DENSE / (ranks if attention == "tp" else 1), attn_tokens, a)
    t += MOE_LAYERS * group_time(EXPERT / (ranks if attention == "tp" else 1), attn_tokens, a)  # shared expert
    # Routed experts: batch x top-k rows over 256 experts; a rank holds 256 / ranks of them and
    # reads each that any of the step's tokens chose.
    rows = batch * TOP_K / EXPERTS
    chosen = EXPERTS / ranks * (1 - (1 - 1 / EXPERTS) ** (batch * TOP_K))
    t += MOE_LAYERS * chosen * group_time(EXPERT, rows, a)
    t += group_time(HEAD / ranks if attention == "tp" else HEAD, attn_tokens if attention == "dp" else batch, a)
    # Collectives. Dispatch and combine: each token's hidden state (bf16) to the ranks of its
    # top-8 experts other than its own, and back.
    remote_ranks = ranks * (1 - (1 - 1 / ranks) ** TOP_K) * (ranks - 1) / ranks
    tokens_here = seqs if attention == "dp" else batch / ranks
    a2a = tokens_here * remote_ranks * HIDDEN * 2
    comm = MOE_LAYERS * 2 * collective_time(a2a, servers, ranks, link_gbit, a, traversals(1, a2a / (ranks - 1)))
    sent = MOE_LAYERS * 2 * remote_ranks * HIDDEN * 2
    if attention == "tp":  # attention and dense/shared outputs all-reduced (ring: 2 (R-1)/R of the data)
        ar = batch * HIDDEN * 4 * 2 * (ranks - 1) / ranks
        comm += LAYERS * 2 * collective_time(ar, servers, ranks, link_gbit, a, traversals(2, batch * HIDDEN * 4))
        sent += LAYERS * 2 * HIDDEN * 4 * 2 * (ranks - 1) / ranks
    return t + comm, t, comm, sent


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--socket-read-gbs", type=float, default=300.0,
                   help="read bandwidth of one socket's memory, GB/s (12 channels of DDR5-4800: 461 peak)")
    p.add_argument("--socket-peak-gmacs", type=float, default=96 * 223 * 0.8,
                   help="int8 dot-product peak of one socket, GMAC/s (96 cores x the 223 per core measured "
                        "here x 0.8 for all-core clocks)")
    p.add_argument("--socket-link-gbs", type=float, default=50.0, help="between the two sockets of a server, GB/s")
    p.add_argument("--socket-latency-us", type=float, default=3.0, help="one-way, between the sockets, us")
    p.add_argument("--net-latency-us", type=float, default=20.0,
                   help="one-way latency of a message between servers over TCP, us")
    a = p.parse_args()
    print(f"weights per token: {(LAYERS * ATTN + DENSE_LAYERS * DENSE + MOE_LAYERS * (TOP_K + 1) * EXPERT + HEAD) / 1e9:.1f} G"
          f" active, {(LAYERS * ATTN + DENSE_LAYERS * DENSE + MOE_LAYERS * (EXPERTS + 1) * EXPERT + HEAD) * Q4_BYTES / 1e9:.0f} GB"
          " in all at Q4_0")
    print("| servers | link | attention | batch | step ms (compute + collectives) | tok/s | MB sent per token per rank |")
    print("|---:|---:|---|---:|---|---:|---:|")
    for servers in (2, 4):
        for link in (25, 100):
            for attention in ("dp", "tp"):
                for batch in (1, 64, 256):
                    total, comp, comm, sent = step(batch, servers, link, attention, a)
                    print(f"| {servers} | {link} Gbit/s | {attention.upper()} | {batch} | {total * 1e3:.1f} "
                          f"({comp * 1e3:.1f} + {comm * 1e3:.1f}) | {batch / total:.0f} | {sent / 1e6:.2f} |")


if __name__ == "__main__":
    main()
