// `trex lp-equiv REF.lp GEN.lp [--json]`: ORGEval structural equivalence of two LP files
// (OR_BENCHMARKS.md §6; docs/lp-equiv.md). Exit 0 equivalent, 1 not equivalent, 2 bad input/error.
// As upstream: a read error on the generated file is a verdict (not equivalent, reason
// "read_error"); a read error on the reference is an error (exit 2).
#include <cstdio>
#include <memory>
#include <optional>

#include "cli/command.hpp"
#include "lp/equivalence.hpp"
#include "lp/lp_format.hpp"
#include "util/error.hpp"
#include "util/jsonl.hpp"
#include "util/timer.hpp"

namespace cmd_lp_equiv {  // this file's own names (the unity build joins cli files)

struct Opts {
  std::string reference, generated;
  bool json = false;
};

int run(const Opts& o) {
  trex::Timer timer;
  const trex::lp::Model reference = trex::lp::read_lp_file(o.reference);  // throws -> exit 2
  std::optional<trex::lp::Model> generated;
  std::string read_error;
  try {
    generated = trex::lp::read_lp_file(o.generated);
  } catch (const trex::Error& e) {
    read_error = e.what();
  }
  trex::lp::EquivalenceResult r;
  if (generated)
    r = trex::lp::check_equivalence(reference, *generated);  // throws on two empty models -> exit 2
  else
    r.reason = "read_error";
  const double seconds = timer.seconds();

  if (o.json) {
    nlohmann::ordered_json j;  // keys in this order: verdict first
    j["equivalent"] = r.equivalent;
    j["reason"] = r.reason;
    j["var_num_check"] = r.var_num_check;
    j["cons_num_check"] = r.cons_num_check;
    j["wl_check"] = r.wl_check;
    j["sufficient_check"] = r.sufficient_check;
    j["sufficient_msg"] = r.sufficient_msg;
    j["sufficiency_ref"] = r.sufficiency_ref;
    j["sufficiency_gen"] = r.sufficiency_gen;
    j["wl_rounds_ref"] = r.wl_rounds_ref;
    j["wl_rounds_gen"] = r.wl_rounds_gen;
    if (!read_error.empty()) j["error"] = read_error;
    j["seconds"] = seconds;
    std::printf("%s\n", j.dump().c_str());
  } else {
    if (r.equivalent)
      std::printf("equivalent (%s)\n", r.sufficient_msg.c_str());
    else
      std::printf("not equivalent: %s\n", r.reason.c_str());
    if (!read_error.empty()) std::printf("  %s\n", read_error.c_str());
    if (generated) {
      std::printf("  var_num_check %s, cons_num_check %s, wl_check %s, sufficient_check %s\n",
                  r.var_num_check ? "pass" : "fail", r.cons_num_check ? "pass" : (r.var_num_check ? "fail" : "-"),
                  r.wl_check ? "pass" : (r.cons_num_check ? "fail" : "-"),
                  r.sufficient_check ? "pass" : (r.wl_check ? "fail" : "-"));
      if (r.wl_check)
        std::printf("  sufficiency: reference %s, generated %s\n", r.sufficiency_ref.c_str(), r.sufficiency_gen.c_str());
    }
  }
  return r.equivalent ? 0 : 1;
}

trex::cli::CommandRegistrar reg(
    "lp-equiv", "ORGEval structural equivalence of two LP files (exit 0 equivalent, 1 not, 2 error)",
    [](CLI::App& sub) -> trex::cli::Action {
      auto o = std::make_shared<Opts>();
      sub.add_option("reference", o->reference, "Reference LP file (model 1)")->required()->check(CLI::ExistingFile);
      sub.add_option("generated", o->generated, "Generated LP file (model 2)")->required();
      sub.add_flag("--json", o->json, "Print one JSON object");
      return [o] { return run(*o); };
    });

}  // namespace cmd_lp_equiv
