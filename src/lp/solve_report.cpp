// solve_report_json and the solve channel's request/reply (see solve_report.hpp).
#include "lp/solve_report.hpp"

#include <algorithm>
#include <chrono>
#include <exception>

#include "lp/lp_format.hpp"

namespace trex::lp {

nlohmann::ordered_json solve_report_json(const std::string& file, const Model& model, Backend backend,
                                         const SolveResult& r, double read_seconds, bool with_values) {
  using OJson = nlohmann::ordered_json;
  const bool solved = has_solution(r);  // optimal, or a nonconvex model's local optimum
  OJson j;
  j["file"] = file;
  j["solver"] = r.solver.empty() ? to_string(backend) : r.solver;
  j["status"] = to_string(r.status);
  j["objective"] = solved ? OJson(r.objective) : OJson(nullptr);
  if (solved) j["optimality"] = r.status == SolveStatus::Optimal ? "proven" : "local";
  j["sense"] = to_string(model.objective.sense);
  j["vars"] = model.num_vars();
  j["rows"] = model.num_rows();
  j["nonzeros"] = model.num_nonzeros();
  j["integers"] = model.num_integer_vars();
  j["quadratic"] = model.has_quadratic();
  if (r.quadratic) {
    j["convex"] = r.convex;
    if (!r.convexity.empty()) j["convexity"] = r.convexity;
    if (!r.proof.empty()) j["proof"] = r.proof;
  }
  j["seconds"] = r.seconds;
  j["read_seconds"] = read_seconds;
  if (!r.message.empty()) j["message"] = r.message;
  if (!r.checks.empty()) {  // the re-solves that confirmed (or overruled) an infeasible / unbounded verdict
    OJson checks = OJson::array();
    for (const auto& c : r.checks) checks.push_back({{"solver", c.solver}, {"status", to_string(c.status)}});
    j["verdict_checks"] = std::move(checks);
    j["overruled"] = r.overruled;
  }
  if (with_values && solved) {
    OJson x = OJson::object();
    for (int i = 0; i < model.num_vars(); ++i) x[model.vars[size_t(i)].name] = r.x[size_t(i)];
    j["values"] = std::move(x);
  }
  return j;
}

std::string solve_error_reply(const std::string& message) {
  nlohmann::ordered_json j;
  j["status"] = "error";
  j["message"] = message;
  return j.dump();
}

std::variant<SolveRequest, std::string> read_solve_request(const std::string& request_json) {
  std::string text;
  SolveRequest req;
  try {
    const auto j = nlohmann::json::parse(request_json);
    text = j.at("lp").get<std::string>();
    req.time_limit = j.value("time_limit", 0.0);
  } catch (const std::exception& e) {
    return solve_error_reply(std::string("bad solve request: ") + e.what());
  }
  const auto t0 = std::chrono::steady_clock::now();
  try {
    req.model = read_lp_string(text, "model.lp");
  } catch (const std::exception& e) {
    return solve_error_reply(e.what());
  }
  req.read_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return req;
}

std::string solve_request_reply(const SolveRequest& req, double wall_left_s, SolveStatus* status) {
  SolveOptions options;
  const double left = std::max(0.001, wall_left_s);
  options.time_limit = req.time_limit > 0.0 ? std::min(req.time_limit, left) : left;
  SolveResult r;
  try {
    r = solve(req.model, Backend::Cbc, options);
  } catch (const std::exception& e) {
    if (status) *status = SolveStatus::Error;
    return solve_error_reply(e.what());
  }
  if (status) *status = r.status;
  // exactly what `trex solve FILE --json --values [--time-limit S]` prints (src/cli/cmd_solve.cpp)
  return solve_report_json("model.lp", req.model, Backend::Cbc, r, req.read_seconds, true).dump();
}

}  // namespace trex::lp
