// Solve sweep benchmark: every B4O-Feasible reference LP read with our reader and solved with CBC
// (CLP for LPs) and GLPK; prints per-file times, per-backend totals and how many matched `answer`. The quadratic
// ones (not CBC's nor GLPK's: Ipopt + spatial branch and bound) are solved once and totalled apart.
// Usage: bench_solve_sweep [BENCHMARKS_DIR] [--list FILE]  (--list writes the non-quadratic LP paths,
// one per line, for the peer run in solve_sweep.bench.sh).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "lp/lp_format.hpp"
#include "lp/solver.hpp"
#include "util/error.hpp"
#include "util/jsonl.hpp"
#include "util/timer.hpp"

int main(int argc, char** argv) {
  std::string bench = std::getenv("TREX_BENCHMARKS") ? std::getenv("TREX_BENCHMARKS") : "";
  std::string list_out;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--list" && i + 1 < argc) list_out = argv[++i];
    else bench = a;
  }
  if (bench.empty()) {
    std::fprintf(stderr, "usage: bench_solve_sweep BENCHMARKS_DIR [--list FILE] (or set TREX_BENCHMARKS)\n");
    return 2;
  }
  try {
    trex::JsonlReader reader(bench + "/bench4opt_feasible.jsonl");
    std::ofstream list;
    if (!list_out.empty()) list.open(list_out);
    const trex::lp::Backend backends[] = {trex::lp::Backend::Cbc, trex::lp::Backend::Glpk};
    double total[2] = {0, 0}, slowest[2] = {0, 0};
    int matched[2] = {0, 0}, unsupported[2] = {0, 0}, files = 0, quad_files = 0, quad_matched = 0;
    double quad_total = 0.0;
    std::string slowest_id[2];
    trex::lp::SolveOptions options;
    options.time_limit = 120;
    std::printf("%-16s %6s %6s %5s  %10s %10s  %s\n", "id", "vars", "rows", "ints", "cbc_s", "glpk_s", "status cbc/glpk");
    while (auto rec = reader.next()) {
      const std::string id = rec->at("id").get<std::string>(), file = bench + "/" + rec->at("lp_file").get<std::string>();
      const double answer = rec->at("answer").get<double>();
      const trex::lp::Model model = trex::lp::read_lp_file(file);
      if (list.is_open() && !model.has_quadratic()) list << file << "\n";
      if (model.has_quadratic()) {  // not CBC's nor GLPK's: Ipopt + spatial branch and bound, timed on their own
        trex::Timer t;
        const trex::lp::SolveResult r = trex::lp::solve(model, trex::lp::Backend::Cbc, options);
        const double s = t.seconds();
        const bool ok = r.status == trex::lp::SolveStatus::Optimal &&
                        std::abs(r.objective - answer) <= 1e-6 * std::max(1.0, std::abs(answer));
        quad_total += s;
        quad_matched += ok;
        ++quad_files;
        std::printf("%-16s %6d %6d %5d  %10.4f %10s  %s (%s)\n", id.c_str(), model.num_vars(), model.num_rows(),
                    model.num_integer_vars(), s, "-", ok ? "ok" : trex::lp::to_string(r.status), r.solver.c_str());
        continue;
      }
      ++files;
      double secs[2];
      std::string status[2];
      for (int b = 0; b < 2; ++b) {
        trex::Timer t;
        const trex::lp::SolveResult r = trex::lp::solve(model, backends[b], options);
        secs[b] = t.seconds();
        total[b] += secs[b];
        if (secs[b] > slowest[b]) slowest[b] = secs[b], slowest_id[b] = id;
        const bool ok = r.status == trex::lp::SolveStatus::Optimal &&
                        std::abs(r.objective - answer) <= 1e-6 * std::max(1.0, std::abs(answer));
        matched[b] += ok;
        unsupported[b] += r.status == trex::lp::SolveStatus::Unsupported;
        status[b] = ok ? "ok" : trex::lp::to_string(r.status);
      }
      std::printf("%-16s %6d %6d %5d  %10.4f %10.4f  %s/%s\n", id.c_str(), model.num_vars(), model.num_rows(),
                  model.num_integer_vars(), secs[0], secs[1], status[0].c_str(), status[1].c_str());
    }
    for (int b = 0; b < 2; ++b)
      std::printf("TOTAL %-4s %3d files: %.3f s, %d match the answer, %d unsupported, slowest %s %.3f s\n",
                  trex::lp::to_string(backends[b]), files, total[b], matched[b], unsupported[b], slowest_id[b].c_str(),
                  slowest[b]);
    std::printf("QUADRATIC %d files (Ipopt / Bonmin + spatial branch and bound): %.3f s, %d match the answer within "
                "1e-6 relative\n", quad_files, quad_total, quad_matched);
    return 0;
  } catch (const trex::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
