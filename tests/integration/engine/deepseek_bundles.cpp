#include "deepseek_bundles.h"

#include <map>
#include <memory>
#include <mutex>

#include "gguf_copy.h"
#include "scratch_dir.h"

namespace db::test {

const std::string& deepseek_model_file(const std::string& fixture, const std::string& format) {
  static std::mutex mu;
  static ScratchDir dir("deepseek_bundles");  // the tokenizer copies, removed at exit
  static std::map<std::string, std::string> files;
  std::lock_guard<std::mutex> lock(mu);
  const std::string key = fixture + "-" + format;
  auto it = files.find(key);
  if (it != files.end()) return it->second;
  const std::string copy = dir.file(key + ".gguf");
  write_with_tokenizer(std::string(DB_TEST_DATA) + "/model/" + fixture + "/model-" + format + ".gguf", copy);
  return files.emplace(key, copy).first->second;
}

ModelBundle& deepseek_bundle(const std::string& fixture, const std::string& format) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<ModelBundle>> bundles;
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<ModelBundle>& b = bundles[fixture + "-" + format];
  if (!b) b = ModelBundle::open(deepseek_model_file(fixture, format), 2);
  return *b;
}

}  // namespace db::test
