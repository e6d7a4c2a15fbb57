#include "pkg/client/line_framer.h"

namespace berth::client {

ApiResult<std::optional<std::string_view>> LineFramer::next() {
  while (true) {
    const size_t newline = pending_.find('\n', pos_);
    if (newline == std::string::npos) {
      break;
    }
    const std::string_view line(pending_.data() + pos_, newline - pos_);
    pos_ = newline + 1;
    if (line.size() > max_line_bytes_) {
      return tooLong();
    }
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
      return std::optional<std::string_view>(line);
    }
  }
  pending_.erase(0, pos_);
  pos_ = 0;
  if (pending_.size() > max_line_bytes_) {
    return tooLong();
  }
  return std::optional<std::string_view>();
}

ApiResult<void> LineFramer::finish() const {
  if (pending_.find_first_not_of(" \t\r\n", pos_) != std::string::npos) {
    return badResponse("watch stream ended inside an event");
  }
  return {};
}

ApiFailure LineFramer::tooLong() const {
  return badResponse("watch event longer than " + std::to_string(max_line_bytes_) + " bytes");
}

}  // namespace berth::client
