// Equivalence sweep benchmark: reads the 394 B40 ORGEval reference LPs and checks each against
// itself with the ORGEval structural check, printing per-file and total times (reading and checking
// separately; best of 3 passes per file), then the same sweep on 2 threads. No peer: upstream's check needs gurobipy.
// Usage: bench_equiv_sweep [BENCHMARKS_DIR] (default $TREX_BENCHMARKS).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>
#include <vector>

#include "lp/equivalence.hpp"
#include "lp/lp_format.hpp"
#include "util/error.hpp"
#include "util/jsonl.hpp"
#include "util/timer.hpp"

namespace {

struct Item {
  std::string id;
  std::filesystem::path path;
  trex::lp::Model model;
  double read_ms = 0, check_ms = 0;
  trex::lp::EquivalenceResult result;
};

}  // namespace

int main(int argc, char** argv) {
  try {
    const char* env = std::getenv("TREX_BENCHMARKS");
    const std::filesystem::path dir = argc > 1 ? argv[1] : env ? env : "../shared/benchmarks";
    std::vector<Item> items;
    trex::JsonlReader reader(dir / "bench4opt_orgeval.jsonl");
    while (auto rec = reader.next())
      items.push_back({trex::require_string(*rec, "id", reader.where()),
                       dir / trex::require_string(*rec, "lp_file", reader.where()), {}, 0, 0, {}});

    // Sequential passes (3, the machine is shared): read, then self-check, timed per file; per-file
    // figures are the best of the passes, totals are given for the best and the worst pass.
    constexpr int kPasses = 3;
    double read_best = 1e30, read_worst = 0, check_best = 1e30, check_worst = 0;
    for (int pass = 0; pass < kPasses; ++pass) {
      double read_total = 0, check_total = 0;
      for (Item& it : items) {
        trex::Timer t;
        it.model = trex::lp::read_lp_file(it.path);
        const double read_ms = t.millis();
        t.reset();
        it.result = trex::lp::check_equivalence(it.model, it.model);
        const double check_ms = t.millis();
        it.read_ms = pass == 0 ? read_ms : std::min(it.read_ms, read_ms);
        it.check_ms = pass == 0 ? check_ms : std::min(it.check_ms, check_ms);
        read_total += read_ms;
        check_total += check_ms;
      }
      read_best = std::min(read_best, read_total), read_worst = std::max(read_worst, read_total);
      check_best = std::min(check_best, check_total), check_worst = std::max(check_worst, check_total);
    }
    std::map<std::string, int> verdicts;
    std::printf("%-14s %6s %6s %6s %9s %9s  %s\n", "id", "vars", "rows", "rounds", "read_ms", "check_ms", "verdict");
    for (const Item& it : items) {
      const std::string verdict = it.result.equivalent ? "equivalent" : "not equivalent (" + it.result.reason + ")";
      ++verdicts[verdict];
      std::printf("%-14s %6d %6d %6d %9.3f %9.3f  %s\n", it.id.c_str(), it.model.num_vars(), it.model.num_rows(),
                  it.result.wl_rounds_ref, it.read_ms, it.check_ms, verdict.c_str());
    }
    std::vector<const Item*> slowest;
    for (const Item& it : items) slowest.push_back(&it);
    std::sort(slowest.begin(), slowest.end(), [](auto* a, auto* b) { return a->check_ms > b->check_ms; });
    std::printf("\nslowest checks:");
    for (size_t i = 0; i < std::min<size_t>(5, slowest.size()); ++i)
      std::printf(" %s %.3f ms;", slowest[i]->id.c_str(), slowest[i]->check_ms);
    std::printf("\n");
    for (const auto& [v, n] : verdicts) std::printf("%4d %s\n", n, v.c_str());

    // Two threads: the same self-checks (models already read), and read + check together.
    auto parallel = [&](bool with_read) {
      std::atomic<size_t> next{0};
      trex::Timer t;
      auto work = [&] {
        for (size_t i; (i = next.fetch_add(1)) < items.size();) {
          if (with_read) {
            trex::lp::Model m = trex::lp::read_lp_file(items[i].path);
            (void)trex::lp::check_equivalence(m, m);
          } else {
            (void)trex::lp::check_equivalence(items[i].model, items[i].model);
          }
        }
      };
      std::thread a(work), b(work);
      a.join();
      b.join();
      return t.seconds();
    };
    const double par_check = parallel(false), par_both = parallel(true);

    std::printf("\n=== equivalence sweep: %zu self-checks (trex only; no peer: upstream ORGEval needs gurobipy)\n",
                items.size());
    std::printf("1 thread : check %.3f s (worst of %d passes %.3f s), read %.3f s (worst %.3f s)\n", check_best / 1e3,
                kPasses, check_worst / 1e3, read_best / 1e3, read_worst / 1e3);
    std::printf("2 threads: check %.3f s, read+check %.3f s (target: all checks < 1 s on 2 cores)\n", par_check,
                par_both);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
