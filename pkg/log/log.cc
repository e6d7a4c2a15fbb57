#include "pkg/log/log.h"

#include <fnmatch.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pkg/util/quote.h"

namespace berth::log {
namespace {

using json = nlohmann::json;

std::atomic<int> g_verbosity{0};
std::atomic<Format> g_format{Format::Text};

struct VModuleRule {
  std::string pattern;
  int level = 0;
};

// --vmodule: the rules, and each call site file's level once computed (keyed by the call site's
// file name, a string literal that lives as long as the program).
struct VModule {
  std::atomic<bool> active{false};
  std::mutex mu;
  std::vector<VModuleRule> rules;
  std::unordered_map<const char*, int> levels;
};
VModule& vmodule() {
  static VModule v;
  return v;
}

std::mutex& sinkMutex() {
  static std::mutex mu;
  return mu;
}
Sink& sink() {
  static Sink s;
  return s;
}

std::string_view baseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// component-base's caller (zap's ShortCallerEncoder): the last directory and the file.
std::string_view shortCaller(std::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || slash == 0) {
    return path;
  }
  const size_t dir = path.rfind('/', slash - 1);
  return dir == std::string_view::npos ? path : path.substr(dir + 1);
}

int levelOfFile(VModule& vm, const char* file) {
  std::lock_guard<std::mutex> lock(vm.mu);
  if (const auto it = vm.levels.find(file); it != vm.levels.end()) {
    return it->second;
  }
  std::string name(baseName(file));
  if (const size_t dot = name.rfind('.'); dot != std::string::npos) {
    name.resize(dot);
  }
  int level = 0;
  for (const VModuleRule& rule : vm.rules) {
    if (fnmatch(rule.pattern.c_str(), name.c_str(), 0) == 0) {
      level = rule.level;
      break;
    }
  }
  vm.levels.emplace(file, level);
  return level;
}

// klog's text values: strings quoted as Go's %q, except that a string with a line break is
// written as-is, its lines indented by a tab between "<" and " >".
void appendString(std::string& out, std::string_view s) {
  if (s.find('\n') == std::string_view::npos) {
    out += util::quoteGo(s);
    return;
  }
  out += "<\n";
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find('\n', start);
    const bool last = end == std::string_view::npos;
    if (last) {
      end = s.size();
    }
    out += '\t';
    out += s.substr(start, end - start);
    out += '\n';
    start = end + 1;
  }
  out += " >";
}

void appendTextValue(std::string& out, const Field& f) {
  if (f.objectRef) {
    const std::string ns = f.value.value("namespace", std::string());
    out += util::quoteGo(ref(ns, f.value.value("name", std::string())));
  } else if (f.value.is_string()) {
    appendString(out, f.value.get_ref<const std::string&>());
  } else {
    out += f.value.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

void appendJson(std::string& out, const json& value) {
  out += value.dump(-1, ' ', false, json::error_handler_t::replace);
}

void appendInt(std::string& out, long long value, int width, char pad) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof(digits), value).ptr;
  const int n = static_cast<int>(end - digits);
  for (int i = n; i < width; ++i) {
    out += pad;
  }
  out.append(digits, end);
}

// klog's header: "Lmmdd hh:mm:ss.uuuuuu PID file:line] ".
void appendTextHeader(std::string& out, const Record& r) {
  const auto since = r.time.time_since_epoch();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(since - seconds);
  const std::time_t t = static_cast<std::time_t>(seconds.count());
  std::tm tm{};
  localtime_r(&t, &tm);
  out += static_cast<char>(r.severity);
  appendInt(out, tm.tm_mon + 1, 2, '0');
  appendInt(out, tm.tm_mday, 2, '0');
  out += ' ';
  appendInt(out, tm.tm_hour, 2, '0');
  out += ':';
  appendInt(out, tm.tm_min, 2, '0');
  out += ':';
  appendInt(out, tm.tm_sec, 2, '0');
  out += '.';
  appendInt(out, micros.count(), 6, '0');
  out += ' ';
  appendInt(out, r.pid, 7, ' ');
  out += ' ';
  out += baseName(r.where.file);
  out += ':';
  appendInt(out, r.where.line, 0, ' ');
  out += "] ";
}

// component-base's JSON: ts (epoch milliseconds), caller, msg, then "v" for info and warnings,
// the fields in call order, and "err" last for errors (zapr's order).
std::string formatJson(const Record& r) {
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(r.time.time_since_epoch()).count();
  std::string out = "{\"ts\":";
  appendJson(out, json(static_cast<double>(micros) / 1000.0));
  out += ",\"caller\":";
  std::string caller(shortCaller(r.where.file));
  caller += ':';
  caller += std::to_string(r.where.line);
  appendJson(out, json(caller));
  out += ",\"msg\":";
  appendJson(out, json(r.msg));
  if (r.severity != Severity::Error) {
    out += ",\"v\":";
    appendInt(out, r.v, 0, ' ');
  }
  for (const Field& f : r.fields) {
    out += ',';
    appendJson(out, json(f.key));
    out += ':';
    appendJson(out, f.value);
  }
  if (r.severity == Severity::Error && !r.err.empty()) {
    out += ",\"err\":";
    appendJson(out, json(r.err));
  }
  out += "}\n";
  return out;
}

void emit(Severity severity, int v, std::string_view msg, Fields fields, std::string_view err,
          const Location& where) {
  static const int pid = static_cast<int>(getpid());
  const Record record{.severity = severity,
                      .v = v,
                      .msg = msg,
                      .err = err,
                      .fields = fields,
                      .where = where,
                      .time = std::chrono::system_clock::now(),
                      .pid = pid};
  const std::string line = formatRecord(g_format.load(), record);
  std::lock_guard<std::mutex> lock(sinkMutex());
  if (sink()) {
    sink()(line);
    return;
  }
  std::fwrite(line.data(), 1, line.size(), stderr);
}

// klog.KObj's JSON: {"name":..,"namespace":..}, the namespace omitted when empty.
json refJson(const ObjectRef& r) {
  json out = json::object();
  out["name"] = r.name;
  if (!r.namespace_.empty()) {
    out["namespace"] = r.namespace_;
  }
  return out;
}

}  // namespace

std::string ObjectRef::str() const { return ref(namespace_, name); }

ObjectRef kobj(std::string_view ns, std::string_view name) {
  return ObjectRef{std::string(ns), std::string(name)};
}

Field::Field(std::string_view k, const ObjectRef& r) : key(k), value(refJson(r)), objectRef(true) {}

util::Result<Format> parseFormat(std::string_view text) {
  if (text == "text") return Format::Text;
  if (text == "json") return Format::Json;
  return util::invalidArgument("invalid argument \"" + std::string(text) +
                               "\" for \"--log-format\" flag: must be text or json");
}

void configure(Format format, int verbosity) {
  g_format = format;
  g_verbosity = verbosity;
}

util::Result<void> setVModule(std::string_view spec) {
  static constexpr std::string_view kSyntax =
      "syntax error: expect comma-separated list of filename=N";
  std::vector<VModuleRule> rules;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t end = spec.find(',', start);
    if (end == std::string_view::npos) {
      end = spec.size();
    }
    const std::string_view item = spec.substr(start, end - start);
    start = end + 1;
    if (item.empty()) {
      continue;  // a trailing comma, as klog
    }
    const size_t eq = item.find('=');
    if (eq == 0 || eq == std::string_view::npos || eq + 1 == item.size() ||
        item.find('=', eq + 1) != std::string_view::npos) {
      return util::invalidArgument(std::string(kSyntax));
    }
    const std::string_view number = item.substr(eq + 1);
    int level = 0;
    const auto parsed = std::from_chars(number.data(), number.data() + number.size(), level);
    if (parsed.ec != std::errc() || parsed.ptr != number.data() + number.size()) {
      return util::invalidArgument(std::string(kSyntax));
    }
    if (level < 0) {
      return util::invalidArgument("negative value for vmodule level");
    }
    if (level > 0) {  // a 0 changes nothing, as klog
      rules.push_back(VModuleRule{std::string(item.substr(0, eq)), level});
    }
  }
  VModule& vm = vmodule();
  std::lock_guard<std::mutex> lock(vm.mu);
  vm.active = !rules.empty();
  vm.rules = std::move(rules);
  vm.levels.clear();
  return {};
}

int verbosity() { return g_verbosity.load(); }

bool enabled(int level, Location where) {
  if (level <= g_verbosity.load(std::memory_order_relaxed)) {
    return true;
  }
  VModule& vm = vmodule();
  return vm.active.load(std::memory_order_relaxed) && level <= levelOfFile(vm, where.file);
}

void info(int level, std::string_view msg, Fields fields, Location where) {
  if (enabled(level, where)) emit(Severity::Info, level, msg, fields, {}, where);
}

void warning(std::string_view msg, Fields fields, Location where) {
  emit(Severity::Warning, 0, msg, fields, {}, where);
}

void error(std::string_view err, std::string_view msg, Fields fields, Location where) {
  emit(Severity::Error, 0, msg, fields, err, where);
}

std::string ref(std::string_view ns, std::string_view name) {
  if (ns.empty()) return std::string(name);
  std::string out(ns);
  out += '/';
  out += name;
  return out;
}

std::string formatRecord(Format format, const Record& record) {
  if (format == Format::Json) {
    return formatJson(record);
  }
  std::string out;
  appendTextHeader(out, record);
  out += renderText(record.msg, record.fields, record.err);
  out += '\n';
  return out;
}

std::string renderText(std::string_view msg, Fields fields, std::string_view err) {
  std::string out = util::quoteGo(msg);
  if (!err.empty()) {
    out += " err=";
    appendString(out, err);
  }
  for (const Field& f : fields) {
    out += ' ';
    out += f.key;
    out += '=';
    appendTextValue(out, f);
  }
  return out;
}

void setSink(Sink s) {
  std::lock_guard<std::mutex> lock(sinkMutex());
  sink() = std::move(s);
}

}  // namespace berth::log
