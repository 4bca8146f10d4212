// The group of one: every collective is a copy or nothing, and never waits. What a
// single process uses, so model code calls the same collectives either way.
#pragma once
#include "dist/communicator.h"

namespace db::dist {

class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void all_reduce_sum(std::span<float>) override {}
  void all_gather(std::span<const std::byte> send, std::span<std::byte> recv) override;
  void all_to_all_v(std::span<const std::byte> send, std::span<const size_t> send_counts, std::span<std::byte> recv,
                    std::span<const size_t> recv_counts) override;
  void broadcast(std::vector<std::byte>& bytes, int root) override;
  [[noreturn]] void abort(int code) override;
  // Another group of one.
  std::unique_ptr<Communicator> split(int color, int key) override;
};

}  // namespace db::dist
