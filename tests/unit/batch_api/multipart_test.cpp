// multipart/form-data parsing: boundaries (plain and quoted), CRLF handling,
// preamble/epilogue, and every malformed shape refused with a 400 ApiError.
#include <gtest/gtest.h>

#include "api/api_error.h"
#include "server/batch_api/multipart.h"

namespace db::server {
namespace {

std::string upload_body(const std::string& boundary, const std::string& file_data) {
  return "--" + boundary + "\r\n" +
         "Content-Disposition: form-data; name=\"purpose\"\r\n\r\n"
         "batch\r\n"
         "--" + boundary + "\r\n" +
         "Content-Disposition: form-data; name=\"file\"; filename=\"requests.jsonl\"\r\n"
         "Content-Type: application/octet-stream\r\n\r\n" +
         file_data + "\r\n--" + boundary + "--\r\n";
}

int status_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const api::ApiError& e) {
    return e.status();
  }
  return 0;
}

TEST(MultipartBoundary, PlainQuotedAndCaseInsensitive) {
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=abc123"), "abc123");
  EXPECT_EQ(multipart_boundary("Multipart/Form-Data; charset=utf-8; BOUNDARY=\"a b;c\""), "a b;c");
  EXPECT_EQ(multipart_boundary("multipart/form-data;boundary=\"q\\\"x\""), "q\"x");
}

TEST(MultipartBoundary, WrongTypeOrMissingBoundaryIs400) {
  EXPECT_EQ(status_of([] { multipart_boundary("application/json"); }), 400);
  EXPECT_EQ(status_of([] { multipart_boundary("multipart/form-data"); }), 400);
  EXPECT_EQ(status_of([] { multipart_boundary("multipart/form-data; boundary="); }), 400);
  EXPECT_EQ(status_of([] { multipart_boundary("multipart/form-data; boundary=\"unterminated"); }), 400);
}

TEST(Multipart, ParsesFieldsAndFileBytesExactly) {
  const std::string data = "{\"a\":1}\r\n{\"b\":2}\n\r\nlast line without newline";
  const std::string body = upload_body("XyZ", data);  // the parts are views into it
  const auto parts = parse_multipart(body, "XyZ");
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].name, "purpose");
  EXPECT_FALSE(parts[0].filename.has_value());
  EXPECT_EQ(parts[0].data, "batch");
  EXPECT_EQ(parts[1].name, "file");
  ASSERT_TRUE(parts[1].filename.has_value());
  EXPECT_EQ(*parts[1].filename, "requests.jsonl");
  EXPECT_EQ(parts[1].content_type, "application/octet-stream");
  EXPECT_EQ(parts[1].data, data);
}

TEST(Multipart, BoundaryTextInsideDataWithoutLeadingCrlfStaysData) {
  const std::string data = "x--XyZ y\n--XyZ";
  const std::string body = upload_body("XyZ", data);  // the parts are views into it
  const auto parts = parse_multipart(body, "XyZ");
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1].data, data);
}

TEST(Multipart, PreambleEpilogueAndEmptyPart) {
  const std::string body =
      "this is a preamble\r\n--b\r\nContent-Disposition: form-data; name=\"empty\"\r\n\r\n\r\n--b--\r\nepilogue";
  const auto parts = parse_multipart(body, "b");
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].name, "empty");
  EXPECT_EQ(parts[0].data, "");
}

TEST(Multipart, QuotedFilenameWithEscapesAndSemicolons) {
  const std::string body =
      "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\\\"b; c.jsonl\"\r\n\r\nDATA\r\n--b--";
  const auto parts = parse_multipart(body, "b");
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(*parts[0].filename, "a\"b; c.jsonl");
  EXPECT_EQ(parts[0].data, "DATA");
}

TEST(Multipart, OnlyTheClosingBoundaryMeansNoParts) {
  EXPECT_TRUE(parse_multipart("--b--\r\n", "b").empty());
}

TEST(Multipart, MalformedBodiesAre400) {
  // No boundary line at all.
  EXPECT_EQ(status_of([] { parse_multipart("", "b"); }), 400);
  EXPECT_EQ(status_of([] { parse_multipart("hello", "b"); }), 400);
  // Missing closing boundary.
  EXPECT_EQ(status_of([] { parse_multipart("--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nDATA", "b"); }),
            400);
  // Headers never end (no blank line).
  EXPECT_EQ(status_of([] { parse_multipart("--b\r\nContent-Disposition: form-data; name=\"x\"\r\nDATA", "b"); }),
            400);
  // A part without Content-Disposition, or without a name.
  EXPECT_EQ(status_of([] { parse_multipart("--b\r\nContent-Type: text/plain\r\n\r\nDATA\r\n--b--", "b"); }), 400);
  EXPECT_EQ(status_of([] { parse_multipart("--b\r\n\r\nDATA\r\n--b--", "b"); }), 400);
  EXPECT_EQ(status_of([] { parse_multipart("--b\r\nContent-Disposition: form-data\r\n\r\nDATA\r\n--b--", "b"); }),
            400);
  EXPECT_EQ(status_of([] { parse_multipart("--b\r\nContent-Disposition: attachment; name=\"x\"\r\n\r\nD\r\n--b--",
                                           "b"); }),
            400);
  // Bare LF line endings are not multipart delimiters.
  EXPECT_EQ(status_of([] { parse_multipart("--b\nContent-Disposition: form-data; name=\"x\"\n\nDATA\n--b--\n", "b"); }),
            400);
}

TEST(HeaderValue, ParamsAndBareTokens) {
  const HeaderValue hv = parse_header_value("form-data; name=\"file\"; flag; filename=plain.txt ");
  EXPECT_EQ(hv.value, "form-data");
  EXPECT_EQ(hv.param("name").value_or("?"), "file");
  EXPECT_EQ(hv.param("filename").value_or("?"), "plain.txt");
  EXPECT_EQ(hv.param("flag").value_or("?"), "");
  EXPECT_FALSE(hv.param("missing").has_value());
}

}  // namespace
}  // namespace db::server
