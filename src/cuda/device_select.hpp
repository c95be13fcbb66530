// `--device cpu|cuda` of the trex subcommands: the choice, and the check a command makes before it starts.
// CUDA asked for and absent is an error naming the reason (device.hpp); CUDA present but not supported by the
// command yet is an error too (docs/cuda.md: `trex train` runs on the GPU model; generate, serve and run do not
// yet). There is never a silent fallback to the CPU.
#pragma once
#include <string>
#include <vector>

namespace trex::cuda {

enum class Device { cpu, cuda };

// The accepted spellings, for CLI11's IsMember check.
const std::vector<std::string>& device_names();
// "cpu" / "cuda"; anything else throws trex::Error.
Device parse_device(const std::string& name);
const char* device_name(Device d);

// Throws trex::Error unless `command` (e.g. "trex train") can run on `d` here: cpu always can; cuda needs a
// device (else "CUDA asked for but <reason>") and a command that runs on it (runs_on_cuda; else "not implemented
// yet for this command").
void require_device(Device d, const std::string& command, bool runs_on_cuda = false);

}  // namespace trex::cuda
