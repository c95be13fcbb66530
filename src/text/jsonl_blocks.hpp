// Parallel JSONL mapping shared by the BPE trainer and the packer: the file is read in blocks, every record
// of a block is mapped by fn(record, where) on worker threads, and the block's results reach sink in file
// order. The error of the earliest failing line wins.
#pragma once
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "util/error.hpp"
#include "util/jsonl.hpp"

namespace trex::text {

inline int thread_count(int requested) {
  if (requested > 0) return requested;
  unsigned h = std::thread::hardware_concurrency();
  return h == 0 ? 1 : int(h);
}

// sink(std::vector<R>& results) is called once per block.
template <typename R, typename Fn, typename BlockSink>
void map_jsonl_blocks(const std::filesystem::path& path, int threads, size_t block_bytes, Fn&& fn, BlockSink&& sink) {

  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(SourceLocation{path.string()}, "cannot open file");
  std::vector<std::string> lines;
  std::vector<long> numbers;
  long line_no = 0;
  bool eof = false;
  while (!eof) {
    lines.clear();
    numbers.clear();
    size_t bytes = 0;
    std::string s;
    while (bytes < block_bytes) {
      if (!std::getline(in, s)) {
        eof = true;
        break;
      }
      ++line_no;
      if (!s.empty() && s.back() == '\r') s.pop_back();
      if (s.find_first_not_of(" \t") == std::string::npos) continue;
      bytes += s.size();
      lines.push_back(std::move(s));
      numbers.push_back(line_no);
    }
    if (in.bad()) throw Error(SourceLocation{path.string(), line_no, 0}, "read failed");
    std::vector<R> results(lines.size());
    const int nt = std::min<int>(thread_count(threads), std::max<int>(1, int(lines.size())));
    std::mutex mu;
    long err_line = -1;
    std::string err;
    auto work = [&](int t) {
      size_t lo = lines.size() * size_t(t) / size_t(nt), hi = lines.size() * size_t(t + 1) / size_t(nt);
      for (size_t i = lo; i < hi; ++i) {
        SourceLocation where{path.string(), numbers[i], 0};
        try {
          results[i] = fn(parse_json_text(lines[i], where), where);
        } catch (const Error& e) {
          std::lock_guard<std::mutex> lock(mu);
          if (err_line < 0 || numbers[i] < err_line) {
            err_line = numbers[i];
            err = e.where().line > 0 ? std::string(e.what()) : where.str() + ": " + e.message();
          }
          return;
        }
      }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < nt; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& th : pool) th.join();
    if (err_line >= 0) throw Error(err);
    sink(results);
  }
}

}  // namespace trex::text
