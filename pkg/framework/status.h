#pragma once
// Status: the outcome of running a plugin, with upstream's codes. Expected rejections (a node that
// does not fit) are not errors: Unschedulable and UnschedulableAndUnresolvable carry human reasons
// that end up in the FitError message. The runtime, not the plugin, records which plugin produced a
// status.
//
// Filter runs once per node and most rejections repeat a constant sentence, so a Status built from
// a string literal (a std::string_view of static storage), or from pieces of one, allocates
// nothing.

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace berth::framework {

enum class Code {
  Success,
  Error,  // an internal failure; the pod goes to backoff and the message is logged
  // The pod does not fit; preemption might help. The pod waits for a relevant cluster event.
  Unschedulable,
  // The pod does not fit and preemption cannot help on this node (e.g. a node selector mismatch).
  UnschedulableAndUnresolvable,
  Skip,  // PreFilter/PreScore: this plugin has nothing to do for this pod; its Filter/Score are
         // skipped
};

std::string_view codeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // Success
  // `staticReason` must have static storage duration (a string literal).
  Status(Code code, std::string_view staticReason) : code_(code), pieces_{staticReason} {}
  Status(Code code, const char* staticReason) : code_(code), pieces_{staticReason} {}
  // One reason made of up to five pieces, joined only when read. The pieces must outlive the
  // status: string literals, or fields of objects in the snapshot the cycle runs on (a taint's key,
  // say).
  Status(Code code, std::array<std::string_view, 5> pieces) : code_(code), pieces_(pieces) {}
  Status(Code code, std::string reason) : code_(code) { reasons_.push_back(std::move(reason)); }
  Status(Code code, std::vector<std::string> reasons) : code_(code), reasons_(std::move(reasons)) {}

  static Status success() { return Status(); }
  static Status error(std::string message) { return Status(Code::Error, std::move(message)); }
  static Status skip() { return Status(Code::Skip, std::string_view()); }

  Code code() const { return code_; }
  bool isSuccess() const { return code_ == Code::Success; }
  bool isSkip() const { return code_ == Code::Skip; }
  bool isRejected() const {
    return code_ == Code::Unschedulable || code_ == Code::UnschedulableAndUnresolvable;
  }

  // Adds one more reason (e.g. several insufficient resources).
  void addReason(std::string_view staticReason);
  void addReason(std::string reason) { reasons_.push_back(std::move(reason)); }

  std::vector<std::string> reasons() const;
  // Calls fn(std::string_view) for each reason, without copying.
  template <typename Fn>
  void forEachReason(Fn&& fn) const {
    if (!pieces_[1].empty()) {
      std::string joined;
      for (auto p : pieces_) joined += p;
      fn(std::string_view(joined));
    } else if (!pieces_[0].empty()) {
      fn(pieces_[0]);
    }
    for (const auto& r : reasons_) fn(std::string_view(r));
  }
  // Reasons joined with ", " as upstream's Status.Message().
  std::string message() const;

  // The plugin that produced this status; plugin names are string literals.
  std::string_view plugin() const { return plugin_; }
  void setPlugin(std::string_view plugin) { plugin_ = plugin; }
  Status&& withPlugin(std::string_view plugin) && {
    plugin_ = plugin;
    return std::move(*this);
  }

 private:
  Code code_ = Code::Success;
  std::array<std::string_view, 5> pieces_{};  // [0] alone: a static reason
  std::vector<std::string> reasons_;
  std::string_view plugin_;
};

}  // namespace berth::framework
