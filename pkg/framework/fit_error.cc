#include "pkg/framework/fit_error.h"

#include <algorithm>
#include <map>

namespace berth::framework {

std::string FitError::message() const {
  std::string out = "0/" + std::to_string(numAllNodes) + " nodes are available:";
  if (!diagnosis.preFilterMsg.empty()) {
    out += " " + diagnosis.preFilterMsg + ".";
  } else {
    std::map<std::string, int, std::less<>> counts;
    auto count = [&](std::string_view reason, int n) {
      auto it = counts.find(reason);
      if (it == counts.end()) it = counts.emplace(std::string(reason), 0).first;
      it->second += n;
    };
    for (const auto& [node, status] : diagnosis.nodeToStatus) {
      status.forEachReason([&](std::string_view r) { count(r, 1); });
    }
    int absent = numAllNodes - static_cast<int>(diagnosis.nodeToStatus.size());
    if (diagnosis.absentNodesStatus && absent > 0) {
      diagnosis.absentNodesStatus->forEachReason([&](std::string_view r) { count(r, absent); });
    }
    std::vector<std::string> parts;
    parts.reserve(counts.size());
    for (const auto& [reason, n] : counts) parts.push_back(std::to_string(n) + " " + reason);
    // Upstream sorts the whole "count reason" strings, so "10 …" sorts before "2 …".
    std::sort(parts.begin(), parts.end());
    std::string joined;
    for (const auto& p : parts) {
      if (!joined.empty()) joined += ", ";
      joined += p;
    }
    if (!joined.empty()) out += " " + joined + ".";
  }
  if (!diagnosis.postFilterMsg.empty()) out += " " + diagnosis.postFilterMsg;
  return out;
}

}  // namespace berth::framework
