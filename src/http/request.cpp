#include "http/request.h"

namespace db::http {

const std::string* Request::header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return &value;
  }
  return nullptr;
}

}  // namespace db::http
