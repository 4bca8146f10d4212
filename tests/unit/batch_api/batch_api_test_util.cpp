#include "batch_api_test_util.h"

#include <cctype>
#include <chrono>
#include <fstream>

namespace db::test {

std::unique_ptr<Engine> make_engine(ModelBundle& bundle, int max_num_seqs) {
  EngineConfig cfg;
  cfg.threads = 2;
  cfg.max_num_seqs = max_num_seqs;
  cfg.kv_cache_memory = 64ll << 20;
  return std::make_unique<Engine>(bundle, cfg);
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

batch::BatchJobOptions completion_batch(const ScratchDir& dir, ModelBundle& bundle,
                                        const std::vector<nlohmann::json>& bodies) {
  std::ofstream in(dir.file("in.jsonl"));
  for (size_t i = 0; i < bodies.size(); ++i)
    in << nlohmann::json{{"custom_id", "r" + std::to_string(i)}, {"method", "POST"}, {"url", "/v1/completions"},
                         {"body", bodies[i]}}
              .dump()
       << "\n";
  in << R"({"custom_id": "bad", "method": "POST", "url": "/v1/completions", "body": {"max_tokens": 2}})" << "\n";
  batch::BatchJobOptions o;
  o.input_path = dir.file("in.jsonl");
  o.output_path = dir.file("out.jsonl");
  o.model_name = "m";
  o.max_context = bundle.model().config().max_context;
  return o;
}

void RecordingResponder::send(int status, http::Headers headers, std::string body) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = status;
    headers_ = std::move(headers);
    body_ = std::move(body);
    ++responses_;
  }
  cv_.notify_all();
}

void RecordingResponder::begin_stream(int status, http::Headers headers) {
  std::lock_guard<std::mutex> lock(mu_);
  status_ = status;
  headers_ = std::move(headers);
}

void RecordingResponder::write(std::string chunk) {
  std::lock_guard<std::mutex> lock(mu_);
  body_ += chunk;
}

void RecordingResponder::end() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++responses_;
  }
  cv_.notify_all();
}

bool RecordingResponder::wait(double timeout_s) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] { return responses_ > 0; });
}

int RecordingResponder::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

std::string RecordingResponder::body() const {
  std::lock_guard<std::mutex> lock(mu_);
  return body_;
}

std::string RecordingResponder::header(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  for (const auto& [k, v] : headers_)
    if (lower(k) == lower(name)) return v;
  return "";
}

int RecordingResponder::responses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return responses_;
}

}  // namespace db::test
