#include "dist/numa_topology.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/error.h"
#include "util/numa_nodes.h"

namespace db::dist {

const NumaNode* NumaTopology::node_of_cpu(int cpu) const {
  for (const NumaNode& n : nodes)
    if (std::binary_search(n.cpus.begin(), n.cpus.end(), cpu)) return &n;
  return nullptr;
}

namespace {

// A non-negative decimal number filling [b, e) exactly.
bool parse_int(const std::string& s, size_t b, size_t e, int& out) {
  if (b >= e || e - b > 9) return false;
  out = 0;
  for (size_t i = b; i < e; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read " + path.string() + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "Node 0 MemTotal:       24683772 kB" -> bytes; 0 when absent.
uint64_t mem_total_bytes(const std::filesystem::path& meminfo) {
  std::ifstream in(meminfo);
  std::string line;
  while (std::getline(in, line)) {
    const size_t at = line.find("MemTotal:");
    if (at == std::string::npos) continue;
    std::istringstream rest(line.substr(at + 9));
    uint64_t kb = 0;
    if (rest >> kb) return kb * 1024;
  }
  return 0;
}

}  // namespace

std::vector<int> parse_cpu_list(const std::string& text) {
  std::string s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::vector<int> cpus;
  for (size_t b = 0; b < s.size();) {
    const size_t comma = std::min(s.find(',', b), s.size());
    const size_t dash = s.find('-', b);
    int lo = 0, hi = 0;
    const bool ok = dash < comma ? parse_int(s, b, dash, lo) && parse_int(s, dash + 1, comma, hi) && lo <= hi
                                 : parse_int(s, b, comma, lo) && (hi = lo, true);
    if (!ok) throw Error("not a CPU list: '" + s + "'");
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    b = comma + 1;
    if (comma + 1 == s.size()) throw Error("not a CPU list: '" + s + "'");
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

NumaTopology read_numa_topology(const std::vector<int>& fallback_cpus, const std::string& root) {
  namespace fs = std::filesystem;
  NumaTopology topo;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    topo.nodes.push_back({0, fallback_cpus, 0});
    return topo;
  }
  for (const fs::directory_entry& e : fs::directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    int id = 0;
    if (name.rfind("node", 0) != 0 || !parse_int(name, 4, name.size(), id) || !e.is_directory()) continue;
    topo.nodes.push_back({id, parse_cpu_list(read_text(e.path() / "cpulist")), mem_total_bytes(e.path() / "meminfo")});
  }
  if (topo.nodes.empty()) topo.nodes.push_back({0, fallback_cpus, 0});
  std::sort(topo.nodes.begin(), topo.nodes.end(), [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
  return topo;
}

std::vector<int> allowed_cpus() { return this_thread_cpus(); }

}  // namespace db::dist
