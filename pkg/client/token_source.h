#pragma once
// The bearer token to send, re-read from its file when the file changes. Bound service-account
// tokens are rotated by the kubelet (about hourly, by swapping a symlink), so a long-running
// client must pick up the new token; client-go re-reads the file periodically. Here the file's
// identity (inode, size, mtime) is checked at most every `checkInterval`, and the token is re-read
// when it changed or when the server answered 401 (invalidate()). A failed or empty read keeps the
// previous token and is logged: the old token usually stays valid for a while. So does a file
// larger than kMaxTokenFileBytes, which is never read whole; a file that group or others may
// write is used but warned about, since whoever can write it chooses berth's identity.

#include <sys/types.h>

#include <mutex>
#include <string>

#include "pkg/client/backoff.h"

namespace berth::client {

// The largest token file read. Service-account tokens (JWTs) are about 1 KiB and OIDC ID tokens a
// few KiB; anything near this is not a token, and reading it whole could exhaust memory.
inline constexpr size_t kMaxTokenFileBytes = 64 * 1024;

class TokenSource {
 public:
  // `token` is the token already read (may be empty); `file` may be empty for a fixed token. The
  // interval is measured on `clock`, which must outlive the source.
  TokenSource(std::string token, std::string file, Duration checkInterval = std::chrono::seconds(5),
              util::Clock& clock = util::realClock());

  // The current token; may stat and re-read the file.
  std::string token();
  // Forces a check of the file on the next token() call.
  void invalidate();

 private:
  struct FileId {
    ino_t inode = 0;
    off_t size = -1;
    int64_t mtimeNs = 0;
    bool operator==(const FileId&) const = default;
  };

  std::mutex mu_;
  std::string token_;
  const std::string file_;
  const Duration check_interval_;
  util::Clock& clock_;
  TimePoint next_check_;
  FileId seen_;
  bool force_check_ = false;
};

}  // namespace berth::client
