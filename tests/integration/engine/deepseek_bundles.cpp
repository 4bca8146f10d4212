#include "deepseek_bundles.h"

#include <map>
#include <memory>
#include <mutex>

#include "gguf_copy.h"
#include "scratch_dir.h"

namespace db::test {

ModelBundle& deepseek_bundle(const std::string& fixture, const std::string& format) {
  static std::mutex mu;
  static ScratchDir dir("deepseek_bundles");  // the tokenizer copies, removed at exit
  static std::map<std::string, std::unique_ptr<ModelBundle>> bundles;
  std::lock_guard<std::mutex> lock(mu);
  const std::string key = fixture + "-" + format;
  std::unique_ptr<ModelBundle>& b = bundles[key];
  if (!b) {
    const std::string copy = dir.file(key + ".gguf");
    write_with_tokenizer(std::string(DB_TEST_DATA) + "/model/" + fixture + "/model-" + format + ".gguf", copy);
    b = ModelBundle::open(copy, 2);
  }
  return *b;
}

}  // namespace db::test
