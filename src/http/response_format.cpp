#include "http/response_format.h"

#include <cctype>
#include <cstdio>

namespace db::http {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

bool is_framing_header(std::string_view name) {
  return iequals(name, "content-length") || iequals(name, "transfer-encoding") || iequals(name, "connection");
}

void append_clean(std::string& out, std::string_view text) {
  for (char c : text) {
    if (c != '\r' && c != '\n') out.push_back(c);
  }
}

}  // namespace

std::string_view reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Unknown";
  }
}

std::string format_head(int status, const Headers& headers, BodyFraming framing, size_t content_length, bool close,
                        bool keep_alive_header) {
  std::string out;
  out.reserve(128 + headers.size() * 48);
  out += "HTTP/1.1 ";
  out += std::to_string(status);
  out += ' ';
  out += reason_phrase(status);
  out += "\r\n";
  for (const auto& [name, value] : headers) {
    if (name.empty() || is_framing_header(name)) continue;
    append_clean(out, name);
    out += ": ";
    append_clean(out, value);
    out += "\r\n";
  }
  if (framing == BodyFraming::content_length) {
    out += "Content-Length: " + std::to_string(content_length) + "\r\n";
  } else if (framing == BodyFraming::chunked) {
    out += "Transfer-Encoding: chunked\r\n";
  }
  if (close) {
    out += "Connection: close\r\n";
  } else if (keep_alive_header) {
    out += "Connection: keep-alive\r\n";
  }
  out += "\r\n";
  return out;
}

std::string frame_chunk(std::string_view data) {
  char size_line[24];
  int n = std::snprintf(size_line, sizeof size_line, "%zx\r\n", data.size());
  std::string out;
  out.reserve(static_cast<size_t>(n) + data.size() + 2);
  out.append(size_line, static_cast<size_t>(n));
  out.append(data);
  out += "\r\n";
  return out;
}

std::string format_error_response(int status, const std::string& json_body) {
  Headers headers = {{"Content-Type", "application/json"}};
  if (status == 503) headers.emplace_back("Retry-After", "1");
  std::string out = format_head(status, headers, BodyFraming::content_length, json_body.size(), /*close=*/true);
  out += json_body;
  return out;
}

}  // namespace db::http
