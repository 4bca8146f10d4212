// Pre-tokenization: the text between added tokens is cut into pieces, each of
// which is then encoded by BPE on its own. A PreTokenizer is an ordered list of
// steps, each refining every piece the previous steps produced, with the
// semantics of the Hugging Face pre-tokenizers of the same names:
//   Split(regex, behavior, invert), Digits (= Split on \p{N}), ByteLevel.
// Presets reproduce the pre-tokenizers that GGUF files name in "tokenizer.ggml.pre".
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tokenizer/regex.h"

namespace db {

// What a Split step does with the matches (Hugging Face SplitDelimiterBehavior).
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

class PreTokenizer {
 public:
  // A step that splits every piece at the matches of `pattern`.
  void add_split(const std::string& pattern, bool literal, SplitBehavior behavior, bool invert);
  // Digits: each digit (\p{N}) its own piece, or runs of digits when !individual.
  void add_digits(bool individual);
  // ByteLevel: optionally prefix a space to pieces not starting with one, then
  // optionally split with the GPT-2 pattern. Must be the last step.
  void add_byte_level(bool add_prefix_space, bool use_regex);

  // Appends the pieces of `text` (valid UTF-8) to `out`; never produces empty pieces.
  void split(std::string_view text, std::vector<std::string>& out) const;

  // Gets each piece split() would append, in the same order, without collecting them.
  // Returning false stops the split.
  using PieceSink = std::function<bool(std::string_view piece)>;
  // Gives `sink` the pieces of `text` (valid UTF-8) one at a time, holding no more than
  // one piece per step at once. Returns false when `sink` stopped it, else true.
  bool split_each(std::string_view text, const PieceSink& sink) const;

  bool empty() const { return steps_.empty(); }
  // True if both split every text alike because their steps are the same
  // (patterns compared as text, a literal control character and its escape,
  // such as a line feed and \n, taken as the same).
  bool same_steps(const PreTokenizer& other) const;
  bool ends_with_byte_level() const;
  size_t num_steps() const { return steps_.size(); }

  // The pre-tokenizer llama.cpp associates with a "tokenizer.ggml.pre" name; throws
  // db::Error listing the supported names for an unknown one.
  static PreTokenizer from_gguf_name(const std::string& name);
  // Whether BPE should look a whole piece up in the vocabulary before merging
  // (Hugging Face "ignore_merges"), as the models behind that name require.
  static bool gguf_name_ignores_merges(const std::string& name);
  // The names from_gguf_name accepts.
  static std::vector<std::string> gguf_names();
  // The first name from_gguf_name (with gguf_name_ignores_merges) turns into
  // the same steps as `p` and the same `ignore_merges`; nullopt when none does,
  // i.e. a GGUF file cannot name this pre-tokenizer.
  static std::optional<std::string> gguf_name_for(const PreTokenizer& p, bool ignore_merges);

  // Interprets a tokenizer.json "pre_tokenizer" object (Sequence, Split, Digits,
  // ByteLevel). Throws db::Error naming `where` and the unsupported part.
  static PreTokenizer from_json(const nlohmann::json& j, const std::string& where);

 private:
  struct Step {
    enum class Kind { Split, ByteLevel } kind = Kind::Split;
    std::shared_ptr<const Regex> regex;  // null for a ByteLevel step without its regex
    bool literal = false;                // the regex's pattern is plain text
    SplitBehavior behavior = SplitBehavior::Isolated;
    bool invert = false;
    bool add_prefix_space = false;  // ByteLevel only
  };
  void apply(const Step& step, const std::string& piece, std::vector<std::string>& out,
             std::vector<MatchSpan>& scratch) const;
  void split_piece(const Step& step, std::string_view piece, std::vector<std::string>& out,
                   std::vector<MatchSpan>& scratch) const;
  // split_each's work: the pieces of `piece` after steps [step, end).
  bool each_piece(size_t step, std::string_view piece, const PieceSink& sink) const;
  bool each_split(const Step& step, size_t next, std::string_view piece, const PieceSink& sink) const;
  std::vector<Step> steps_;
};

// The GPT-2 pre-tokenizer pattern that ByteLevel(use_regex=true) applies.
extern const char* const kGpt2Pattern;

}  // namespace db
