#include "cmd/berth/flags.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <iostream>
#include <optional>
#include <sstream>

#include "cmd/berth/version.h"
#include "pkg/util/duration.h"

namespace berth::cmd {

ValueCheck onlyFalse(std::string why) {
  return [why = std::move(why)](const std::string& v) -> std::optional<std::string> {
    if (v == "false" || v == "0" || v == "f" || v == "F" || v == "FALSE" || v == "False") {
      return std::nullopt;
    }
    return why;
  };
}

ValueCheck onlyValue(std::string value, std::string why) {
  return [value = std::move(value),
          why = std::move(why)](const std::string& v) -> std::optional<std::string> {
    if (v == value) return std::nullopt;
    return why;
  };
}

void FlagSet::add(std::string name, Flag flag) {
  flag.section = current_section_;
  flags_[std::move(name)] = std::move(flag);
}

void FlagSet::addString(std::string name, std::string* target, std::string help) {
  add(std::move(name), Flag{.target = target, .help = std::move(help), .defaultValue = *target});
}

void FlagSet::addStringList(std::string name, std::vector<std::string>* target, std::string help) {
  add(std::move(name), Flag{.target = target, .help = std::move(help)});
}

void FlagSet::addBool(std::string name, bool* target, std::string help) {
  add(std::move(name),
      Flag{.target = target, .help = std::move(help), .defaultValue = *target ? "true" : "false"});
}

void FlagSet::addInt(std::string name, int64_t* target, std::string help) {
  add(std::move(name),
      Flag{.target = target, .help = std::move(help), .defaultValue = std::to_string(*target)});
}

void FlagSet::addUint(std::string name, uint64_t* target, std::string help) {
  add(std::move(name),
      Flag{.target = target, .help = std::move(help), .defaultValue = std::to_string(*target)});
}

void FlagSet::addFloat(std::string name, double* target, std::string help) {
  std::ostringstream def;
  def << *target;
  add(std::move(name), Flag{.target = target, .help = std::move(help), .defaultValue = def.str()});
}

void FlagSet::addDuration(std::string name, std::chrono::milliseconds* target, std::string help) {
  add(std::move(name),
      Flag{.target = target, .help = std::move(help), .defaultValue = formatDuration(*target)});
}

void FlagSet::addRefused(std::string name, std::string type, std::string why) {
  std::string help = "Not supported by berth: " + why;
  add(std::move(name),
      Flag{.target = Refused{std::move(type), std::move(why)}, .help = std::move(help)});
}

void FlagSet::section(std::string name) {
  if (std::find(sections_.begin(), sections_.end(), name) == sections_.end()) {
    sections_.push_back(name);
  }
  current_section_ = std::move(name);
}

void FlagSet::addShorthand(char letter, const std::string& name) {
  flags_.at(name).shorthand = letter;
  shorthands_[letter] = name;
}

void FlagSet::addAlias(std::string alias, const std::string& name) {
  flags_.at(name).aliases.push_back(alias);
  aliases_[std::move(alias)] = name;
}

void FlagSet::restrict(const std::string& name, ValueCheck check) {
  flags_.at(name).checks.push_back(std::move(check));
}

void FlagSet::setTypeName(const std::string& name, std::string type) {
  flags_.at(name).typeName = std::move(type);
}

void FlagSet::setDefaultText(const std::string& name, std::string text) {
  flags_.at(name).defaultText = std::move(text);
}

std::string formatDuration(std::chrono::milliseconds d) {
  return util::formatGoDuration(d.count());
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

std::optional<std::string> FlagSet::resolve(const std::string& name) const {
  if (flags_.contains(name)) return name;
  if (auto a = aliases_.find(name); a != aliases_.end()) return a->second;
  return std::nullopt;
}

util::Result<void> FlagSet::set(const std::string& name, Flag& flag, const std::string& value) {
  auto bad = [&](const std::string& why) {
    return util::invalidArgument("invalid argument \"" + value + "\" for \"--" + name +
                                 "\" flag: " + why);
  };
  if (const auto* refused = std::get_if<Refused>(&flag.target)) {
    return util::invalidArgument("--" + name + " is not supported by berth: " + refused->why);
  }
  for (const ValueCheck& check : flag.checks) {
    if (auto why = check(value)) return bad(*why);
  }
  flag.changed = true;
  if (auto* s = std::get_if<std::string*>(&flag.target)) {
    **s = value;
  } else if (auto* list = std::get_if<std::vector<std::string>*>(&flag.target)) {
    (*list)->push_back(value);
  } else if (auto* b = std::get_if<bool*>(&flag.target)) {
    if (value == "true" || value == "1" || value == "t" || value == "T" || value == "TRUE" ||
        value == "True") {
      **b = true;
    } else if (value == "false" || value == "0" || value == "f" || value == "F" ||
               value == "FALSE" || value == "False") {
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

util::Result<void> FlagSet::parseFlag(const std::string& canonical, const std::string& shown,
                                      std::optional<std::string> value,
                                      const std::vector<std::string>& args, size_t& i) {
  Flag& flag = flags_.at(canonical);
  const auto* refused = std::get_if<Refused>(&flag.target);
  const bool boolean =
      std::holds_alternative<bool*>(flag.target) || (refused && refused->type == "bool");
  if (!value) {
    if (boolean) {
      value = "true";
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return util::invalidArgument("flag needs an argument: " + shown);
    }
  }
  return set(canonical, flag, *value);
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
      // -v=4, -v 4 and -v4, as pflag's shorthands.
      auto it = shorthands_.find(a[1]);
      if (it == shorthands_.end()) {
        return util::invalidArgument("unknown shorthand flag: '" + a.substr(1, 1) + "' in " + a);
      }
      std::optional<std::string> value;
      if (a.size() > 2) value = a.substr(a[2] == '=' ? 3 : 2);
      if (auto r = parseFlag(it->second, "'" + a.substr(1, 1) + "' in " + a, value, args, i);
          !r.ok()) {
        return r.error();
      }
      continue;
    }
    std::string name = a.substr(2);
    std::optional<std::string> value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (name == "version" && !flags_.contains("version")) {
      // verflag's --version[=true|raw]: it takes a value only after "=".
      const std::string v = value.value_or("true");
      if (v != "true" && v != "false" && v != "raw") {
        return util::invalidArgument("invalid argument \"" + v +
                                     "\" for \"--version\" flag: berth reports its own version; "
                                     "use --version, --version=raw or --version=false");
      }
      version_ = v == "false" ? "" : v;
      continue;
    }
    auto canonical = resolve(name);
    if (!canonical) return util::invalidArgument("unknown flag: --" + name);
    if (auto r = parseFlag(*canonical, "--" + name, value, args, i); !r.ok()) return r.error();
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
  if (!version_.empty()) {
    if (version_ == "raw") {
      std::cout << versionJson(versionInfo()).dump() << "\n";
    } else {
      std::cout << versionLine() << "\n";
    }
    return {.exitCode = 0};
  }
  if (parsed->size() > maxArgs) {
    std::cerr << "Error: unexpected argument \"" << (*parsed)[maxArgs] << "\"\n";
    return {.exitCode = kExitUsage};
  }
  return {.args = std::move(*parsed)};
}

namespace {

std::string capitalized(std::string name) {
  if (!name.empty()) name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
  return name;
}

}  // namespace

std::string FlagSet::usageLines(const std::vector<std::pair<std::string, const Flag*>>& flags,
                                bool withGlobal) const {
  std::vector<std::pair<std::string, std::string>> lines;
  for (const auto& [name, flag] : flags) {
    std::string left =
        flag->shorthand ? std::string("  -") + flag->shorthand + ", --" + name : "      --" + name;
    std::string type;
    std::string def;
    if (std::holds_alternative<std::string*>(flag->target)) {
      type = "string";
      if (!flag->defaultValue.empty()) def = " (default \"" + flag->defaultValue + "\")";
    } else if (std::holds_alternative<int64_t*>(flag->target)) {
      type = "int";
      if (flag->defaultValue != "0") def = " (default " + flag->defaultValue + ")";
    } else if (std::holds_alternative<uint64_t*>(flag->target)) {
      type = "uint";
      if (flag->defaultValue != "0") def = " (default " + flag->defaultValue + ")";
    } else if (std::holds_alternative<double*>(flag->target)) {
      type = "float32";
      if (flag->defaultValue != "0") def = " (default " + flag->defaultValue + ")";
    } else if (std::holds_alternative<std::chrono::milliseconds*>(flag->target)) {
      type = "duration";
      if (flag->defaultValue != "0s") def = " (default " + flag->defaultValue + ")";
    } else if (std::holds_alternative<std::vector<std::string>*>(flag->target)) {
      type = "stringArray";
    } else if (const auto* refused = std::get_if<Refused>(&flag->target)) {
      if (refused->type != "bool") type = refused->type;
    } else if (flag->defaultValue == "true") {
      def = " (default true)";
    }
    if (!flag->typeName.empty()) type = flag->typeName;
    if (!type.empty()) left += " " + type;
    if (flag->defaultText)
      def = flag->defaultText->empty() ? "" : " (default " + *flag->defaultText + ")";
    std::string right = flag->help + def;
    for (const std::string& alias : flag->aliases) right += " (also --" + alias + ")";
    lines.emplace_back(std::move(left), std::move(right));
  }
  if (withGlobal) {
    lines.emplace_back("  -h, --help", "help for this command");
    lines.emplace_back("      --version version[=true]",
                       "--version, --version=raw prints version information and quits");
  }
  size_t width = 0;
  for (const auto& line : lines) width = std::max(width, line.first.size());
  std::string out;
  const std::string indent = "\n" + std::string(width + 3, ' ');
  for (const auto& [left, right] : lines) {
    std::string text = right;
    // A help text of several lines continues under its first line.
    for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1)) {
      text.replace(at, 1, indent);
      at += indent.size() - 1;
    }
    out += left + std::string(width - left.size() + 3, ' ') + text + "\n";
  }
  return out;
}

std::map<std::string, std::string> FlagSet::values() const {
  std::map<std::string, std::string> out;
  for (const auto& [name, flag] : flags_) {
    if (const auto* s = std::get_if<std::string*>(&flag.target)) {
      out[name] = **s;
    } else if (const auto* b = std::get_if<bool*>(&flag.target)) {
      out[name] = **b ? "true" : "false";
    } else if (const auto* i = std::get_if<int64_t*>(&flag.target)) {
      out[name] = std::to_string(**i);
    } else if (const auto* u = std::get_if<uint64_t*>(&flag.target)) {
      out[name] = std::to_string(**u);
    } else if (const auto* f = std::get_if<double*>(&flag.target)) {
      std::ostringstream text;
      text << **f;
      out[name] = text.str();
    } else if (const auto* d = std::get_if<std::chrono::milliseconds*>(&flag.target)) {
      out[name] = formatDuration(**d);
    } else if (const auto* list = std::get_if<std::vector<std::string>*>(&flag.target)) {
      std::string text = "[";
      for (const std::string& item : **list) text += (text.size() > 1 ? "," : "") + item;
      out[name] = text + "]";
    }
  }
  return out;
}

std::string FlagSet::usages() const {
  std::vector<std::pair<std::string, const Flag*>> all;
  for (const auto& [name, flag] : flags_) all.emplace_back(name, &flag);
  if (sections_.empty()) return usageLines(all, /*withGlobal=*/true);
  std::string out;
  for (const std::string& section : sections_) {
    std::vector<std::pair<std::string, const Flag*>> in;
    for (const auto& entry : all) {
      if (entry.second->section == section) in.push_back(entry);
    }
    out += "\n" + capitalized(section) + " flags:\n\n" + usageLines(in, /*withGlobal=*/false);
  }
  out += "\nGlobal flags:\n\n" + usageLines({}, /*withGlobal=*/true);
  return out;
}

}  // namespace berth::cmd
