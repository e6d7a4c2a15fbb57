#include "cmd/berth/flags.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <iostream>
#include <optional>
#include <sstream>

#include "pkg/util/duration.h"

namespace berth::cmd {

void FlagSet::addString(std::string name, std::string* target, std::string help) {
  flags_[std::move(name)] = Flag{target, std::move(help), *target};
}

void FlagSet::addBool(std::string name, bool* target, std::string help) {
  flags_[std::move(name)] = Flag{target, std::move(help), *target ? "true" : "false"};
}

void FlagSet::addInt(std::string name, int64_t* target, std::string help) {
  flags_[std::move(name)] = Flag{target, std::move(help), std::to_string(*target)};
}

void FlagSet::addUint(std::string name, uint64_t* target, std::string help) {
  flags_[std::move(name)] = Flag{target, std::move(help), std::to_string(*target)};
}

void FlagSet::addFloat(std::string name, double* target, std::string help) {
  std::ostringstream def;
  def << *target;
  flags_[std::move(name)] = Flag{target, std::move(help), def.str()};
}

void FlagSet::addDuration(std::string name, std::chrono::milliseconds* target, std::string help) {
  flags_[std::move(name)] = Flag{target, std::move(help), formatDuration(*target)};
}

std::string formatDuration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms == 0) return "0s";
  std::string out;
  if (ms >= 3600000) out += std::to_string(ms / 3600000) + "h", ms %= 3600000;
  if (ms >= 60000) out += std::to_string(ms / 60000) + "m", ms %= 60000;
  if (ms % 1000 == 0) {
    if (ms) out += std::to_string(ms / 1000) + "s";
  } else if (out.empty() && ms < 1000) {
    out += std::to_string(ms) + "ms";
  } else {
    std::ostringstream s;
    s << static_cast<double>(ms) / 1000.0 << "s";
    out += s.str();
  }
  return out;
}

util::Result<std::chrono::milliseconds> parseDuration(std::string_view text) {
  // No flag takes a negative duration, so a sign is refused rather than read as Go would.
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    return util::invalidArgument("time: invalid duration \"" + std::string(text) + "\"");
  }
  auto parsed = util::parseGoDuration(text);
  if (!parsed.ok()) return parsed.error();
  return std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
}

bool FlagSet::changed(const std::string& name) const {
  auto it = flags_.find(name);
  return it != flags_.end() && it->second.changed;
}

util::Result<void> FlagSet::set(const std::string& name, Flag& flag, const std::string& value) {
  auto bad = [&](const std::string& why) {
    return util::invalidArgument("invalid argument \"" + value + "\" for \"--" + name +
                                 "\" flag: " + why);
  };
  flag.changed = true;
  if (auto* s = std::get_if<std::string*>(&flag.target)) {
    **s = value;
  } else if (auto* b = std::get_if<bool*>(&flag.target)) {
    if (value == "true" || value == "1" || value == "t" || value == "T" || value == "TRUE") {
      **b = true;
    } else if (value == "false" || value == "0" || value == "f" || value == "F" ||
               value == "FALSE") {
      **b = false;
    } else {
      return bad("strconv.ParseBool: parsing \"" + value + "\": invalid syntax");
    }
  } else if (auto* i = std::get_if<int64_t*>(&flag.target)) {
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), **i);
    if (ec != std::errc() || p != value.data() + value.size()) return bad("not an integer");
  } else if (auto* u = std::get_if<uint64_t*>(&flag.target)) {
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), **u);
    if (ec != std::errc() || p != value.data() + value.size())
      return bad("not an unsigned integer");
  } else if (auto* f = std::get_if<double*>(&flag.target)) {
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), **f);
    if (ec != std::errc() || p != value.data() + value.size()) return bad("not a number");
  } else if (auto* d = std::get_if<std::chrono::milliseconds*>(&flag.target)) {
    auto parsed = parseDuration(value);
    if (!parsed.ok()) return bad(parsed.error().message);
    **d = *parsed;
  }
  return {};
}

util::Result<std::vector<std::string>> FlagSet::parse(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      help_ = true;
      continue;
    }
    if (a == "--") {
      positional.insert(positional.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (a.size() < 2 || a[0] != '-') {
      positional.push_back(a);
      continue;
    }
    if (a[1] != '-') {
      return util::invalidArgument("unknown shorthand flag: '" + a.substr(1, 1) + "' in " + a);
    }
    std::string name = a.substr(2);
    std::optional<std::string> value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    auto it = flags_.find(name);
    if (it == flags_.end()) return util::invalidArgument("unknown flag: --" + name);
    Flag& flag = it->second;
    if (!value) {
      if (std::holds_alternative<bool*>(flag.target)) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return util::invalidArgument("flag needs an argument: --" + name);
      }
    }
    if (auto r = set(name, flag, *value); !r.ok()) return r.error();
  }
  return positional;
}

CommandLine FlagSet::parseCommandLine(const std::vector<std::string>& args, std::string_view help,
                                      size_t maxArgs) {
  auto parsed = parse(args);
  if (helpRequested()) {
    std::cout << help << usages();
    return {.exitCode = 0};
  }
  if (!parsed.ok()) {
    std::cerr << "Error: " << parsed.error().message << "\n";
    return {.exitCode = kExitUsage};
  }
  if (parsed->size() > maxArgs) {
    std::cerr << "Error: unexpected argument \"" << (*parsed)[maxArgs] << "\"\n";
    return {.exitCode = kExitUsage};
  }
  return {.args = std::move(*parsed)};
}

std::string FlagSet::usages() const {
  std::vector<std::pair<std::string, std::string>> lines;
  size_t width = 0;
  for (const auto& [name, flag] : flags_) {
    std::string left = "      --" + name;
    std::string def;
    if (std::holds_alternative<std::string*>(flag.target)) {
      left += " string";
      if (!flag.defaultValue.empty()) def = " (default \"" + flag.defaultValue + "\")";
    } else if (std::holds_alternative<int64_t*>(flag.target)) {
      left += " int";
      if (flag.defaultValue != "0") def = " (default " + flag.defaultValue + ")";
    } else if (std::holds_alternative<uint64_t*>(flag.target)) {
      left += " uint";
      if (flag.defaultValue != "0") def = " (default " + flag.defaultValue + ")";
    } else if (std::holds_alternative<double*>(flag.target)) {
      left += " float32";
      if (flag.defaultValue != "0") def = " (default " + flag.defaultValue + ")";
    } else if (std::holds_alternative<std::chrono::milliseconds*>(flag.target)) {
      left += " duration";
      if (flag.defaultValue != "0s") def = " (default " + flag.defaultValue + ")";
    } else if (flag.defaultValue == "true") {
      def = " (default true)";
    }
    width = std::max(width, left.size());
    lines.emplace_back(std::move(left), flag.help + def);
  }
  lines.emplace_back("  -h, --help", "help for this command");
  width = std::max(width, lines.back().first.size());
  std::string out;
  for (const auto& [left, right] : lines) {
    out += left + std::string(width - left.size() + 3, ' ') + right + "\n";
  }
  return out;
}

}  // namespace berth::cmd
