#pragma once
// `berth explain NAMESPACE/POD`: why one pod of the live cluster is pending, or where it would go.

#include <string>
#include <vector>

namespace berth::cmd {

int explainCommand(const std::vector<std::string>& args);

}  // namespace berth::cmd
