// `--device` parsing and the per-command check (device_select.hpp).
#include "cuda/device_select.hpp"

#include "cuda/device.hpp"
#include "util/error.hpp"

namespace trex::cuda {

const std::vector<std::string>& device_names() {
  static const std::vector<std::string> names{"cpu", "cuda"};
  return names;
}

Device parse_device(const std::string& name) {
  if (name == "cpu") return Device::cpu;
  if (name == "cuda") return Device::cuda;
  throw Error("--device: '" + name + "' is not a device (cpu or cuda)");
}

const char* device_name(Device d) { return d == Device::cuda ? "cuda" : "cpu"; }

void require_device(Device d, const std::string& command, bool runs_on_cuda) {
  if (d == Device::cpu) return;
  const Availability& a = availability();
  if (!a.ok) throw Error(command + " --device cuda: CUDA asked for but " + a.reason);
  if (runs_on_cuda) return;
  throw Error(command + " --device cuda: a CUDA device is present (" + a.name + ") but this command does not run "
              "on CUDA yet: not implemented yet for this command (docs/cuda.md; use --device cpu)");
}

}  // namespace trex::cuda
