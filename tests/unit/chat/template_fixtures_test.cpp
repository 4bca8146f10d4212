// Renders every (template, conversation, add_generation_prompt) case of
// tests/data/chat/cases.json and compares byte-for-byte with the output of
// Python jinja2 as transformers renders it (tests/data/chat/expected.json,
// written by scripts/gen_chat_fixtures.py).
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "chat/chat_template.h"

namespace db::chat {
namespace {

using Json = nlohmann::ordered_json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Json read_json(const std::string& path) { return Json::parse(read_file(path)); }

std::string first_difference(const std::string& want, const std::string& got) {
  size_t i = 0;
  while (i < want.size() && i < got.size() && want[i] == got[i]) ++i;
  auto around = [i](const std::string& s) { return Json(s.substr(i < 40 ? 0 : i - 40, 120)).dump(); };
  return "first difference at byte " + std::to_string(i) + "\n  want: " + around(want) + "\n  got:  " + around(got);
}

TEST(ChatTemplateFixtures, MatchesPythonJinja2ForEveryCase) {
  const std::string dir = std::string(DB_TEST_DATA) + "/chat/";
  const Json cases = read_json(dir + "cases.json");
  const Json expected = read_json(dir + "expected.json");

  std::map<std::string, ChatTemplate> templates;
  for (const auto& [name, meta] : cases["templates"].items()) {
    templates.emplace(name, ChatTemplate::parse(read_file(dir + "templates/" + meta["file"].get<std::string>())));
  }

  int matched = 0, total = 0;
  std::map<std::string, std::pair<int, int>> per_template;  // name -> (matched, total)
  for (const Json& c : expected["cases"]) {
    const std::string tname = c["template"];
    const std::string cname = c["conversation"];
    const bool agp = c["add_generation_prompt"];
    const Json& meta = cases["templates"][tname];
    const Json& conv = cases["conversations"][cname];
    const Json extra = conv.contains("extra") ? conv["extra"] : Json::object();
    const std::string label = tname + " / " + cname + " / add_generation_prompt=" + (agp ? "true" : "false");
    ++total;
    ++per_template[tname].second;
    bool ok = false;
    try {
      const std::string out = apply_chat_template(templates.at(tname), conv["messages"], agp, meta["bos_token"],
                                                  meta["eos_token"], extra);
      if (c.contains("output")) {
        ok = out == c["output"].get<std::string>();
        EXPECT_TRUE(ok) << label << ": " << first_difference(c["output"], out);
      } else {
        ADD_FAILURE() << label << ": expected a failure (" << (c.contains("raised") ? c["raised"] : c["error"]).dump()
                      << ") but rendered " << Json(out).dump();
      }
    } catch (const TemplateRaisedError& e) {
      ok = c.contains("raised") && c["raised"].get<std::string>() == e.what();
      EXPECT_TRUE(ok) << label << ": raise_exception(" << e.what() << ") but expected " << c.dump();
    } catch (const Error& e) {
      ok = c.contains("error");
      EXPECT_TRUE(ok) << label << ": error " << e.what() << " but expected " << c.dump();
    }
    if (ok) {
      ++matched;
      ++per_template[tname].first;
    }
  }
  for (const auto& [name, counts] : per_template) {
    std::cout << "  " << name << ": " << counts.first << "/" << counts.second << " cases match\n";
  }
  std::cout << matched << "/" << total << " (template, conversation, add_generation_prompt) cases match Python jinja2\n";
  RecordProperty("matched", matched);
  RecordProperty("total", total);
  EXPECT_EQ(matched, total);
  EXPECT_GE(total, 300) << "fixture set unexpectedly small";
}

}  // namespace
}  // namespace db::chat
