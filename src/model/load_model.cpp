#include <cstdio>

#include "model/checkpoint_converter.h"
#include "model/model.h"
#include "model/model_source.h"
#include "model/registry.h"

namespace db {

std::unique_ptr<Model> load_model(const std::string& path, ThreadPool* load_pool, const LoadOptions& options) {
  auto src = ModelSource::open(path, options);  // rejects architectures without a registry entry
  CheckpointConverter* converter = src->converter();  // owned by the source, which the model keeps
  if (converter) converter->set_pool(load_pool);
  ModelFactory build = src->arch().build;
  std::unique_ptr<Model> model = build(std::move(src), load_pool);
  if (converter) {
    converter->set_pool(nullptr);  // the pool lives only during the load; later conversions (MTP) run inline
    std::fprintf(stderr, "%s: %s\n", path.c_str(), converter->summary().c_str());
  }
  return model;
}

}  // namespace db
