#pragma once
// LineFramer: splits a watch response body, which arrives in blocks of any size, into the
// newline-terminated lines kube-apiserver writes one event per. Blank lines (spaces, tabs, CRs)
// are skipped. A line longer than the limit fails the stream as a BadResponse: the buffer is
// checked before more is read, so a server that never sends a newline cannot grow it without
// bound. Kept apart from the transport so that it can be tested and fuzzed on its own.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/client/failure.h"

namespace berth::client {

class LineFramer {
 public:
  explicit LineFramer(size_t maxLineBytes) : max_line_bytes_(maxLineBytes) {}

  // Appends bytes read from the body.
  void append(std::string_view bytes) { pending_.append(bytes); }

  // The next non-blank line without its newline, or nullopt when more bytes are needed. Fails
  // when a complete line, or the unterminated rest of the buffer, is longer than the limit. The
  // view is valid until the next call of next() or append().
  ApiResult<std::optional<std::string_view>> next();

  // Called at the end of the body: fails when it ended inside a line (the server was cut off).
  ApiResult<void> finish() const;

  // Bytes appended and not yet returned as lines.
  size_t bufferedBytes() const { return pending_.size() - pos_; }

 private:
  ApiFailure tooLong() const;

  const size_t max_line_bytes_;
  std::string pending_;
  size_t pos_ = 0;  // start of the first line not yet returned
};

}  // namespace berth::client
