#include "pkg/config/internal/text.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <vector>

#include "pkg/util/quote.h"

namespace berth::config::internal {
namespace {

// Deep YAML nesting and alias expansion ("billion laughs") must fail cleanly, not exhaust memory.
constexpr int kMaxDepth = 128;
constexpr size_t kMaxNodes = 100'000;  // a real configuration has a few hundred

std::string_view trimLeft(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
  return s;
}

// --- JSON ----------------------------------------------------------------------------------------

// Tracks where the parser is, to report a duplicated key by its path. nlohmann keeps the last value
// of a duplicated key; Go's strict decoding rejects it.
class DuplicateKeyFinder {
 public:
  bool onEvent(nlohmann::json::parse_event_t event, const Json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
      case Event::object_start:
        frames_.emplace_back();
        break;
      case Event::array_start:
        frames_.emplace_back();
        frames_.back().array = true;
        break;
      case Event::object_end:
      case Event::array_end:
        if (!frames_.empty()) {
          frames_.pop_back();
        }
        nextElement();
        break;
      case Event::key:
        if (!frames_.empty() && parsed.is_string()) {
          Frame& top = frames_.back();
          top.key = parsed.get<std::string>();
          if (!top.keys.insert(top.key).second && !duplicate_) {
            duplicate_ = path();
          }
        }
        break;
      case Event::value:
        nextElement();
        break;
    }
    return true;
  }

  const std::optional<std::string>& duplicate() const { return duplicate_; }

 private:
  struct Frame {
    bool array = false;
    size_t index = 0;
    std::string key;
    std::set<std::string> keys;
  };

  void nextElement() {
    if (!frames_.empty() && frames_.back().array) {
      ++frames_.back().index;
    }
  }

  std::string path() const {
    std::string p;
    for (const Frame& f : frames_) {
      if (f.array) {
        p += "[" + std::to_string(f.index) + "]";
      } else {
        p += (p.empty() ? "" : ".") + f.key;
      }
    }
    return p;
  }

  std::vector<Frame> frames_;
  std::optional<std::string> duplicate_;
};

util::Result<Json> parseJson(std::string_view text) {
  DuplicateKeyFinder finder;
  Json::parser_callback_t cb = [&finder](int, nlohmann::json::parse_event_t event, Json& parsed) {
    return finder.onEvent(event, parsed);
  };
  Json j = Json::parse(text.begin(), text.end(), cb, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    // Parse again with exceptions only to get the position and reason.
    try {
      Json::parse(text.begin(), text.end()).swap(j);
    } catch (const nlohmann::json::exception& e) {
      std::string what = e.what();
      size_t pos = what.find("] ");
      return util::invalidArgument("invalid JSON: " +
                                   (pos == std::string::npos ? what : what.substr(pos + 2)));
    }
    return util::invalidArgument("invalid JSON");
  }
  if (finder.duplicate()) {
    return util::invalidArgument(*finder.duplicate() + ": duplicate field");
  }
  return j;
}

// --- YAML ----------------------------------------------------------------------------------------

std::optional<int64_t> parseYamlInt(std::string_view s) {
  std::string digits;
  for (char c : s) {
    if (c != '_') {
      digits += c;
    }
  }
  std::string_view d = digits;
  bool negative = false;
  if (!d.empty() && (d.front() == '-' || d.front() == '+')) {
    negative = d.front() == '-';
    d.remove_prefix(1);
  }
  int base = 10;
  if (d.size() > 2 && d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) {
    base = 16;
    d.remove_prefix(2);
  } else if (d.size() > 2 && d[0] == '0' && (d[1] == 'b' || d[1] == 'B')) {
    base = 2;
    d.remove_prefix(2);
  } else if (d.size() > 1 && d[0] == '0') {
    base = 8;  // go-yaml v2 reads a leading 0 as octal, as Go's strconv base 0 does
    d.remove_prefix(1);
  }
  if (d.empty()) {
    return std::nullopt;
  }
  uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(d.data(), d.data() + d.size(), magnitude, base);
  if (ec != std::errc() || end != d.data() + d.size()) {
    return std::nullopt;
  }
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (magnitude > kMax + (negative ? 1 : 0)) {
    return std::nullopt;
  }
  if (negative) {
    return magnitude == kMax + 1 ? std::numeric_limits<int64_t>::min()
                                 : -static_cast<int64_t>(magnitude);
  }
  return static_cast<int64_t>(magnitude);
}

std::optional<double> parseYamlFloat(std::string_view s) {
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf" || s == "+.Inf" || s == "+.INF") {
    return std::numeric_limits<double>::infinity();
  }
  if (s == "-.inf" || s == "-.Inf" || s == "-.INF") {
    return -std::numeric_limits<double>::infinity();
  }
  if (s == ".nan" || s == ".NaN" || s == ".NAN") {
    return std::numeric_limits<double>::quiet_NaN();
  }
  // [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      ++i;
    }
    return i - start;
  };
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
    ++i;
  }
  size_t intDigits = digits();
  size_t fracDigits = 0;
  bool dot = i < s.size() && s[i] == '.';
  if (dot) {
    ++i;
    fracDigits = digits();
  }
  if (intDigits == 0 && fracDigits == 0) {
    return std::nullopt;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
      ++i;
    }
    if (digits() == 0) {
      return std::nullopt;
    }
  }
  if (i != s.size()) {
    return std::nullopt;
  }
  std::string copy(s.front() == '+' ? s.substr(1) : s);
  return std::strtod(copy.c_str(), nullptr);
}

Json resolvePlainScalar(const std::string& s) {
  static const std::set<std::string> kNull = {"", "~", "null", "Null", "NULL"};
  static const std::set<std::string> kTrue = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                              "True", "TRUE", "on",  "On",  "ON"};
  static const std::set<std::string> kFalse = {"n",     "N",     "no",  "No",  "NO", "false",
                                               "False", "FALSE", "off", "Off", "OFF"};
  if (kNull.count(s) != 0) {
    return nullptr;
  }
  if (kTrue.count(s) != 0) {
    return true;
  }
  if (kFalse.count(s) != 0) {
    return false;
  }
  if (auto i = parseYamlInt(s)) {
    return *i;
  }
  if (auto f = parseYamlFloat(s)) {
    return *f;
  }
  return s;
}

class YamlConverter {
 public:
  util::Result<Json> convert(const YAML::Node& node) {
    Json out = convertNode(node, "", 0);
    if (error_) {
      return util::invalidArgument(*error_);
    }
    return out;
  }

 private:
  Json convertNode(const YAML::Node& node, const std::string& path, int depth) {
    if (error_) {
      return nullptr;
    }
    if (depth > kMaxDepth || ++nodes_ > kMaxNodes) {
      fail(path, "document is nested too deeply or too large");
      return nullptr;
    }
    switch (node.Type()) {
      case YAML::NodeType::Scalar: {
        const std::string& tag = node.Tag();
        if (tag == "!" || tag == "tag:yaml.org,2002:str") {
          return node.Scalar();  // quoted or block scalars are always strings
        }
        return resolvePlainScalar(node.Scalar());
      }
      case YAML::NodeType::Sequence: {
        Json out = Json::array();
        size_t i = 0;
        for (const YAML::Node& item : node) {
          out.push_back(convertNode(item, path + "[" + std::to_string(i++) + "]", depth + 1));
        }
        return out;
      }
      case YAML::NodeType::Map: {
        Json out = Json::object();
        for (auto it = node.begin(); it != node.end(); ++it) {
          if (!it->first.IsScalar()) {
            fail(path, "mapping keys must be strings");
            return nullptr;
          }
          const std::string& key = it->first.Scalar();
          std::string child = path.empty() ? key : path + "." + key;
          if (out.contains(key)) {
            fail(child, "duplicate field");
            return nullptr;
          }
          out[key] = convertNode(it->second, child, depth + 1);
        }
        return out;
      }
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        return nullptr;
    }
    return nullptr;
  }

  void fail(const std::string& path, const std::string& problem) {
    if (!error_) {
      error_ = path.empty() ? problem : path + ": " + problem;
    }
  }

  std::optional<std::string> error_;
  size_t nodes_ = 0;
};

// Counts documents with yaml-cpp's event parser, stopping at `limit`: YAML::LoadAll never returns
// on some inputs (a lone "," yields empty documents forever in yaml-cpp 0.7).
size_t countDocuments(const std::string& text, size_t limit) {
  struct Ignore : YAML::EventHandler {
    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  const std::string&) override {}
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
  } ignore;
  std::istringstream in(text);
  YAML::Parser parser(in);
  size_t n = 0;
  while (n < limit && parser.HandleNextDocument(ignore)) {
    ++n;
  }
  return n;
}

util::Result<Json> parseYaml(std::string_view text) {
  std::string copy(text);
  YAML::Node doc;
  try {
    doc = YAML::Load(copy);
    if (countDocuments(copy, 2) > 1) {
      return util::invalidArgument("expected one YAML document, found several");
    }
    return YamlConverter().convert(doc);
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) {
      return util::invalidArgument("invalid YAML: " + e.msg);
    }
    return util::invalidArgument("invalid YAML at line " + std::to_string(e.mark.line + 1) +
                                 ", column " + std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
}

bool isAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool isQualifiedNamePart(std::string_view s) {
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

// A lowercase RFC 1123 subdomain: dot-separated labels of [a-z0-9-], each starting and ending
// alphanumeric.
bool isDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) {
    return false;
  }
  size_t start = 0;
  while (start <= s.size()) {
    size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (label.empty() || !isAlnum(label.front()) || !isAlnum(label.back())) {
      return false;
    }
    for (char c : label) {
      bool lower = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
      if (!lower) {
        return false;
      }
    }
    if (dot == std::string_view::npos) {
      break;
    }
    start = dot + 1;
  }
  return true;
}

}  // namespace

util::Result<Json> parseDocument(std::string_view text) {
  std::string_view rest = trimLeft(text);
  if (!rest.empty() && rest.front() == '{') {
    return parseJson(text);
  }
  return parseYaml(text);
}

}  // namespace berth::config::internal

namespace berth::config {

using internal::isDns1123Subdomain;
using internal::isQualifiedNamePart;

std::optional<std::string> qualifiedNameProblem(std::string_view name) {
  std::string_view prefix;
  std::string_view part = name;
  size_t slash = name.find('/');
  if (slash != std::string_view::npos) {
    if (name.find('/', slash + 1) != std::string_view::npos) {
      return "a qualified name must consist of alphanumeric characters, '-', '_' or '.', "
             "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
    }
    prefix = name.substr(0, slash);
    part = name.substr(slash + 1);
    if (prefix.empty()) {
      return "prefix part must be non-empty";
    }
    if (!isDns1123Subdomain(prefix)) {
      return "prefix part must be a lowercase RFC 1123 subdomain (e.g. 'example.com')";
    }
  }
  if (part.empty()) {
    return "name part must be non-empty";
  }
  if (part.size() > 63) {
    return "name part must be no more than 63 characters";
  }
  if (!isQualifiedNamePart(part)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
           "and end with an alphanumeric character";
  }
  return std::nullopt;
}

std::optional<std::string> labelValueProblem(std::string_view value) {
  if (value.size() > 63) {
    return "must be no more than 63 characters";
  }
  if (!value.empty() && !isQualifiedNamePart(value)) {
    return "a valid label value must be an empty string or consist of alphanumeric characters, "
           "'-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return std::nullopt;
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
