// sorted_unique: a list's distinct values in ascending order. Search spaces read from a command line may repeat
// a value; the planner and the tuner enumerate each value once.
#pragma once
#include <algorithm>
#include <vector>

namespace trex {

template <class T>
std::vector<T> sorted_unique(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace trex
