// The parallel layout DP x EP x PP of a job and this rank's place in it. Ranks are numbered
// rank = (pp_index * dp + dp_index) * ep + ep_index (expert groups innermost: their all-to-all is the most
// frequent exchange). The world size must equal dp * ep * pp.
#pragma once
#include <string>

namespace trex::dist {

struct Layout {
  int dp = 1, ep = 1, pp = 1;
  int world() const { return dp * ep * pp; }
  std::string str() const;  // "dp2 ep1 pp1"
};

struct RankCoords {
  int dp = 0, ep = 0, pp = 0;
};

// Throws trex::Error with a clear message when a factor is < 1 or the product differs from world_size.
void validate_layout(const Layout& l, int world_size);
RankCoords coords_of(const Layout& l, int rank);
int rank_of(const Layout& l, const RankCoords& c);

}  // namespace trex::dist
