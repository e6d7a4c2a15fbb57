#pragma once
// A small command-line flag set in the style of spf13/pflag, which kube-scheduler uses:
// --name=value or --name value, boolean flags with no value, -h/--help, and pflag's usage layout.

#include <chrono>
#include <cstdint>
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
// arguments, or it returns `exitCode` now (0 after --help, kExitUsage after a flag error).
struct CommandLine {
  std::optional<int> exitCode = std::nullopt;
  std::vector<std::string> args = {};
};

class FlagSet {
 public:
  void addString(std::string name, std::string* target, std::string help);
  void addBool(std::string name, bool* target, std::string help);
  void addInt(std::string name, int64_t* target, std::string help);
  void addUint(std::string name, uint64_t* target, std::string help);
  void addFloat(std::string name, double* target, std::string help);
  // Go durations: "15s", "1m30s", "500ms", "2h".
  void addDuration(std::string name, std::chrono::milliseconds* target, std::string help);

  // Parses args; positional arguments are returned. "unknown flag: --x" and friends on error.
  util::Result<std::vector<std::string>> parse(const std::vector<std::string>& args);
  bool changed(const std::string& name) const;
  bool helpRequested() const { return help_; }

  // What every command does with its arguments: parse; when -h/--help was seen (before any bad
  // flag: help wins over a later error), print `help` then usages() to stdout and end with 0; on a
  // flag error, or more than `maxArgs` positional arguments, print "Error: MESSAGE" to stderr and
  // end with kExitUsage; otherwise go on with the positional arguments.
  [[nodiscard]] CommandLine parseCommandLine(const std::vector<std::string>& args,
                                             std::string_view help, size_t maxArgs = SIZE_MAX);

  // pflag's FlagUsages: one line per flag, descriptions aligned, defaults shown.
  std::string usages() const;

 private:
  struct Flag {
    std::variant<std::string*, bool*, int64_t*, uint64_t*, double*, std::chrono::milliseconds*>
        target;
    std::string help;
    std::string defaultValue;
    bool changed = false;
  };
  util::Result<void> set(const std::string& name, Flag& flag, const std::string& value);

  std::map<std::string, Flag> flags_;
  bool help_ = false;
};

// Go's time.Duration String() and ParseDuration, at millisecond precision.
std::string formatDuration(std::chrono::milliseconds d);
util::Result<std::chrono::milliseconds> parseDuration(std::string_view text);

}  // namespace berth::cmd
