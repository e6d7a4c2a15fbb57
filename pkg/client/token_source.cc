#include "pkg/client/token_source.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "pkg/log/log.h"

namespace berth::client {
namespace {

std::string trimSpace(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    return {};
  }
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

}  // namespace

TokenSource::TokenSource(std::string token, std::string file, Duration checkInterval,
                         SteadyClock clock)
    : token_(std::move(token)),
      file_(std::move(file)),
      checkInterval_(checkInterval),
      clock_(std::move(clock)),
      nextCheck_(clock_() + checkInterval_) {
  if (!file_.empty()) {
    struct stat st {};
    if (::stat(file_.c_str(), &st) == 0) {
      seen_ = {st.st_ino, st.st_size, st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec};
    }
    if (token_.empty()) {
      forceCheck_ = true;
    }
  }
}

std::string TokenSource::token() {
  std::lock_guard<std::mutex> lock(mu_);
  if (file_.empty()) {
    return token_;
  }
  const TimePoint now = clock_();
  if (!forceCheck_ && now < nextCheck_) {
    return token_;
  }
  nextCheck_ = now + checkInterval_;
  struct stat st {};
  if (::stat(file_.c_str(), &st) != 0) {
    log::warning("Cannot stat the token file, keeping the current token",
                 {{"file", file_}, {"err", std::strerror(errno)}});
    return token_;
  }
  const FileId id{st.st_ino, st.st_size, st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec};
  if (id == seen_ && !forceCheck_) {
    return token_;
  }
  forceCheck_ = false;
  std::ifstream in(file_, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  const std::string token = trimSpace(content.str());
  if (!in || token.empty()) {
    log::warning("Read an empty or unreadable token file, keeping the current token",
                 {{"file", file_}});
    return token_;
  }
  seen_ = id;
  if (token != token_) {
    log::info(2, "Reloaded the bearer token", {{"file", file_}});
    token_ = token;
  }
  return token_;
}

void TokenSource::invalidate() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!file_.empty()) {
    forceCheck_ = true;
  }
}

}  // namespace berth::client
