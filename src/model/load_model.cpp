#include "model/model.h"
#include "model/model_source.h"
#include "model/registry.h"

namespace db {

std::unique_ptr<Model> load_model(const std::string& path, ThreadPool* load_pool) {
  auto src = ModelSource::open(path);  // rejects architectures without a registry entry
  ModelFactory build = src->arch().build;
  return build(std::move(src), load_pool);
}

}  // namespace db
