#pragma once
// Writing a file that holds a secret (a kubeconfig with a token): private from its first byte.

#include <string>

#include "pkg/util/result.h"

namespace berth::util {

// Writes `content` to `path` as a new file of mode 0600 owned by this process's user: a temporary
// file in the same directory, created with O_EXCL|O_NOFOLLOW (never a planted file or symlink),
// renamed over `path` once complete. A symlink or another user's file at `path` is replaced, never
// written through; readers see the old file or the whole new one.
Result<void> writePrivateFile(const std::string& path, const std::string& content);

}  // namespace berth::util
