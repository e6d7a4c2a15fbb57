// Messages about configuration values; the rules themselves are pkg/labels'.

#include <cmath>
#include <vector>

#include "pkg/config/decoder.h"
#include "pkg/labels/validation.h"
#include "pkg/util/quote.h"

namespace berth::config {
namespace {

// berth's configuration errors name the field and the value; the rule's brief message follows.
std::optional<std::string> joinedProblems(bool ok, const std::vector<std::string>& problems) {
  if (ok) {
    return std::nullopt;
  }
  std::string out;
  for (const std::string& p : problems) {
    out += (out.empty() ? "" : "; ") + p;
  }
  return out;
}

}  // namespace

std::optional<std::string> qualifiedNameProblem(std::string_view name) {
  std::vector<std::string> problems;
  bool ok = labels::checkQualifiedName(name, &problems, labels::MessageStyle::Brief);
  return joinedProblems(ok, problems);
}

std::optional<std::string> labelValueProblem(std::string_view value) {
  std::vector<std::string> problems;
  bool ok = labels::checkLabelValue(value, &problems, labels::MessageStyle::Brief);
  return joinedProblems(ok, problems);
}

std::string describe(const Json& value) {
  switch (value.type()) {
    case Json::value_t::array:
      return "a list";
    case Json::value_t::object:
      return "a mapping";
    case Json::value_t::string: {
      const auto& s = value.get_ref<const std::string&>();
      return s.size() > 40 ? util::quoteGo(s.substr(0, 40) + "...") : util::quoteGo(s);
    }
    case Json::value_t::number_float: {
      double d = value.get<double>();
      if (std::isnan(d)) {
        return "NaN";
      }
      if (std::isinf(d)) {
        return d > 0 ? "+Inf" : "-Inf";
      }
      return value.dump();
    }
    default:
      return value.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

}  // namespace berth::config
