// `deepbatch convert`: writes a GGUF model file with its weight matrices in
// another type (model/gguf_convert.h), e.g. an F16 or Q8_0 copy of a Q4 file.
#include <chrono>
#include <cstdio>
#include <string>

#include "commands.h"
#include "model/gguf_convert.h"

namespace db::cli {

CLI::App* add_convert_command(CLI::App& app, std::function<int()>& action) {
  struct Options {
    std::string in, out, type;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("convert", "Write a GGUF model file with its weight matrices in another type");
  cmd->add_option("model", o->in, "The GGUF file to read")->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", o->out, "The GGUF file to write")->required();
  cmd->add_option("--type", o->type, "Type of the weight matrices: f32, f16, bf16, q8_0, q5_1, q5_0, q4_1 or q4_0")
      ->required();
  cmd->callback([o, &action] {
    action = [o] {
      const DType type = convert_type_from_name(o->type);
      const auto start = std::chrono::steady_clock::now();
      const GgufConvertReport r = convert_gguf(o->in, o->out, type);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("wrote %s: %lld tensors as %s, %lld copied unchanged, %.1f MiB in %.1f s\n", o->out.c_str(),
                  static_cast<long long>(r.converted), o->type.c_str(), static_cast<long long>(r.copied),
                  static_cast<double>(r.bytes) / (1 << 20), s);
      return 0;
    };
  });
  return cmd;
}

}  // namespace db::cli
