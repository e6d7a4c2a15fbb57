#include "pkg/labels/validation.h"

#include <cstddef>
#include <limits>

namespace berth::labels {
namespace {

constexpr size_t kLabelNameMaxLength = 63;
constexpr size_t kLabelValueMaxLength = 63;
constexpr size_t kDnsSubdomainMaxLength = 253;

// Regexes and messages as upstream prints them (they are part of the error text users see).
constexpr std::string_view kLabelKeyFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr std::string_view kLabelKeyErrMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
constexpr std::string_view kLabelValueFmt = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
constexpr std::string_view kLabelValueErrMsg =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character";
constexpr std::string_view kDnsSubdomainFmt =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr std::string_view kDnsSubdomainErrMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character";

bool isAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool isLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$
bool matchesNameRegex(std::string_view s) {
  if (s.empty() || !isAlnum(s.front()) || !isAlnum(s.back())) {
    return false;
  }
  for (char c : s) {
    if (!isAlnum(c) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

// ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$
bool matchesDnsSubdomainRegex(std::string_view s) {
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (part.empty() || !isLowerAlnum(part.front()) || !isLowerAlnum(part.back())) {
      return false;
    }
    for (char c : part) {
      if (!isLowerAlnum(c) && c != '-') {
        return false;
      }
    }
    if (dot == std::string_view::npos) {
      return true;
    }
    start = dot + 1;
  }
}

// Upstream's RegexError: "<msg> (e.g. 'a',  or 'b', regex used for validation is '<re>')", or
// only <msg> when Brief.
std::string regexError(std::string_view msg, std::string_view re,
                       std::initializer_list<std::string_view> examples, MessageStyle style) {
  std::string out(msg);
  if (style == MessageStyle::Brief) {
    return out;
  }
  out += " (e.g. ";
  bool first = true;
  for (std::string_view example : examples) {
    if (!first) {
      out += " or ";
    }
    first = false;
    out += "'";
    out += example;
    out += "', ";
  }
  out += "regex used for validation is '";
  out += re;
  out += "')";
  return out;
}

std::string maxLenError(size_t length) {
  return "must be no more than " + std::to_string(length) + " bytes";
}

std::string nameRegexError(MessageStyle style) {
  return regexError(kLabelKeyErrMsg, kLabelKeyFmt, {"MyName", "my.name", "123-abc"}, style);
}

// checkLabelKey without messages: no allocation, for the hot loop.
bool isLabelKey(std::string_view key) {
  size_t slash = key.find('/');
  std::string_view name = key;
  if (slash != std::string_view::npos) {
    std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (prefix.size() > kDnsSubdomainMaxLength || !matchesDnsSubdomainRegex(prefix)) {
      return false;  // also rejects an empty prefix
    }
  }
  return name.size() <= kLabelNameMaxLength && matchesNameRegex(name);  // '/' fails the regex
}

// `what` names the whole for the one message that is not about a part ("a valid label key").
bool checkQualified(std::string_view key, std::vector<std::string>* errors, MessageStyle style,
                    std::string_view what) {
  if (errors == nullptr) {
    return isLabelKey(key);
  }
  bool ok = true;
  auto fail = [&](std::string message) {
    ok = false;
    if (errors != nullptr) {
      errors->push_back(std::move(message));
    }
  };

  std::string_view name = key;
  size_t slash = key.find('/');
  if (slash != std::string_view::npos) {
    if (key.find('/', slash + 1) != std::string_view::npos) {
      fail(std::string(what) + " " + nameRegexError(style) +
           " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
      return false;
    }
    std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (prefix.empty()) {
      fail("prefix part must be non-empty");
    } else {
      if (prefix.size() > kDnsSubdomainMaxLength) {
        fail("prefix part " + maxLenError(kDnsSubdomainMaxLength));
      }
      if (!matchesDnsSubdomainRegex(prefix)) {
        fail("prefix part " +
             regexError(kDnsSubdomainErrMsg, kDnsSubdomainFmt, {"example.com"}, style));
      }
    }
  }
  if (name.empty()) {
    fail("name part must be non-empty");
  } else if (name.size() > kLabelNameMaxLength) {
    fail("name part " + maxLenError(kLabelNameMaxLength));
  }
  if (!matchesNameRegex(name)) {
    fail("name part " + nameRegexError(style));
  }
  return ok;
}

}  // namespace

bool checkLabelKey(std::string_view key, std::vector<std::string>* errors, MessageStyle style) {
  return checkQualified(key, errors, style, "a valid label key");
}

bool checkQualifiedName(std::string_view name, std::vector<std::string>* errors,
                        MessageStyle style) {
  return checkQualified(name, errors, style, "a qualified name");
}

bool checkLabelValue(std::string_view value, std::vector<std::string>* errors, MessageStyle style) {
  bool ok = true;
  if (value.size() > kLabelValueMaxLength) {
    ok = false;
    if (errors != nullptr) {
      errors->push_back(maxLenError(kLabelValueMaxLength));
    }
  }
  if (!value.empty() && !matchesNameRegex(value)) {
    ok = false;
    if (errors != nullptr) {
      errors->push_back(
          regexError(kLabelValueErrMsg, kLabelValueFmt, {"MyValue", "my_value", "12345"}, style));
    }
  }
  return ok;
}

std::optional<int64_t> parseInt64(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) {
    return std::nullopt;
  }
  // Accumulate as a negative number so that INT64_MIN fits.
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  int64_t acc = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    int digit = c - '0';
    if (acc < (kMin + digit) / 10) {
      return std::nullopt;
    }
    acc = acc * 10 - digit;
  }
  if (!negative) {
    if (acc == kMin) {
      return std::nullopt;
    }
    return -acc;
  }
  return acc;
}

}  // namespace berth::labels
