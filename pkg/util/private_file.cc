#include "pkg/util/private_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>
#include <system_error>

namespace berth::util {
namespace {

std::string errnoText(std::string_view what, const std::string& path, int err) {
  return std::string(what) + " " + path + ": " + std::generic_category().message(err);
}

// The temporary file's name: hidden, next to the target, unguessable.
std::string temporaryName(const std::string& path) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(rng()));
  return dir + "." + base + ".tmp-" + suffix;
}

}  // namespace

Result<void> writePrivateFile(const std::string& path, const std::string& content) {
  if (path.empty() || path.back() == '/') {
    return invalidArgument("open " + path + ": not a file name");
  }
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    temp = temporaryName(path);
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) {
      return invalidArgument(errnoText("open", temp, errno));
    }
  }
  if (fd < 0) {
    return invalidArgument(errnoText("open", temp, EEXIST));
  }
  auto fail = [&](std::string_view what, int err) {
    ::close(fd);
    ::unlink(temp.c_str());
    return invalidArgument(errnoText(what, temp, err));
  };
  // The umask may only narrow 0600; make sure nothing widened it.
  if (::fchmod(fd, 0600) != 0) {
    return fail("chmod", errno);
  }
  for (size_t done = 0; done < content.size();) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return fail("write", n < 0 ? errno : EIO);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    return fail("sync", errno);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    return invalidArgument(errnoText("close", temp, err));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    return invalidArgument(errnoText("rename", path, err));
  }
  return {};
}

}  // namespace berth::util
