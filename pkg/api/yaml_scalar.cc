#include "pkg/api/yaml_scalar.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

namespace berth::api::yaml_scalar {
namespace {

// Go's strconv.ParseUint/ParseInt with base 0: 0x, 0o, 0b and leading-0 octal prefixes.
std::optional<uint64_t> parseGoUnsigned(std::string_view s) {
  int base = 10;
  if (s.size() >= 2 && s[0] == '0') {
    const char p = s[1];
    if (p == 'x' || p == 'X') {
      base = 16;
      s.remove_prefix(2);
    } else if (p == 'o' || p == 'O') {
      base = 8;
      s.remove_prefix(2);
    } else if (p == 'b' || p == 'B') {
      base = 2;
      s.remove_prefix(2);
    } else {
      base = 8;
      s.remove_prefix(1);
    }
  }
  if (s.empty()) {
    return std::nullopt;
  }
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || end != s.data() + s.size()) {
    return std::nullopt;
  }
  return v;
}

std::optional<int64_t> parseGoSigned(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  // from_chars for unsigned types accepts no sign, so a second sign is rejected here too.
  const auto magnitude = parseGoUnsigned(s);
  if (!magnitude) {
    return std::nullopt;
  }
  constexpr uint64_t kMaxPositive = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (negative) {
    if (*magnitude > kMaxPositive + 1) {
      return std::nullopt;
    }
    return static_cast<int64_t>(0 - *magnitude);
  }
  if (*magnitude > kMaxPositive) {
    return std::nullopt;
  }
  return static_cast<int64_t>(*magnitude);
}

// goyaml.v2's yamlStyleFloat: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool isYamlStyleFloat(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      ++i;
    }
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    ++i;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) {
      return false;
    }
  } else {
    if (digits() == 0) {
      return false;
    }
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
      ++i;
    }
    if (digits() == 0) {
      return false;
    }
  }
  return i == s.size();
}

}  // namespace

// strconv.ParseFloat on text that isYamlStyleFloat accepted: overflow is an error (the scalar then
// stays a string), underflow gives zero.
std::optional<double> parseGoFloat(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) {
    const size_t e = s.find_first_of("eE");
    const bool underflow = e != std::string_view::npos && e + 1 < s.size() && s[e + 1] == '-';
    if (!underflow) {
      return std::nullopt;
    }
    v = 0;
  } else if (ec != std::errc() || end != s.data() + s.size()) {
    return std::nullopt;
  }
  return negative ? -v : v;
}

Scalar resolvePlain(const std::string& in) {
  Scalar r;
  static const std::pair<std::string_view, int> kWords[] = {
      {"y", 1},    {"Y", 1},  {"yes", 1},   {"Yes", 1},   {"YES", 1},   {"true", 1},  {"True", 1},
      {"TRUE", 1}, {"on", 1}, {"On", 1},    {"ON", 1},    {"n", 0},     {"N", 0},     {"no", 0},
      {"No", 0},   {"NO", 0}, {"false", 0}, {"False", 0}, {"FALSE", 0}, {"off", 0},   {"Off", 0},
      {"OFF", 0},  {"", -1},  {"~", -1},    {"null", -1}, {"Null", -1}, {"NULL", -1},
  };
  for (const auto& [word, value] : kWords) {
    if (in == word) {
      if (value < 0) {
        r.kind = Scalar::Kind::Null;
      } else {
        r.kind = Scalar::Kind::Bool;
        r.b = value == 1;
      }
      return r;
    }
  }
  static const std::pair<std::string_view, double> kSpecialFloats[] = {
      {".nan", std::nan("")},
      {".NaN", std::nan("")},
      {".NAN", std::nan("")},
      {".inf", std::numeric_limits<double>::infinity()},
      {".Inf", std::numeric_limits<double>::infinity()},
      {".INF", std::numeric_limits<double>::infinity()},
      {"+.inf", std::numeric_limits<double>::infinity()},
      {"+.Inf", std::numeric_limits<double>::infinity()},
      {"+.INF", std::numeric_limits<double>::infinity()},
      {"-.inf", -std::numeric_limits<double>::infinity()},
      {"-.Inf", -std::numeric_limits<double>::infinity()},
      {"-.INF", -std::numeric_limits<double>::infinity()},
  };
  for (const auto& [word, value] : kSpecialFloats) {
    if (in == word) {
      r.kind = Scalar::Kind::Float;
      r.f = value;
      return r;
    }
  }
  const char first = in.empty() ? '\0' : in[0];
  if (first == '.') {
    if (isYamlStyleFloat(in)) {
      if (auto f = parseGoFloat(in)) {
        r.kind = Scalar::Kind::Float;
        r.f = *f;
      }
    }
    return r;
  }
  if (first != '+' && first != '-' && (first < '0' || first > '9')) {
    return r;
  }
  // goyaml.v2 drops underscores before trying numbers ("1_000" is 1000).
  std::string plain;
  plain.reserve(in.size());
  for (char c : in) {
    if (c != '_') {
      plain += c;
    }
  }
  if (auto i = parseGoSigned(plain)) {
    r.kind = Scalar::Kind::Int;
    r.i = *i;
  } else if (auto u = parseGoUnsigned(plain); u && plain[0] != '+' && plain[0] != '-') {
    r.kind = Scalar::Kind::Uint;
    r.u = *u;
  } else if (isYamlStyleFloat(plain)) {
    if (auto f = parseGoFloat(plain)) {
      r.kind = Scalar::Kind::Float;
      r.f = *f;
    }
  }
  return r;
}

// Go's strconv.FormatFloat(v, 'g', -1, 32), which sigs.k8s.io/yaml uses for float map keys.
std::string formatFloatKey(double v) {
  if (std::isnan(v)) {
    return ".nan";
  }
  if (std::isinf(v)) {
    return v > 0 ? ".inf" : "-.inf";
  }
  char buf[64];
  auto [end, ec] =
      std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v), std::chars_format::scientific);
  if (ec != std::errc()) {
    return "0";
  }
  // buf holds [-]d[.ddd]e(+|-)XX: split it into sign, digits and decimal exponent.
  std::string_view sci(buf, end - buf);
  std::string sign;
  if (sci.front() == '-') {
    sign = "-";
    sci.remove_prefix(1);
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') {
      digits += c;
    }
  }
  int exp = 0;
  std::string_view exp_text = sci.substr(e + 1);
  if (!exp_text.empty() && exp_text.front() == '+') {
    exp_text.remove_prefix(1);
  }
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exp);
  if (exp < -4 || exp >= 6) {  // Go's %g switches to an exponent at 1e6
    std::string out = sign + digits.substr(0, 1);
    if (digits.size() > 1) {
      out += "." + digits.substr(1);
    }
    const int abs_exp = exp < 0 ? -exp : exp;
    out += exp < 0 ? "e-" : "e+";
    if (abs_exp < 10) {
      out += "0";
    }
    return out + std::to_string(abs_exp);
  }
  if (exp < 0) {
    return sign + "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  }
  const size_t int_digits = static_cast<size_t>(exp) + 1;
  if (digits.size() <= int_digits) {
    return sign + digits + std::string(int_digits - digits.size(), '0');
  }
  return sign + digits.substr(0, int_digits) + "." + digits.substr(int_digits);
}

}  // namespace berth::api::yaml_scalar
