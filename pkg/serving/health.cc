#include "pkg/serving/health.h"

#include "pkg/log/log.h"

namespace berth::serving {
namespace {

constexpr const char* kText = "text/plain; charset=utf-8";

// Splits "/healthz/ping?verbose" into path and query.
std::pair<std::string_view, std::string_view> splitTarget(std::string_view target) {
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return {target, {}};
  return {target.substr(0, q), target.substr(q + 1)};
}

bool hasParam(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view param = query.substr(0, amp);
    if (param.substr(0, param.find('=')) == name) return true;
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return false;
}

}  // namespace

Check pingCheck() {
  return Check{"ping", [] { return util::Result<void>(); }};
}

std::optional<Response> healthResponse(std::string_view endpoint, std::string_view target,
                                       const std::vector<Check>& checks) {
  const auto [path, query] = splitTarget(target);
  const std::string root = "/" + std::string(endpoint);
  if (path == root || path == root + "/") {
    std::string lines;
    std::string failed;
    for (const Check& check : checks) {
      auto result = check.run();
      if (result.ok()) {
        lines += "[+]" + check.name + " ok\n";
        continue;
      }
      lines += "[-]" + check.name + " failed: reason withheld\n";
      failed += (failed.empty() ? "" : ",") + check.name;
      log::info(2, "Health check failed",
                {{"endpoint", std::string(endpoint)},
                 {"check", check.name},
                 {"err", result.error().message}});
    }
    if (!failed.empty()) {
      return Response{500, kText, lines + std::string(endpoint) + " check failed\n"};
    }
    if (!hasParam(query, "verbose")) return Response{200, kText, "ok"};
    return Response{200, kText, lines + std::string(endpoint) + " check passed\n"};
  }
  if (!path.starts_with(root + "/")) return std::nullopt;
  const std::string_view name = path.substr(root.size() + 1);
  for (const Check& check : checks) {
    if (check.name != name) continue;
    auto result = check.run();
    if (result.ok()) return Response{200, kText, "ok"};
    return Response{500, kText, "internal server error: " + result.error().message + "\n"};
  }
  return Response{404, kText, "404 page not found\n"};
}

}  // namespace berth::serving
