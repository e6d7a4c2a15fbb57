#include "pkg/apiserver/microtime.h"

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <span>

#include "pkg/api/decode.h"
#include "pkg/apiserver/patch.h"

namespace berth::apiserver {
namespace {

constexpr std::string_view kLayout = "2006-01-02T15:04:05.000000Z07:00";

// Go's strconv.Quote for the ASCII text a timestamp holds.
std::string goQuote(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Reads the layout left to right as time.Parse does; `rest` is what remains of the value.
class Parser {
 public:
  explicit Parser(std::string_view value) : value_(value), rest_(value) {}

  util::Error cannotParse(std::string_view layoutElem) const {
    return util::invalidArgument("parsing time " + goQuote(value_) + " as " + goQuote(kLayout) +
                                 ": cannot parse " + goQuote(rest_) + " as " + goQuote(layoutElem));
  }
  util::Error failure(std::string_view message) const {
    return util::invalidArgument("parsing time " + goQuote(value_) + std::string(message));
  }

  // A fixed-width run of digits (Go's getnum with fixed=true, or the 4-digit year).
  bool fixed(int width, int& out) {
    if (rest_.size() < static_cast<size_t>(width)) {
      return false;
    }
    int v = 0;
    for (int i = 0; i < width; ++i) {
      if (!isDigit(rest_[i])) {
        return false;
      }
      v = v * 10 + (rest_[i] - '0');
    }
    rest_.remove_prefix(width);
    out = v;
    return true;
  }
  // One or two digits (getnum with fixed=false, used for the "15" hour).
  bool loose(int& out) {
    if (rest_.empty() || !isDigit(rest_[0])) {
      return false;
    }
    if (rest_.size() < 2 || !isDigit(rest_[1])) {
      out = rest_[0] - '0';
      rest_.remove_prefix(1);
      return true;
    }
    return fixed(2, out);
  }
  bool literal(char c) {
    if (rest_.empty() || rest_[0] != c) {
      return false;
    }
    rest_.remove_prefix(1);
    return true;
  }
  std::string_view rest() const { return rest_; }
  void skip(size_t n) { rest_.remove_prefix(n); }

 private:
  std::string_view value_;
  std::string_view rest_;
};

bool isLeap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int daysIn(int month, int year) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && isLeap(year) ? 29 : kDays[month - 1];
}

// The metav1.MicroTime fields of a resource, as (parent path, field, pointer). A pointer field
// (omitempty) decoded from null is absent when encoded again; a struct field stays null.
struct MicroTimeField {
  std::initializer_list<std::string_view> parent;
  std::string_view field;
  bool pointer;
};

}  // namespace

util::Result<std::string> parseMicroTime(std::string_view text) {
  Parser p(text);
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, micros = 0;
  if (!p.fixed(4, year)) {
    return p.cannotParse("2006");
  }
  if (!p.literal('-')) {
    return p.cannotParse("-");
  }
  if (!p.fixed(2, month)) {
    return p.cannotParse("01");
  }
  if (month < 1 || month > 12) {
    return p.failure(": month out of range");
  }
  if (!p.literal('-')) {
    return p.cannotParse("-");
  }
  if (!p.fixed(2, day)) {
    return p.cannotParse("02");
  }
  if (!p.literal('T')) {
    return p.cannotParse("T");
  }
  if (!p.loose(hour)) {
    return p.cannotParse("15");
  }
  if (hour > 23) {
    return p.failure(": hour out of range");
  }
  if (!p.literal(':')) {
    return p.cannotParse(":");
  }
  if (!p.fixed(2, minute)) {
    return p.cannotParse("04");
  }
  if (minute > 59) {
    return p.failure(": minute out of range");
  }
  if (!p.literal(':')) {
    return p.cannotParse(":");
  }
  if (!p.fixed(2, second)) {
    return p.cannotParse("05");
  }
  if (second > 59) {
    return p.failure(": second out of range");
  }
  // ".000000": a period (or comma) and exactly six digits.
  std::string_view rest = p.rest();
  if (rest.size() < 7 || (rest[0] != '.' && rest[0] != ',')) {
    return p.cannotParse(".000000");
  }
  for (size_t i = 1; i < 7; ++i) {
    if (!isDigit(rest[i])) {
      return p.cannotParse(".000000");
    }
    micros = micros * 10 + (rest[i] - '0');
  }
  p.skip(7);
  // "Z07:00": Z, or a signed hh:mm offset.
  int64_t offsetSeconds = 0;
  if (!p.literal('Z')) {
    rest = p.rest();
    if (rest.size() < 6 || (rest[0] != '+' && rest[0] != '-') || rest[3] != ':') {
      return p.cannotParse("Z07:00");
    }
    const int sign = rest[0] == '-' ? -1 : 1;
    p.skip(1);
    int oh = 0, om = 0;
    if (!p.fixed(2, oh) || !p.literal(':') || !p.fixed(2, om)) {
      return p.cannotParse("Z07:00");
    }
    if (oh > 24) {
      return p.failure(": time zone offset hour out of range");
    }
    if (om > 60) {
      return p.failure(": time zone offset minute out of range");
    }
    offsetSeconds = sign * (oh * 3600 + om * 60);
  }
  if (!p.rest().empty()) {
    return p.failure(": extra text: " + goQuote(p.rest()));
  }
  if (day < 1 || day > daysIn(month, year)) {
    return p.failure(": day out of range");
  }
  // Re-read the civil fields through the shared RFC 3339 code, then shift to UTC.
  char civil[96];
  std::snprintf(civil, sizeof(civil), "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", year, month, day, hour,
                minute, second, micros);
  auto t = api::parseTimestamp(civil);
  if (!t) {
    return t.error();
  }
  return api::formatMicroTimestamp(api::Timestamp{t->micros - offsetSeconds * 1'000'000});
}

util::Result<void> normalizeMicroTimes(Resource resource, nlohmann::json& object) {
  static const MicroTimeField kLease[] = {{{"spec"}, "acquireTime", true},
                                          {{"spec"}, "renewTime", true}};
  static const MicroTimeField kEvent[] = {{{}, "eventTime", false},
                                          {{"series"}, "lastObservedTime", false}};
  std::span<const MicroTimeField> fields;
  if (resource == Resource::Leases) {
    fields = kLease;
  } else if (resource == Resource::Events || resource == Resource::EventsV1) {
    fields = kEvent;
  }
  for (const MicroTimeField& f : fields) {
    nlohmann::json* parent = &object;
    for (std::string_view part : f.parent) {
      auto it = parent->is_object() ? parent->find(part) : parent->end();
      parent = it == parent->end() ? nullptr : &*it;
      if (parent == nullptr) {
        break;
      }
    }
    if (parent == nullptr || !parent->is_object()) {
      continue;
    }
    auto it = parent->find(f.field);
    if (it == parent->end()) {
      continue;
    }
    if (it->is_null()) {
      if (f.pointer) {
        parent->erase(it);
      }
      continue;
    }
    if (!it->is_string()) {
      return util::invalidArgument("json: cannot unmarshal " + std::string(goJsonKind(*it)) +
                                   " into Go value of type string");
    }
    auto canonical = parseMicroTime(it->get<std::string>());
    if (!canonical) {
      return canonical.error();
    }
    *it = std::move(*canonical);
  }
  return {};
}

}  // namespace berth::apiserver
