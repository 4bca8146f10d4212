#include "kernels/weight_replicas.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>

#include "util/error.h"
#include "util/huge_buffer.h"
#include "util/numa_nodes.h"

namespace db::kernels {

namespace {

constexpr size_t kPage = 4096;

}  // namespace

struct WeightReplicas::Table {
  struct Range {
    uintptr_t begin = 0;
    size_t bytes = 0;
    size_t offset = 0;  // of its copy within each slot's buffer
  };
  std::vector<Range> ranges;      // ascending, disjoint
  std::vector<HugeBuffer> copies;  // copies[k - 1]: slot k's
  size_t bytes = 0;
  size_t not_moved = 0;

  // The copy for `slot` of [p, p + n), or null when no range holds it whole.
  const uint8_t* find(uintptr_t p, size_t n, int slot) const {
    auto it =
        std::upper_bound(ranges.begin(), ranges.end(), p, [](uintptr_t x, const Range& r) { return x < r.begin; });
    if (it == ranges.begin()) return nullptr;
    --it;
    if (p - it->begin > it->bytes || n > it->bytes - (p - it->begin)) return nullptr;
    return copies[static_cast<size_t>(slot - 1)].data() + it->offset + (p - it->begin);
  }
};

namespace {

// The live tables. Registered and withdrawn under `mu` while no product runs;
// read without a lock by the threads that translate.
struct Registry {
  static constexpr size_t kMax = 16;
  std::mutex mu;
  std::array<std::atomic<const WeightReplicas::Table*>, kMax> tables{};
  std::atomic<int> live{0};
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

WeightReplicas::WeightReplicas() = default;
WeightReplicas::~WeightReplicas() {
  if (table_ == nullptr) return;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto& t : r.tables)
    if (t.load() == table_.get()) {
      t.store(nullptr);
      r.live.fetch_sub(1);
    }
}
WeightReplicas::WeightReplicas(WeightReplicas&&) noexcept = default;
WeightReplicas& WeightReplicas::operator=(WeightReplicas&& other) noexcept {
  if (this != &other) {
    WeightReplicas gone(std::move(*this));
    table_ = std::move(other.table_);
  }
  return *this;
}

WeightReplicas::WeightReplicas(std::vector<WeightRange> ranges, const std::vector<int>& memory_nodes) {
  std::erase_if(ranges, [](const WeightRange& r) { return r.data == nullptr || r.bytes == 0; });
  if (memory_nodes.size() < 2 || ranges.empty()) return;
  std::sort(ranges.begin(), ranges.end(), [](const WeightRange& a, const WeightRange& b) { return a.data < b.data; });
  auto t = std::make_unique<Table>();
  for (const WeightRange& w : ranges) {
    const auto b = reinterpret_cast<uintptr_t>(w.data);
    if (!t->ranges.empty() && b <= t->ranges.back().begin + t->ranges.back().bytes) {
      Table::Range& last = t->ranges.back();
      last.bytes = std::max(last.bytes, b + w.bytes - last.begin);
      continue;
    }
    t->ranges.push_back({b, w.bytes, 0});
  }
  size_t at = 0;  // each copy at the original's offset within a page, so alignments carry over
  for (Table::Range& r : t->ranges) {
    at += (r.begin % kPage + kPage - at % kPage) % kPage;
    r.offset = at;
    at += r.bytes;
    t->bytes += r.bytes;
  }
  const int node0 = memory_nodes[0];
  for (const Table::Range& r : t->ranges)
    if (!prefer_memory_node(reinterpret_cast<const void*>(r.begin), r.bytes, node0, /*migrate=*/true)) ++t->not_moved;
  for (size_t k = 1; k < memory_nodes.size(); ++k) {
    HugeBuffer& copy = t->copies.emplace_back(at);
    if (!prefer_memory_node(copy.data(), at, memory_nodes[k], /*migrate=*/false))
      throw Error("--numa replicate: cannot place a copy of the weights on node " + std::to_string(memory_nodes[k]) +
                  ": mbind: " + std::strerror(errno));
    for (const Table::Range& r : t->ranges)
      std::memcpy(copy.data() + r.offset, reinterpret_cast<const void*>(r.begin), r.bytes);  // first touch
  }
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  for (auto& slot : reg.tables)
    if (slot.load() == nullptr) {
      slot.store(t.get());
      reg.live.fetch_add(1);
      table_ = std::move(t);
      return;
    }
  throw Error("--numa replicate: more than " + std::to_string(Registry::kMax) + " replicated models at once");
}

int WeightReplicas::slots() const { return table_ == nullptr ? 0 : static_cast<int>(table_->copies.size()) + 1; }
size_t WeightReplicas::bytes_per_copy() const { return table_ == nullptr ? 0 : table_->bytes; }
size_t WeightReplicas::ranges() const { return table_ == nullptr ? 0 : table_->ranges.size(); }
size_t WeightReplicas::originals_not_moved() const { return table_ == nullptr ? 0 : table_->not_moved; }

const uint8_t* weights_of_slot(const uint8_t* p, size_t bytes, int slot) {
  Registry& r = registry();
  if (slot <= 0 || r.live.load(std::memory_order_acquire) == 0) return p;
  for (const auto& t : r.tables) {
    const WeightReplicas::Table* table = t.load(std::memory_order_acquire);
    if (table == nullptr || static_cast<size_t>(slot) > table->copies.size()) continue;
    if (const uint8_t* q = table->find(reinterpret_cast<uintptr_t>(p), bytes, slot)) return q;
  }
  return p;
}

const uint8_t* local_weights(const uint8_t* p, size_t bytes) {
  return weights_of_slot(p, bytes, this_thread_node_slot());
}

std::vector<ReplicatedRange> replicated_ranges(int slot) {
  std::vector<ReplicatedRange> out;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& t : r.tables) {
    const WeightReplicas::Table* table = t.load();
    if (table == nullptr || slot < 1 || static_cast<size_t>(slot) > table->copies.size()) continue;
    for (const WeightReplicas::Table::Range& g : table->ranges)
      out.push_back({reinterpret_cast<const uint8_t*>(g.begin),
                     table->copies[static_cast<size_t>(slot - 1)].data() + g.offset, g.bytes});
  }
  return out;
}

}  // namespace db::kernels
