// `deepbatch convert`: writes a GGUF model file
//   - from a GGUF file, with its weight matrices in another type
//     (model/gguf_convert.h), e.g. an F16 or Q8_0 copy of a Q4 file;
//   - from a Hugging Face checkpoint directory (plain, FP8, AWQ or GPTQ), its
//     matrices converted as loading the directory would (--quantize picks the
//     type; model/checkpoint_gguf.h), so that it is converted once, not at
//     every start;
// and/or pre-packed for this CPU's kernels (model/gguf_pack.h), so that
// loading it maps the matrices instead of repacking them.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "commands.h"
#include "model/checkpoint_gguf.h"
#include "model/gguf_convert.h"
#include "model/gguf_pack.h"
#include "util/cpu_features.h"
#include "util/error.h"
#include "util/thread_pool.h"

namespace db::cli {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct ConvertOptions {
  std::string in, out, type, quantize;
  bool pack = false;
  int threads = 0;
};

int convert_checkpoint(const ConvertOptions& o) {
  if (!o.type.empty())
    throw Error("convert: --type applies to GGUF files; a checkpoint directory's matrices take --quantize TYPE");
  LoadOptions load;
  if (!o.quantize.empty()) load.quantize = load_quantize_type_from_name(o.quantize);
  const auto start = std::chrono::steady_clock::now();
  ThreadPool pool(resolve_threads(o.threads));
  const std::optional<IsaLevel> level = o.pack ? std::optional<IsaLevel>(cpu_features().level) : std::nullopt;
  const CheckpointGgufReport r = convert_checkpoint_to_gguf(o.in, o.out, load, level, &pool);
  if (!r.conversion.empty()) std::printf("%s: %s\n", o.in.c_str(), r.conversion.c_str());
  std::printf("wrote %s: %lld tensors", o.out.c_str(), static_cast<long long>(r.tensors));
  if (level) std::printf(", %lld pre-packed for %s", static_cast<long long>(r.packed), isa_name(*level));
  std::printf(", %.1f MiB in %.1f s\n", static_cast<double>(r.bytes) / (1 << 20), seconds_since(start));
  return 0;
}

int convert_gguf_file(const ConvertOptions& o) {
  if (!o.quantize.empty())
    throw Error("convert: --quantize applies to checkpoint directories; a GGUF file's matrices take --type TYPE");
  if (o.type.empty() && !o.pack) throw Error("convert: give --type TYPE, --pack, or both");
  const auto start = std::chrono::steady_clock::now();
  std::string packed_from = o.in;
  if (!o.type.empty()) {
    const DType type = convert_type_from_name(o.type);
    // Named .gguf: pack_gguf opens a DeepSeek file as a model (model/gguf_pack.h).
    const std::string typed_out = o.pack ? o.out + ".unpacked-tmp.gguf" : o.out;
    const GgufConvertReport r = convert_gguf(o.in, typed_out, type);
    std::printf("wrote %s: %lld tensors as %s, %lld copied unchanged, %.1f MiB in %.1f s\n", typed_out.c_str(),
                static_cast<long long>(r.converted), o.type.c_str(), static_cast<long long>(r.copied),
                static_cast<double>(r.bytes) / (1 << 20), seconds_since(start));
    packed_from = typed_out;
  }
  if (o.pack) {
    const auto pack_start = std::chrono::steady_clock::now();
    ThreadPool pool(resolve_threads(o.threads));
    const IsaLevel level = cpu_features().level;
    const GgufPackReport r = pack_gguf(packed_from, o.out, level, &pool);
    if (packed_from != o.in) std::filesystem::remove(packed_from);
    std::printf("wrote %s: %lld tensors pre-packed for %s, %lld copied unchanged, %.1f MiB in %.1f s\n",
                o.out.c_str(), static_cast<long long>(r.packed), isa_name(level), static_cast<long long>(r.copied),
                static_cast<double>(r.bytes) / (1 << 20), seconds_since(pack_start));
  }
  return 0;
}

}  // namespace

CLI::App* add_convert_command(CLI::App& app, std::function<int()>& action) {
  auto o = std::make_shared<ConvertOptions>();
  CLI::App* cmd = app.add_subcommand(
      "convert",
      "Write a GGUF model file: from a GGUF file with its matrices in another type, or from a Hugging Face "
      "checkpoint directory (FP8, AWQ, GPTQ included) converted once; optionally pre-packed for this CPU so that "
      "it loads without repacking");
  cmd->add_option("model", o->in, "The GGUF file or checkpoint directory to read")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("-o,--output", o->out, "The GGUF file to write")->required();
  cmd->add_option("--type", o->type,
                  "GGUF input: type of the weight matrices: f32, f16, bf16, q8_0, q5_1, q5_0, q4_1 or q4_0");
  cmd->add_option("--quantize", o->quantize,
                  "Checkpoint input (FP8 / AWQ / GPTQ): the type its matrices are converted to, as loading the "
                  "directory with --quantize would (default Q8_0 for FP8, Q4_1 for AWQ / GPTQ)");
  cmd->add_flag("--pack", o->pack,
                "Store the matrices in the layout this CPU's kernels read (DB_ISA picks another level): "
                "the file then loads by mapping them, and only deepbatch reads it");
  cmd->add_option("-t,--threads", o->threads, "Threads converting and packing (0 = all cores)")->capture_default_str();
  cmd->callback([o, &action] {
    action = [o] { return std::filesystem::is_directory(o->in) ? convert_checkpoint(*o) : convert_gguf_file(*o); };
  });
  return cmd;
}

}  // namespace db::cli
