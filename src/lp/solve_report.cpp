// solve_report_json (see solve_report.hpp).
#include "lp/solve_report.hpp"

namespace trex::lp {

nlohmann::ordered_json solve_report_json(const std::string& file, const Model& model, Backend backend,
                                         const SolveResult& r, double read_seconds, bool with_values) {
  using OJson = nlohmann::ordered_json;
  const bool optimal = r.status == SolveStatus::Optimal;
  OJson j;
  j["file"] = file;
  j["solver"] = to_string(backend);
  j["status"] = to_string(r.status);
  j["objective"] = optimal ? OJson(r.objective) : OJson(nullptr);
  j["sense"] = to_string(model.objective.sense);
  j["vars"] = model.num_vars();
  j["rows"] = model.num_rows();
  j["nonzeros"] = model.num_nonzeros();
  j["integers"] = model.num_integer_vars();
  j["quadratic"] = model.has_quadratic();
  j["seconds"] = r.seconds;
  j["read_seconds"] = read_seconds;
  if (!r.message.empty()) j["message"] = r.message;
  if (with_values && optimal) {
    OJson x = OJson::object();
    for (int i = 0; i < model.num_vars(); ++i) x[model.vars[size_t(i)].name] = r.x[size_t(i)];
    j["values"] = std::move(x);
  }
  return j;
}

}  // namespace trex::lp
