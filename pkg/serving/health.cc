#include "pkg/serving/health.h"

#include <algorithm>

#include "pkg/log/log.h"
#include "pkg/util/quote.h"

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

// Every value of `name` in the query, in order ("exclude=a&exclude=b").
std::vector<std::string> paramValues(std::string_view query, std::string_view name) {
  std::vector<std::string> out;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view param = query.substr(0, amp);
    const size_t eq = param.find('=');
    if (param.substr(0, eq) == name && eq != std::string_view::npos) {
      out.emplace_back(param.substr(eq + 1));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return out;
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
    std::vector<std::string> excluded = paramValues(query, "exclude");
    for (const Check& check : checks) {
      if (auto it = std::find(excluded.begin(), excluded.end(), check.name); it != excluded.end()) {
        std::erase(excluded, check.name);
        lines += "[+]" + check.name + " excluded: ok\n";
        continue;
      }
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
    if (!excluded.empty()) {
      std::sort(excluded.begin(), excluded.end());
      std::string names;
      for (const std::string& name : excluded) {
        names += (names.empty() ? "" : ",") + util::quoteGo(name);
      }
      lines += "warn: some health checks cannot be excluded: no matches for " + names + "\n";
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
