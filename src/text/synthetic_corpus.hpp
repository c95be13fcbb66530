// A deterministic synthetic text corpus (same seed, same bytes) for benchmarks and tests: OR problem
// statements, LP files, Python/gurobipy code, numbers, Chinese/Japanese text, emoji and whitespace
// runs, with a Zipf-like word distribution over a generated lexicon.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace trex::text {

// Documents totalling at least `bytes` bytes of UTF-8.
std::vector<std::string> synthetic_corpus(uint64_t seed, size_t bytes);

}  // namespace trex::text
