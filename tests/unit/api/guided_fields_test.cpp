// The fields that constrain the output: response_format and vLLM's guided_*
// extensions parse into one GrammarSpec; malformed ones, two at once, and
// ignore_eos beside one are refused naming the field.
#include <gtest/gtest.h>

#include <string>

#include "api/api_error.h"
#include "api/request_common.h"

namespace db::api {
namespace {

std::optional<GuidedOutput> guided(const std::string& body) { return parse_common_fields(Json::parse(body)).guided; }

std::pair<std::string, std::string> error_of(const std::string& body) {
  try {
    parse_common_fields(Json::parse(body));
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400) << e.what();
    return {e.param(), e.code()};
  }
  return {"<no error>", ""};
}

TEST(GuidedFields, ResponseFormatKinds) {
  EXPECT_FALSE(guided(R"({})"));
  EXPECT_FALSE(guided(R"({"response_format": {"type": "text"}})"));
  EXPECT_FALSE(guided(R"({"response_format": null})"));
  auto g = guided(R"({"response_format": {"type": "json_object"}})");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->spec.kind, GrammarSpec::Kind::JsonObject);
  EXPECT_EQ(g->field, "response_format");
  g = guided(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "p", "strict": true,
              "schema": {"type": "object", "properties": {"a": {"type": "integer"}}}}}})");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->spec.kind, GrammarSpec::Kind::JsonSchema);
  EXPECT_EQ(Json::parse(g->spec.text), Json::parse(R"({"type": "object", "properties": {"a": {"type": "integer"}}})"));
}

TEST(GuidedFields, TheSchemaKeepsThePropertyOrderGiven) {
  // The output writes properties in schema order, so the order must survive parsing.
  const auto g = guided(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "p", "schema":
      {"type": "object", "properties": {"zeta": {"type": "integer"}, "alpha": {"type": "string"}}}}}})");
  ASSERT_TRUE(g);
  EXPECT_LT(g->spec.text.find("zeta"), g->spec.text.find("alpha")) << g->spec.text;
}

TEST(GuidedFields, VllmExtensions) {
  auto g = guided(R"({"guided_json": "{\"type\": \"string\"}"})");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->spec.kind, GrammarSpec::Kind::JsonSchema);
  EXPECT_EQ(g->spec.text, R"({"type":"string"})");
  g = guided(R"({"guided_regex": "[a-z]+"})");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->spec.kind, GrammarSpec::Kind::Regex);
  EXPECT_EQ(g->spec.text, "[a-z]+");
  g = guided(R"({"guided_grammar": "root ::= \"a\""})");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->spec.kind, GrammarSpec::Kind::Ebnf);
  g = guided(R"({"guided_choice": ["yes", "no"]})");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->spec.kind, GrammarSpec::Kind::Choice);
  EXPECT_EQ(g->spec.choices, (std::vector<std::string>{"yes", "no"}));
  EXPECT_EQ(g->field, "guided_choice");
}

TEST(GuidedFields, MalformedOnesAreRefusedNamingTheField) {
  EXPECT_EQ(error_of(R"({"response_format": "json"})").first, "response_format");
  EXPECT_EQ(error_of(R"({"response_format": {}})").first, "response_format.type");
  EXPECT_EQ(error_of(R"({"response_format": {"type": "yaml"}})").first, "response_format.type");
  EXPECT_EQ(error_of(R"({"response_format": {"type": "json_schema"}})").first, "response_format.json_schema");
  EXPECT_EQ(error_of(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}})").first,
            "response_format.json_schema.schema");
  EXPECT_EQ(error_of(R"({"response_format": {"type": "json_schema", "json_schema": {"schema": 3}}})").first,
            "response_format.json_schema.schema");
  EXPECT_EQ(error_of(R"({"response_format": {"type": "json_object", "extra": 1}})"),
            std::make_pair(std::string("response_format.extra"), std::string("unknown_parameter")));
  EXPECT_EQ(error_of(R"({"guided_json": "{not json"})").first, "guided_json");
  EXPECT_EQ(error_of(R"({"guided_regex": ""})").first, "guided_regex");
  EXPECT_EQ(error_of(R"({"guided_choice": []})").first, "guided_choice");
  EXPECT_EQ(error_of(R"({"guided_choice": ["a", 2]})").first, "guided_choice[1]");
  EXPECT_EQ(error_of(R"({"guided_regex": "a", "response_format": {"type": "json_object"}})").first, "guided_regex");
  EXPECT_EQ(error_of(R"({"guided_regex": "a", "ignore_eos": true})").first, "ignore_eos");
}

}  // namespace
}  // namespace db::api
