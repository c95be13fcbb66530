// Parallel layout arithmetic (see layout.hpp).
#include "dist/layout.hpp"

#include <fmt/format.h>

#include "util/error.hpp"

namespace trex::dist {

std::string Layout::str() const { return fmt::format("dp{} ep{} pp{}", dp, ep, pp); }

void validate_layout(const Layout& l, int world_size) {
  if (l.dp < 1 || l.ep < 1 || l.pp < 1)
    throw Error(fmt::format("--dp/--ep/--pp must be >= 1 (got {})", l.str()));
  if (l.world() != world_size)
    throw Error(fmt::format("layout {} needs {} ranks but the job has {} (mpirun -np {})", l.str(), l.world(),
                            world_size, l.world()));
}

RankCoords coords_of(const Layout& l, int rank) {
  RankCoords c;
  c.ep = rank % l.ep;
  c.dp = (rank / l.ep) % l.dp;
  c.pp = rank / (l.ep * l.dp);
  return c;
}

int rank_of(const Layout& l, const RankCoords& c) { return (c.pp * l.dp + c.dp) * l.ep + c.ep; }

}  // namespace trex::dist
