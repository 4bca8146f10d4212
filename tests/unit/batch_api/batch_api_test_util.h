// Helpers for the batch API tests: a scratch directory, an engine, and a Responder
// that records the one response it gets.
#pragma once
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>
#include <vector>

#include "batch/batch_job.h"
#include "bundle/model_bundle.h"
#include "engine/engine.h"
#include "http/responder.h"
#include "scratch_dir.h"

namespace db::test {

// An engine on `bundle` as the batch tests run it: 2 threads, 64 MiB of KV cache.
std::unique_ptr<Engine> make_engine(ModelBundle& bundle, int max_num_seqs);

void write_text(const std::string& path, const std::string& text);

// Writes a batch input of /v1/completions requests "r0", "r1", ... with these
// bodies, then one line "bad" whose body has no prompt, into dir/in.jsonl, and
// returns the options of a run_batch_job over it into dir/out.jsonl.
batch::BatchJobOptions completion_batch(const ScratchDir& dir, ModelBundle& bundle,
                                        const std::vector<nlohmann::json>& bodies);

// Records a complete response (send) or a streamed one (begin_stream, write*, end).
class RecordingResponder : public http::Responder {
 public:
  void send(int status, http::Headers headers, std::string body) override;
  void begin_stream(int status, http::Headers headers) override;
  void write(std::string chunk) override;
  void end() override;
  bool client_gone() const override { return false; }
  void on_client_gone(std::function<void()> fn) override {}

  // Waits until the response ended; false after `timeout_s`.
  bool wait(double timeout_s = 30);
  int status() const;
  std::string body() const;
  // The value of header `name` (case-insensitive), "" when absent.
  std::string header(const std::string& name) const;
  int responses() const;  // send() / end() calls seen (1 for a correct handler)

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int status_ = 0, responses_ = 0;
  http::Headers headers_;
  std::string body_;
};

}  // namespace db::test
