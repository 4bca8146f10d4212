#include "http/request_target.h"

#include <gtest/gtest.h>

namespace db::http {
namespace {

std::string path_of(std::string_view target) {
  std::string why;
  auto t = parse_request_target(target, why);
  EXPECT_TRUE(t.has_value()) << target << ": " << why;
  return t ? t->path : "";
}

std::string rejected(std::string_view target) {
  std::string why;
  auto t = parse_request_target(target, why);
  EXPECT_FALSE(t.has_value()) << target << " -> " << (t ? t->path : "");
  return why;
}

TEST(RequestTarget, OriginFormSplitsPathAndQuery) {
  std::string why;
  auto t = parse_request_target("/v1/files/abc?limit=2&after=%41", why);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->path, "/v1/files/abc");
  EXPECT_EQ(t->query, "limit=2&after=%41");
  EXPECT_EQ(path_of("/"), "/");
  EXPECT_EQ(path_of("/v1/models?"), "/v1/models");
}

TEST(RequestTarget, AbsoluteFormKeepsOnlyThePath) {
  EXPECT_EQ(path_of("http://127.0.0.1:8000/v1/models"), "/v1/models");
  EXPECT_EQ(path_of("HTTPS://example.com/v1/files?x=1"), "/v1/files");
  EXPECT_EQ(path_of("http://example.com"), "/");
  rejected("http:///v1/models");  // no authority
  rejected("ftp://h/v1/models");
  rejected("http://h?x=1");
}

TEST(RequestTarget, OtherFormsAreRejected) {
  for (const char* t : {"v1/completions", "v1/models", "*", "example.com:443", "", "health", " /v1/models"})
    EXPECT_NE(rejected(t).find("must be an absolute path"), std::string::npos) << t;
  EXPECT_NE(rejected("/v1/models#x").find("fragment"), std::string::npos);
}

TEST(RequestTarget, PercentEncodingIsDecodedOnce) {
  EXPECT_EQ(path_of("/%76%31/models"), "/v1/models");
  EXPECT_EQ(path_of("/v1/files/a%20b"), "/v1/files/a b");
  EXPECT_EQ(path_of("/v1/%2541"), "/v1/%41");  // decoded once: "%25" is a literal '%'
  EXPECT_NE(rejected("/v1%2Fmodels").find("encoded '/'"), std::string::npos);
  EXPECT_NE(rejected("/v1%2fmodels").find("encoded '/'"), std::string::npos);
  for (const char* t : {"/v1/%", "/v1/%4", "/v1/%zz", "/v1/%4g"})
    EXPECT_NE(rejected(t).find("two hex digits"), std::string::npos) << t;
  EXPECT_NE(rejected("/v1/%00models").find("control"), std::string::npos);
  EXPECT_NE(rejected("/v1/%0d%0aX: y").find("control"), std::string::npos);
}

TEST(RequestTarget, DotSegmentsAreResolved) {
  EXPECT_EQ(path_of("/v1/../v1/models"), "/v1/models");
  EXPECT_EQ(path_of("/./v1/./models"), "/v1/models");
  EXPECT_EQ(path_of("/v1/files/x/.."), "/v1/files/");
  EXPECT_EQ(path_of("/v1/files/."), "/v1/files/");
  EXPECT_EQ(path_of("/v1/%2e%2e/v1/models"), "/v1/models");  // encoded dots are dots
  EXPECT_EQ(path_of("/v1/..models"), "/v1/..models");        // not a dot segment
  EXPECT_NE(rejected("/../v1/models").find("above the root"), std::string::npos);
  EXPECT_NE(rejected("/v1/../../x").find("above the root"), std::string::npos);
}

TEST(RequestTarget, EmptySegmentsAreKeptSoTheyNameNoRoute) {
  EXPECT_EQ(path_of("//v1/models"), "//v1/models");
  EXPECT_EQ(path_of("/v1//models"), "/v1//models");
  EXPECT_EQ(path_of("//v1/../v1/models"), "//v1/models");
}

}  // namespace
}  // namespace db::http
