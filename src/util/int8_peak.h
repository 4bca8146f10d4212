// The machine's int8 dot-product peak, measured once: every thread of a pool runs
// twelve independent chains of the widest int8 multiply-add instruction the CPU
// has (AVX-512 VNNI vpdpbusd: 64 multiply-adds; AVX-VNNI: 32; AVX2 vpmaddubsw +
// vpmaddwd: 32 per pair), so the execution ports set the pace, as the quantized
// matmul kernels' inner loops do at best. MoE batch sizing compares it with the
// read bandwidth (engine/moe_batch_sizing.h).
#pragma once

namespace db {

class ThreadPool;

// Multiply-adds per second over all of `pool`'s threads, best of a few passes of
// about `seconds` / 3 each; 0 on a CPU without AVX2 (no int8 product to measure).
double measure_int8_peak(ThreadPool& pool, double seconds = 0.06);

}  // namespace db
