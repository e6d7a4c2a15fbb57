#include "pkg/serving/zpages.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <random>

namespace berth::serving {
namespace {

constexpr std::string_view kPlainText = "text/plain; charset=utf-8";
constexpr std::string_view kWarning =
    "Warning: This endpoint is not meant to be machine parseable, has no formatting "
    "compatibility guarantees and is for debugging purposes only.\n";

std::string_view trimSpace(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// One media range of an Accept header, as goautoneg.ParseAccept reads it.
bool acceptsEntry(std::string_view entry) {
  std::string_view range = entry.substr(0, entry.find(';'));
  const size_t slash = range.find('/');
  std::string_view type = trimSpace(range.substr(0, slash));
  std::string_view subtype;
  if (slash == std::string_view::npos) {
    if (type != "*") return false;  // goautoneg skips a range without a subtype
    subtype = "*";
  } else {
    subtype = trimSpace(range.substr(slash + 1));
    if (subtype.find('/') != std::string_view::npos) return false;
  }
  if ((type != "text" && type != "*") || (subtype != "plain" && subtype != "*")) return false;
  int params = 0;
  bool charsetUtf8 = false;
  std::string_view rest = entry.substr(std::min(entry.size(), range.size()));
  while (!rest.empty()) {
    rest.remove_prefix(1);  // the ';'
    const size_t end = rest.find(';');
    const std::string_view param = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    const size_t eq = param.find('=');
    if (eq == std::string_view::npos) continue;  // goautoneg ignores a parameter without "="
    const std::string_view key = trimSpace(param.substr(0, eq));
    if (key == "q") continue;
    ++params;
    charsetUtf8 = key == "charset" && equalsIgnoringCase(trimSpace(param.substr(eq + 1)), "utf-8");
  }
  return params == 0 || (params == 1 && charsetUtf8);
}

std::string header(std::string_view component, std::string_view page) {
  return "\n" + std::string(component) + " " + std::string(page) + "\n" + std::string(kWarning);
}

std::string uptime(std::chrono::system_clock::duration up) {
  const auto seconds =
      std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::seconds>(up).count());
  std::array<char, 64> out{};
  std::snprintf(out.data(), out.size(), "%lld hr %02lld min %02lld sec",
                static_cast<long long>(seconds / 3600), static_cast<long long>(seconds / 60 % 60),
                static_cast<long long>(seconds % 60));
  return out.data();
}

// Go's time.UnixDate layout ("Mon Jan _2 15:04:05 MST 2006") in UTC.
std::string unixDate(std::chrono::system_clock::time_point t) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  std::array<char, 64> out{};
  std::strftime(out.data(), out.size(), "%a %b %e %H:%M:%S UTC %Y", &utc);
  return out.data();
}

}  // namespace

bool acceptsPlainText(std::string_view accept) {
  while (true) {
    const size_t comma = accept.find(',');
    if (acceptsEntry(trimSpace(accept.substr(0, comma)))) return true;
    if (comma == std::string_view::npos) return false;
    accept.remove_prefix(comma + 1);
  }
}

Response notAcceptable() {
  return Response{406, std::string(kPlainText), "media type not acceptable, must be: text/plain\n"};
}

std::string_view zpageDelimiter() {
  static constexpr std::array<std::string_view, 4> kDelimiters{":", ": ", "=", " "};
  static const std::string_view chosen = [] {
    std::random_device seed;
    return kDelimiters[std::uniform_int_distribution<size_t>(0, kDelimiters.size() - 1)(seed)];
  }();
  return chosen;
}

Response configzResponse(std::string_view name, std::string_view configJson) {
  // Names are ours ("componentconfig"), never user input: no escaping needed.
  return Response{200, "application/json",
                  "{\"" + std::string(name) + "\":" + std::string(configJson) + "}"};
}

Response flagzResponse(std::string_view component, const std::map<std::string, std::string>& flags,
                       std::string_view delimiter) {
  std::string body = header(component, "flags") + "\n";
  for (const auto& [name, value] : flags) {
    body += name;
    body += delimiter;
    body += value;
    body += '\n';
  }
  return Response{200, std::string(kPlainText), std::move(body)};
}

Response statuszResponse(std::string_view component, const StatuszInfo& info,
                         std::string_view delimiter) {
  const std::string d(delimiter);
  std::string paths;
  for (const std::string& path : info.paths) paths += " " + path;
  std::string body = header(component, "statusz");
  body += "\nStarted" + d + " " + unixDate(info.started) + "\n";
  body += "Up" + d + " " + uptime(info.now - info.started) + "\n";
  body += "Compiler" + d + " " + info.compiler + "\n";
  body += "Binary version" + d + " " + info.binaryVersion + "\n";
  body += "Paths" + d + paths + "\n";
  return Response{200, std::string(kPlainText), std::move(body)};
}

}  // namespace berth::serving
