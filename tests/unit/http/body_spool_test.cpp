// Spooled request bodies: a body the spool wants is written to a file as it arrives
// (Content-Length or chunked), past the in-memory limit and up to the spool's own,
// takes nothing from the body budget, and its file goes when the request does;
// other bodies keep the in-memory limit; at most max_files are spooled at once.
#include "http/body_spool.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "http/request.h"
#include "http/request_reader.h"
#include "scratch_dir.h"

namespace db::http {
namespace {

std::shared_ptr<BodySpool> uploads_spool(const test::ScratchDir& dir, size_t max_bytes, size_t max_files = 4) {
  BodySpoolOptions o;
  o.dir = dir.file("spool");
  o.max_bytes = max_bytes;
  o.max_files = max_files;
  o.wants = [](const Request& head) { return head.method == "POST" && head.path == "/upload"; };
  return std::make_shared<BodySpool>(o);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t files_in(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

TEST(BodySpool, AWantedBodyGoesToAFileBeyondTheMemoryLimit) {
  test::ScratchDir dir("spool");
  auto budget = std::make_shared<BodyBudget>(1000);
  RequestReader r(16 << 10, 100, budget, uploads_spool(dir, 1 << 20));
  const std::string data(5000, 'x');
  std::string in = "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n\r\n" + data;
  ASSERT_EQ(r.feed(in).status, RequestReader::Status::done);
  EXPECT_EQ(budget->held(), 0u) << "a spooled body holds no memory budget";
  std::string path;
  {
    Request req = r.take("p");
    EXPECT_TRUE(req.body.empty());
    ASSERT_TRUE(req.body_file);
    EXPECT_EQ(req.body_file->size(), 5000u);
    path = req.body_file->path();
    EXPECT_EQ(read_file(path), data);
  }
  EXPECT_FALSE(std::filesystem::exists(path)) << "the file goes with the request";

  std::string chunked = "POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 3; ++i) chunked += "3e8\r\n" + std::string(1000, static_cast<char>('a' + i)) + "\r\n";
  chunked += "0\r\n\r\n";
  ASSERT_EQ(r.feed(chunked).status, RequestReader::Status::done);
  Request req = r.take("p");
  ASSERT_TRUE(req.body_file);
  EXPECT_EQ(read_file(req.body_file->path()), std::string(1000, 'a') + std::string(1000, 'b') + std::string(1000, 'c'));
}

TEST(BodySpool, LimitsHoldForSpooledAndOtherBodies) {
  test::ScratchDir dir("spool");
  auto spool = uploads_spool(dir, 2000);
  RequestReader r(16 << 10, 100, nullptr, spool);
  std::string head = "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 2001\r\n\r\n";
  auto big = r.feed(head);
  EXPECT_EQ(big.http_status, 413) << big.message;
  RequestReader other(16 << 10, 100, nullptr, spool);
  std::string in = "POST /elsewhere HTTP/1.1\r\nHost: t\r\nContent-Length: 101\r\n\r\n";
  EXPECT_EQ(other.feed(in).http_status, 413) << "other routes keep the in-memory limit";
  RequestReader chunked(16 << 10, 100, nullptr, spool);
  std::string c = "POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";
  c += "7d0\r\n" + std::string(2000, 'z') + "\r\n1\r\nz\r\n";
  EXPECT_EQ(chunked.feed(c).http_status, 413) << "a chunked upload past the spool's limit";
  RequestReader small(16 << 10, 100, nullptr, spool);
  std::string s = "POST /elsewhere HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n65\r\n" +
                  std::string(101, 'q') + "\r\n";
  EXPECT_EQ(small.feed(s).http_status, 413) << "a chunked body elsewhere past the in-memory limit";
}

TEST(BodySpool, AtMostMaxFilesAtOnceAndLeftoversGoAtStart) {
  test::ScratchDir dir("spool");
  std::filesystem::create_directories(dir.file("spool"));
  std::ofstream(dir.file("spool/body-stale")) << "left by an earlier run";
  auto spool = uploads_spool(dir, 1 << 20, 1);
  EXPECT_EQ(files_in(dir.file("spool")), 0u);
  RequestReader a(16 << 10, 100, nullptr, spool), b(16 << 10, 100, nullptr, spool);
  std::string head = "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n";
  std::string first = head + "01234";
  EXPECT_EQ(a.feed(first).status, RequestReader::Status::need_more);
  std::string second = head;
  EXPECT_EQ(b.feed(second).http_status, 503) << "one spooled body at a time";
  std::string rest = "56789";
  ASSERT_EQ(a.feed(rest).status, RequestReader::Status::done);
  { Request done = a.take("p"); }
  RequestReader c(16 << 10, 100, nullptr, spool);
  std::string third = head + "abcdefghij";
  EXPECT_EQ(c.feed(third).status, RequestReader::Status::done) << "the slot came back";
}

}  // namespace
}  // namespace db::http
