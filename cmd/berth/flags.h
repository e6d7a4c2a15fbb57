#pragma once
// A command-line flag set in the style of spf13/pflag, which kube-scheduler uses: --name=value,
// --name value, -x=value, -x value and -xvalue for a flag with a shorthand, boolean flags with or
// without "=value", -h/--help, --version, and pflag's usage layout, optionally in kube-scheduler's
// named sections ("Misc flags:", "Logs flags:", ...).

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pkg/util/result.h"

namespace berth::cmd {

// The exit code after a usage error (an unknown command or flag, a bad value); every failure that
// cmd/berth reports with fail() ends with it too.
inline constexpr int kExitUsage = 2;

// A command line after FlagSet::parseCommandLine: either the command goes on with the positional
// arguments, or it returns `exitCode` now (0 after --help or --version, kExitUsage after a flag
// error).
struct CommandLine {
  std::optional<int> exitCode = std::nullopt;
  std::vector<std::string> args = {};
};

// Why a flag value is refused (nullopt: accepted); reported as pflag reports a bad value:
// `invalid argument "V" for "--name" flag: WHY`.
using ValueCheck = std::function<std::optional<std::string>(const std::string& value)>;

// A bool flag that berth has only at false: true is refused with `why`.
ValueCheck onlyFalse(std::string why);
// A flag that berth has only at `value`: anything else is refused with `why`.
ValueCheck onlyValue(std::string value, std::string why);

class FlagSet {
 public:
  void addString(std::string name, std::string* target, std::string help);
  // pflag's StringArray: every occurrence adds one value (--cluster a.json --cluster b.json).
  void addStringList(std::string name, std::vector<std::string>* target, std::string help);
  void addBool(std::string name, bool* target, std::string help);
  void addInt(std::string name, int64_t* target, std::string help);
  void addUint(std::string name, uint64_t* target, std::string help);
  void addFloat(std::string name, double* target, std::string help);
  // Go durations: "15s", "1m30s", "500ms", "2h".
  void addDuration(std::string name, std::chrono::milliseconds* target, std::string help);
  // A flag of upstream's that berth does not have: using it, with any value, is an error that
  // says `why` (and what to use instead). `bool` flags take no value, as pflag's.
  void addRefused(std::string name, std::string type, std::string why);

  // Flags added from now on belong to the --help section `name` (kube-scheduler's NamedFlagSets:
  // "misc", "secure serving", ...); sections print in the order first named.
  void section(std::string name);
  // -x for --name, as pflag's shorthand.
  void addShorthand(char letter, const std::string& name);
  // `alias` sets flag `name` too; it is listed under `name` in --help.
  void addAlias(std::string alias, const std::string& name);
  // Values of flag `name` that `check` refuses are a flag error.
  void restrict(const std::string& name, ValueCheck check);
  // pflag's word for the value in --help ("ip", "strings", "Level"); the C++ type's by default.
  void setTypeName(const std::string& name, std::string type);
  // What --help shows as the default, when it is not the target's initial value.
  void setDefaultText(const std::string& name, std::string text);

  // Parses args; positional arguments are returned. "unknown flag: --x" and friends on error.
  util::Result<std::vector<std::string>> parse(const std::vector<std::string>& args);
  bool changed(const std::string& name) const;
  // Every flag's current value as pflag's Value.String() prints it (true, 10s, [a,b]), by name:
  // what kube-scheduler's /flagz lists. Refused flags have no value and are left out.
  std::map<std::string, std::string> values() const;
  bool helpRequested() const { return help_; }
  // --version, --version=true or --version=raw was given: the value, else "".
  const std::string& versionRequested() const { return version_; }

  // What every command does with its arguments: parse; when -h/--help was seen (before any bad
  // flag: help wins over a later error), print `help` then usages() to stdout and end with 0; after
  // --version print the version and end with 0; on a flag error, or more than `maxArgs` positional
  // arguments, print "Error: MESSAGE" to stderr and end with kExitUsage; otherwise go on with the
  // positional arguments.
  [[nodiscard]] CommandLine parseCommandLine(const std::vector<std::string>& args,
                                             std::string_view help, size_t maxArgs = SIZE_MAX);

  // pflag's FlagUsages: one line per flag, descriptions aligned, defaults shown; with sections,
  // cliflag's PrintSections ("\nMisc flags:\n\n" and the section's flags), then "Global flags".
  std::string usages() const;

 private:
  struct Refused {
    std::string type;
    std::string why;
  };
  struct Flag {
    std::variant<std::string*, bool*, int64_t*, uint64_t*, double*, std::chrono::milliseconds*,
                 std::vector<std::string>*, Refused>
        target;
    std::string help = {};
    std::string defaultValue = {};
    std::string section = {};
    std::string typeName = {};
    std::optional<std::string> defaultText = std::nullopt;
    char shorthand = 0;
    std::vector<std::string> aliases = {};
    std::vector<ValueCheck> checks = {};
    bool changed = false;
  };
  void add(std::string name, Flag flag);
  util::Result<void> set(const std::string& name, Flag& flag, const std::string& value);
  // The flag named `name` (or an alias of one): its canonical name, or nullopt.
  std::optional<std::string> resolve(const std::string& name) const;
  // Parses one flag occurrence; `next` is the following argument, consumed when the flag takes
  // it as its value.
  util::Result<void> parseFlag(const std::string& canonical, const std::string& shown,
                               std::optional<std::string> value,
                               const std::vector<std::string>& args, size_t& i);
  std::string usageLines(const std::vector<std::pair<std::string, const Flag*>>& flags,
                         bool withGlobal) const;

  std::map<std::string, Flag> flags_;
  std::map<std::string, std::string> aliases_;
  std::map<char, std::string> shorthands_;
  std::vector<std::string> sections_;
  std::string current_section_;
  bool help_ = false;
  std::string version_;
};

// Go's time.Duration String() and ParseDuration, at millisecond precision.
std::string formatDuration(std::chrono::milliseconds d);
util::Result<std::chrono::milliseconds> parseDuration(std::string_view text);

}  // namespace berth::cmd
