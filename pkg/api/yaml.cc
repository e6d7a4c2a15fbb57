// JSON or YAML text to JSON values (see yaml.h). YAML goes through yaml-cpp's node tree and is
// converted the way sigs.k8s.io/yaml's YAMLToJSON does it (goyaml.v2 resolution of plain scalars,
// then encoding/json's rules for numbers).

#include "pkg/api/yaml.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "pkg/api/yaml_scalar.h"

namespace berth::api {
namespace {

using yaml_scalar::formatFloatKey;
using yaml_scalar::resolvePlain;
using yaml_scalar::Scalar;

// Deeper nesting than this is not a Kubernetes object; the limit keeps recursion (and alias
// cycles, which yaml-cpp represents as cyclic node graphs) from exhausting the stack.
constexpr int kMaxDepth = 256;

// An error raised while converting one YAML node, carrying the node's position.
struct YamlError {
  YAML::Mark mark;
  std::string message;
};

// A key given twice in one mapping under strict decoding, by its path ("a.b[0].c").
struct DuplicateField {
  std::string path;
};

util::Error duplicateFieldError(const std::string& path) {
  return util::invalidArgument(path + ": duplicate field");
}

util::Error yamlError(const YAML::Mark& mark, std::string_view message) {
  std::string m = "invalid YAML";
  if (!mark.is_null()) {
    m +=
        " at line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
  }
  m += ": ";
  m += message;
  return util::invalidArgument(std::move(m));
}

// --- Node conversion -----------------------------------------------------------------------------

constexpr std::string_view kTagPrefix = "tag:yaml.org,2002:";

template <class Json>
class Converter {
 public:
  // Each node costs one unit; aliases are expanded, so a budget proportional to the input stops
  // exponential alias bombs without limiting honest files.
  Converter(size_t input_size, bool strict) : budget_(input_size * 4 + 4096), strict_(strict) {}

  Json value(const YAML::Node& node, int depth) {
    if (depth > kMaxDepth) {
      throw YamlError{node.Mark(), "document nests too deeply"};
    }
    if (budget_ == 0) {
      throw YamlError{node.Mark(), "document expands to too many nodes (alias expansion?)"};
    }
    --budget_;
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return nullptr;
      case YAML::NodeType::Scalar:
        return scalarValue(node);
      case YAML::NodeType::Sequence: {
        Json out = Json::array();
        for (const auto& item : node) {
          const size_t mark = enter(out.size());
          out.push_back(value(item, depth + 1));
          path_.resize(mark);
        }
        return out;
      }
      case YAML::NodeType::Map: {
        Json out = Json::object();
        for (const auto& entry : node) {
          const YAML::Node& k = entry.first;
          if (k.IsScalar() && k.Tag() == "?" && k.Scalar() == "<<") {
            merge(entry.second, out, depth + 1);
            continue;
          }
          std::string name = key(k);
          const size_t mark = enter(name);
          if (strict_ && out.contains(name)) {
            throw DuplicateField{path_};
          }
          Json v = value(entry.second, depth + 1);
          out[std::move(name)] = std::move(v);
          path_.resize(mark);
        }
        return out;
      }
    }
    return nullptr;
  }

 private:
  // Strict decoding reports a duplicate by its path, so it is kept (as config's child() and
  // index() spell it) only then. Returns the length to restore.
  size_t enter(const std::string& key) {
    const size_t mark = path_.size();
    if (strict_) {
      path_ += (mark == 0 ? "" : ".") + key;
    }
    return mark;
  }
  size_t enter(size_t index) {
    const size_t mark = path_.size();
    if (strict_) {
      path_ += "[" + std::to_string(index) + "]";
    }
    return mark;
  }

  // "<<: *base" or "<<: [*a, *b]": goyaml.v2 copies the entries in, overwriting keys set so far,
  // and for a list applies the last map first so that earlier maps win.
  void merge(const YAML::Node& source, Json& out, int depth) {
    if (source.IsMap()) {
      Json merged = value(source, depth);
      for (auto& [k, v] : merged.items()) {
        out[k] = v;
      }
      return;
    }
    if (source.IsSequence()) {
      std::vector<YAML::Node> items(source.begin(), source.end());
      for (auto it = items.rbegin(); it != items.rend(); ++it) {
        if (!it->IsMap()) {
          throw YamlError{it->Mark(), "map merge requires map or sequence of maps as the value"};
        }
        merge(*it, out, depth);
      }
      return;
    }
    throw YamlError{source.Mark(), "map merge requires map or sequence of maps as the value"};
  }

  static Scalar resolve(const YAML::Node& node) {
    const std::string& tag = node.Tag();
    Scalar r;
    if (tag == "!" || tag == std::string(kTagPrefix) + "str" ||
        tag == std::string(kTagPrefix) + "binary") {
      return r;  // quoted, block or explicitly a string
    }
    if (tag != "?" && tag.rfind(kTagPrefix, 0) != 0) {
      return r;  // a local tag (!foo): goyaml.v2 leaves the text as it is
    }
    r = resolvePlain(node.Scalar());
    if (tag == "?") {
      return r;
    }
    // An explicit standard tag must agree with what the text resolves to.
    const std::string want = tag.substr(kTagPrefix.size());
    auto got = [&]() -> std::string {
      switch (r.kind) {
        case Scalar::Kind::Null:
          return "null";
        case Scalar::Kind::Bool:
          return "bool";
        case Scalar::Kind::Int:
        case Scalar::Kind::Uint:
          return "int";
        case Scalar::Kind::Float:
          return "float";
        case Scalar::Kind::String:
          return "str";
      }
      return "str";
    }();
    if (want == got || want == "timestamp" || want == "map" || want == "seq") {
      return r;
    }
    if (want == "float" && r.kind == Scalar::Kind::Int) {
      r.kind = Scalar::Kind::Float;
      r.f = static_cast<double>(r.i);
      return r;
    }
    if (want == "float" && r.kind == Scalar::Kind::Uint) {
      r.kind = Scalar::Kind::Float;
      r.f = static_cast<double>(r.u);
      return r;
    }
    throw YamlError{node.Mark(),
                    "cannot decode !!" + got + " `" + node.Scalar() + "` as a !!" + want};
  }

  static Json scalarValue(const YAML::Node& node) {
    const Scalar r = resolve(node);
    switch (r.kind) {
      case Scalar::Kind::Null:
        return nullptr;
      case Scalar::Kind::Bool:
        return r.b;
      case Scalar::Kind::Int:
        return r.i;
      case Scalar::Kind::Uint:
        return r.u;
      case Scalar::Kind::Float:
        return floatValue(node, r.f);
      case Scalar::Kind::String:
        return node.Scalar();
    }
    return node.Scalar();
  }

  // encoding/json writes an integral float64 without a fraction ("80", not "80.0"), so after the
  // round trip through JSON text it decodes as an integer; keep it an integer here too.
  static Json floatValue(const YAML::Node& node, double f) {
    if (std::isnan(f) || std::isinf(f)) {
      throw YamlError{node.Mark(),
                      "unsupported value: " + node.Scalar() + " (JSON has no NaN or infinity)"};
    }
    if (f == std::trunc(f)) {
      if (f >= -9223372036854775808.0 && f < 9223372036854775808.0) {
        return static_cast<int64_t>(f);
      }
      if (f >= 0 && f < 18446744073709551616.0) {
        return static_cast<uint64_t>(f);
      }
    }
    return f;
  }

  // Map keys become strings as sigs.k8s.io/yaml converts them (true -> "true", 1.5 -> "1.5").
  static std::string key(const YAML::Node& node) {
    if (!node.IsScalar()) {
      if (node.IsNull()) {
        throw YamlError{node.Mark(), "unsupported map key: null"};
      }
      throw YamlError{node.Mark(), "unsupported map key: a map or sequence"};
    }
    const Scalar r = resolve(node);
    switch (r.kind) {
      case Scalar::Kind::Null:
        throw YamlError{node.Mark(), "unsupported map key: null"};
      case Scalar::Kind::Bool:
        return r.b ? "true" : "false";
      case Scalar::Kind::Int:
        return std::to_string(r.i);
      case Scalar::Kind::Uint:
        throw YamlError{node.Mark(), "unsupported map key of type uint64: " + node.Scalar()};
      case Scalar::Kind::Float:
        return formatFloatKey(r.f);
      case Scalar::Kind::String:
        return node.Scalar();
    }
    return node.Scalar();
  }

  size_t budget_;
  bool strict_;
  std::string path_;
};

// goyaml.v2 rejects input that is not UTF-8 or holds control characters; yaml-cpp does not, and
// nlohmann::json would later refuse to write such strings.
std::optional<util::Error> checkYamlText(std::string_view text) {
  int line = 0;
  int column = 0;
  size_t i = 0;
  auto fail = [&](std::string_view why) {
    YAML::Mark mark;
    mark.line = line;
    mark.column = column;
    mark.pos = static_cast<int>(i);
    return yamlError(mark, why);
  };
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t len = 1;
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
        return fail("control characters are not allowed");
      }
    } else {
      uint32_t cp = 0;
      if ((c & 0xe0) == 0xc0) {
        len = 2;
        cp = c & 0x1f;
      } else if ((c & 0xf0) == 0xe0) {
        len = 3;
        cp = c & 0x0f;
      } else if ((c & 0xf8) == 0xf0) {
        len = 4;
        cp = c & 0x07;
      } else {
        return fail("invalid UTF-8");
      }
      if (i + len > text.size()) {
        return fail("invalid UTF-8");
      }
      for (size_t k = 1; k < len; ++k) {
        const auto cc = static_cast<unsigned char>(text[i + k]);
        if ((cc & 0xc0) != 0x80) {
          return fail("invalid UTF-8");
        }
        cp = (cp << 6) | (cc & 0x3f);
      }
      static constexpr uint32_t kMinForLength[5] = {0, 0, 0x80, 0x800, 0x10000};
      if (cp < kMinForLength[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
        return fail("invalid UTF-8");
      }
    }
    if (c == '\n') {
      ++line;
      column = 0;
    } else {
      ++column;
    }
    i += len;
  }
  return std::nullopt;
}

// Follows nlohmann's parse events to name the first key given twice in one object by its path.
// nlohmann keeps the last value of such a key; Go's strict decoding rejects it.
template <class Json>
class DuplicateKeyFinder {
 public:
  bool onEvent(nlohmann::json::parse_event_t event, const Json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        frames_.push_back({event == Event::array_start, 0, {}, {}});
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
          top.key = parsed.template get<std::string>();
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
      p += f.array ? "[" + std::to_string(f.index) + "]" : (p.empty() ? "" : ".") + f.key;
    }
    return p;
  }

  std::vector<Frame> frames_;
  std::optional<std::string> duplicate_;
};

// nlohmann's what() is "[json.exception.parse_error.101] parse error at line 1, column 2: ...".
// "last read" quotes raw input, possibly cut inside a UTF-8 sequence: keep the message ASCII so it
// can itself be written as JSON (events, JSON logs).
util::Error jsonError(std::string_view what) {
  if (const size_t close = what.find("] "); close != std::string_view::npos) {
    what.remove_prefix(close + 2);
  }
  std::string message = "invalid JSON: ";
  for (char c : what) {
    if (static_cast<unsigned char>(c) < 0x80) {
      message += c;
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      message += "\\x";
      message += kHex[static_cast<unsigned char>(c) >> 4];
      message += kHex[static_cast<unsigned char>(c) & 0xf];
    }
  }
  return util::invalidArgument(std::move(message));
}

template <class Json>
util::Result<std::vector<Json>> parseJson(std::string_view text, const ParseOptions& options) {
  try {
    std::vector<Json> docs;
    if (!options.reject_duplicate_keys) {
      docs.push_back(Json::parse(text.begin(), text.end()));
      return docs;
    }
    DuplicateKeyFinder<Json> finder;
    typename Json::parser_callback_t callback = [&finder](int, nlohmann::json::parse_event_t event,
                                                          Json& parsed) {
      return finder.onEvent(event, parsed);
    };
    docs.push_back(Json::parse(text.begin(), text.end(), callback));
    if (finder.duplicate()) {
      return duplicateFieldError(*finder.duplicate());
    }
    return docs;
  } catch (const nlohmann::json::parse_error& e) {
    return jsonError(e.what());
  } catch (const std::exception& e) {
    return util::invalidArgument(std::string("invalid JSON: ") + e.what());
  }
}

// yaml-cpp 0.7 never consumes a stray ',' where a document's root node should start (", a" or
// "- a\n,"): it reports endless empty documents at the same position, and LoadAll allocates until
// the process dies. A first pass with this handler notices a document that did not move forward.
class ProgressCheck final : public YAML::EventHandler {
 public:
  bool stuck() const { return stuck_; }
  const YAML::Mark& mark() const { return mark_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    stuck_ = documents_ > 0 && mark.pos == mark_.pos;
    mark_ = mark;
    ++documents_;
  }
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

 private:
  YAML::Mark mark_;
  size_t documents_ = 0;
  bool stuck_ = false;
};

// A stream of several documents is refused when one is expected, counting empty ones, since a
// stray "---" more likely means a file pasted together than an intended empty document.
template <class Json>
util::Result<std::vector<Json>> parseYaml(std::string_view text, const ParseOptions& options,
                                          bool one_document) {
  if (auto err = checkYamlText(text)) {
    return *err;
  }
  try {
    const std::string input(text);
    {
      std::istringstream stream(input);
      YAML::Parser parser(stream);
      ProgressCheck check;
      while (parser.HandleNextDocument(check)) {
        if (check.stuck()) {
          return yamlError(check.mark(), "did not find expected node content");
        }
      }
    }
    const std::vector<YAML::Node> nodes = YAML::LoadAll(input);
    if (one_document && nodes.size() > 1) {
      return util::invalidArgument("expected one YAML document, found several");
    }
    Converter<Json> converter(text.size(), options.reject_duplicate_keys);
    std::vector<Json> docs;
    for (const YAML::Node& node : nodes) {
      if (node.IsNull() || !node.IsDefined()) {
        continue;  // an empty document ("---" followed by nothing or only comments)
      }
      docs.push_back(converter.value(node, 0));
    }
    return docs;
  } catch (const DuplicateField& e) {
    return duplicateFieldError(e.path);
  } catch (const YamlError& e) {
    return yamlError(e.mark, e.message);
  } catch (const YAML::Exception& e) {
    return yamlError(e.mark, e.msg);
  } catch (const std::exception& e) {
    return util::invalidArgument(std::string("invalid YAML: ") + e.what());
  }
}

template <class Json>
util::Result<std::vector<Json>> parse(std::string_view text, const ParseOptions& options,
                                      bool one_document) {
  size_t i = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") {
    i = 3;  // UTF-8 byte order mark
  }
  while (i < text.size() &&
         (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) {
    ++i;
  }
  if (i < text.size() && (text[i] == '{' || text[i] == '[')) {
    return parseJson<Json>(text, options);
  }
  return parseYaml<Json>(text, options, one_document);
}

}  // namespace

util::Result<std::vector<nlohmann::json>> parseDocuments(std::string_view text,
                                                         const ParseOptions& options) {
  return parse<nlohmann::json>(text, options, /*one_document=*/false);
}

util::Result<nlohmann::ordered_json> parseOneDocument(std::string_view text,
                                                      const ParseOptions& options) {
  auto docs = parse<nlohmann::ordered_json>(text, options, /*one_document=*/true);
  if (!docs.ok()) {
    return docs.error();
  }
  nlohmann::ordered_json doc;  // null for an empty text
  if (!docs->empty()) doc = std::move(docs->front());
  return doc;
}

}  // namespace berth::api
