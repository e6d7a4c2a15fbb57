#pragma once
// `berth apiserver`: the embedded API server as a process, for demos, kubectl and benchmarks.

#include <string>
#include <vector>

namespace berth::cmd {

int apiserverCommand(const std::vector<std::string>& args);

}  // namespace berth::cmd
