// The JSON record of one solve, as `trex solve --json` prints it and the eval harness's solve channel answers:
// file, solver, status, objective (null unless optimal), model size, times, message, and optionally the values.
// And the solve channel of the gurobipy-compatible layer (python/, `Model.optimize()`), shared by the eval fork
// server and synth's code check: a request {"lp": TEXT, "time_limit": S} read as model.lp, answered with that
// record (values included) or {"status": "error", "message": ...}.
#pragma once
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "lp/model.hpp"
#include "lp/solver.hpp"

namespace trex::lp {

nlohmann::ordered_json solve_report_json(const std::string& file, const Model& model, Backend backend,
                                         const SolveResult& r, double read_seconds, bool with_values);

// A solve-channel request, read.
struct SolveRequest {
  Model model;              // the request's LP text read as "model.lp"
  double time_limit = 0.0;  // asked by the program (0: none)
  double read_seconds = 0.0;
};
// The request, or the error reply to send back when it is not JSON, lacks "lp" or the LP does not read.
std::variant<SolveRequest, std::string> read_solve_request(const std::string& request_json);
std::string solve_error_reply(const std::string& message);
// Solves with CBC (one thread; quadratic models with Ipopt / Bonmin) within min(time_limit, wall_left_s): the
// reply text; `status` gets the outcome.
std::string solve_request_reply(const SolveRequest& req, double wall_left_s, SolveStatus* status = nullptr);

}  // namespace trex::lp
