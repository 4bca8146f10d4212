// Architecture name (GGUF spelling, e.g. "llama") -> the function that builds
// the model. Adding an architecture is one line in registry.cpp plus its own files.
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace db {

class Model;
class ModelSource;
class ThreadPool;

// Builds the model from an opened source; `load_pool`, when not null, is where the
// work of loading (repacking weights) runs. It is used only during the call.
using ModelFactory = std::unique_ptr<Model> (*)(std::unique_ptr<ModelSource> src, ThreadPool* load_pool);

// nullptr when no model class handles `arch`.
ModelFactory find_model_factory(const std::string& arch);
// Every registered architecture name, sorted.
std::vector<std::string> supported_architectures();

}  // namespace db
