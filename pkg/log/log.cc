#include "pkg/log/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdio>

namespace berth::log {
namespace {

using json = nlohmann::json;

std::atomic<int> g_verbosity{0};
std::atomic<Format> g_format{Format::Text};

// klog quotes strings and writes other values as JSON.
void appendValue(std::string& out, const json& value) {
  out += value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string renderJson(char level, int v, std::string_view msg, std::initializer_list<Field> fields,
                       std::string_view err) {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  double ts =
      static_cast<double>(std::chrono::duration_cast<std::chrono::microseconds>(now).count()) / 1e6;
  json line = json::object();
  line["ts"] = ts;
  if (level == 'I') line["v"] = v;
  if (level == 'W') line["level"] = "warning";
  line["msg"] = msg;
  if (level == 'E') line["err"] = err;
  for (const Field& f : fields) line[std::string(f.key)] = f.value;
  return line.dump(-1, ' ', false, json::error_handler_t::replace);
}

void emit(char level, int v, std::string_view msg, std::initializer_list<Field> fields,
          std::string_view err) {
  spdlog::level::level_enum spdLevel = level == 'E'   ? spdlog::level::err
                                       : level == 'W' ? spdlog::level::warn
                                                      : spdlog::level::info;
  if (g_format.load() == Format::Json) {
    spdlog::log(spdLevel, "{}", renderJson(level, v, msg, fields, err));
  } else {
    spdlog::log(spdLevel, "{}", renderText(msg, fields, err));
  }
}

}  // namespace

util::Result<Format> parseFormat(std::string_view text) {
  if (text == "text") return Format::Text;
  if (text == "json") return Format::Json;
  return util::invalidArgument("invalid argument \"" + std::string(text) +
                               "\" for \"--log-format\" flag: must be text or json");
}

void configure(Format format, int verbosity) {
  g_format = format;
  g_verbosity = verbosity;
  static bool once = [] {
    auto logger = std::make_shared<spdlog::logger>(
        "berth", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    spdlog::set_default_logger(logger);
    return true;
  }();
  (void)once;
  // Text: klog's header "Lmmdd hh:mm:ss.uuuuuu threadid] "; JSON lines carry their own fields.
  spdlog::set_pattern(format == Format::Json ? "%v" : "%L%m%d %H:%M:%S.%f %7t] %v");
  spdlog::set_level(spdlog::level::info);
}

int verbosity() { return g_verbosity.load(); }
bool enabled(int level) { return level <= g_verbosity.load(); }

void info(int level, std::string_view msg, std::initializer_list<Field> fields) {
  if (enabled(level)) emit('I', level, msg, fields, {});
}

void warning(std::string_view msg, std::initializer_list<Field> fields) {
  emit('W', 0, msg, fields, {});
}

void error(std::string_view err, std::string_view msg, std::initializer_list<Field> fields) {
  emit('E', 0, msg, fields, err);
}

std::string ref(std::string_view ns, std::string_view name) {
  if (ns.empty()) return std::string(name);
  std::string out(ns);
  out += '/';
  out += name;
  return out;
}

std::string renderText(std::string_view msg, std::initializer_list<Field> fields,
                       std::string_view err) {
  std::string out;
  appendValue(out, json(msg));
  if (!err.empty()) {
    out += " err=";
    appendValue(out, json(err));
  }
  for (const Field& f : fields) {
    out += ' ';
    out += f.key;
    out += '=';
    appendValue(out, f.value);
  }
  return out;
}

}  // namespace berth::log
