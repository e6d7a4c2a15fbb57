#include "pkg/framework/status.h"

namespace berth::framework {

std::string_view codeName(Code code) {
  switch (code) {
    case Code::Success:
      return "Success";
    case Code::Error:
      return "Error";
    case Code::Unschedulable:
      return "Unschedulable";
    case Code::UnschedulableAndUnresolvable:
      return "UnschedulableAndUnresolvable";
    case Code::Skip:
      return "Skip";
  }
  return "Unknown";
}

void Status::addReason(std::string_view staticReason) {
  if (pieces_[0].empty() && reasons_.empty()) {
    pieces_[0] = staticReason;
  } else {
    reasons_.emplace_back(staticReason);
  }
}

std::vector<std::string> Status::reasons() const {
  std::vector<std::string> out;
  forEachReason([&](std::string_view r) { out.emplace_back(r); });
  return out;
}

std::string Status::message() const {
  std::string out;
  forEachReason([&](std::string_view r) {
    if (!out.empty()) out += ", ";
    out += r;
  });
  return out;
}

}  // namespace berth::framework
