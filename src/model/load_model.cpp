#include "model/model.h"
#include "model/model_source.h"
#include "model/registry.h"
#include "util/error.h"

namespace db {

std::unique_ptr<Model> load_model(const std::string& path, ThreadPool* load_pool) {
  auto src = ModelSource::open(path);
  const std::string arch = src->architecture();
  ModelFactory factory = find_model_factory(arch);
  if (!factory) {
    std::string known;
    for (const auto& a : supported_architectures()) known += (known.empty() ? "" : ", ") + a;
    throw Error(src->config_path() + ": architecture '" + arch + "' is not supported (supported: " + known + ")");
  }
  return factory(std::move(src), load_pool);
}

}  // namespace db
