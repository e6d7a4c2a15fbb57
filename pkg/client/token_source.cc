#include "pkg/client/token_source.h"

#include <sys/stat.h>

#include <cerrno>
#include <fstream>
#include <system_error>
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

int64_t mtimeNanos(const struct stat& st) {
  return st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

void warnIfWritableByOthers(const std::string& file, const struct stat& st) {
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    log::warning("The token file is writable by group or others", {{"file", file}});
  }
}

}  // namespace

TokenSource::TokenSource(std::string token, std::string file, Duration checkInterval,
                         util::Clock& clock)
    : token_(std::move(token)),
      file_(std::move(file)),
      check_interval_(checkInterval),
      clock_(clock),
      next_check_(clock_.monotonicNow() + check_interval_) {
  if (!file_.empty()) {
    struct stat st {};
    if (::stat(file_.c_str(), &st) == 0) {
      seen_ = {st.st_ino, st.st_size, mtimeNanos(st)};
      warnIfWritableByOthers(file_, st);
    }
    if (token_.empty()) {
      force_check_ = true;
    }
  }
}

std::string TokenSource::token() {
  std::lock_guard<std::mutex> lock(mu_);
  if (file_.empty()) {
    return token_;
  }
  const TimePoint now = clock_.monotonicNow();
  if (!force_check_ && now < next_check_) {
    return token_;
  }
  next_check_ = now + check_interval_;
  struct stat st {};
  if (::stat(file_.c_str(), &st) != 0) {
    log::warning("Cannot stat the token file, keeping the current token",
                 {{"file", file_}, {"err", std::generic_category().message(errno)}});
    return token_;
  }
  const FileId id{st.st_ino, st.st_size, mtimeNanos(st)};
  if (id == seen_ && !force_check_) {
    return token_;
  }
  force_check_ = false;
  // One byte more than the limit tells a file that grew after the stat from one that fits.
  std::string content(kMaxTokenFileBytes + 1, '\0');
  std::ifstream in(file_, std::ios::binary);
  if (static_cast<size_t>(st.st_size) <= kMaxTokenFileBytes) {
    in.read(content.data(), static_cast<std::streamsize>(content.size()));
  }
  const size_t bytes = static_cast<size_t>(in.gcount());
  if (static_cast<size_t>(st.st_size) > kMaxTokenFileBytes || bytes > kMaxTokenFileBytes) {
    seen_ = id;  // warned once per version of the file
    log::warning("The token file is too large, keeping the current token",
                 {{"file", file_}, {"limitBytes", kMaxTokenFileBytes}});
    return token_;
  }
  content.resize(bytes);
  const std::string token = trimSpace(content);
  if (!in.eof() || token.empty()) {
    log::warning("Read an empty or unreadable token file, keeping the current token",
                 {{"file", file_}});
    return token_;
  }
  seen_ = id;
  warnIfWritableByOthers(file_, st);
  if (token != token_) {
    log::info(2, "Reloaded the bearer token", {{"file", file_}});
    token_ = token;
  }
  return token_;
}

void TokenSource::invalidate() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!file_.empty()) {
    force_check_ = true;
  }
}

}  // namespace berth::client
