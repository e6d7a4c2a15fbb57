#include "pkg/client/exec_credential.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <nlohmann/json.hpp>
#include <system_error>

#include "pkg/api/time.h"
#include "pkg/log/log.h"
#include "pkg/util/quote.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace berth::client {
namespace {

using nlohmann::json;
using util::Result;

// The most a plugin may print: a credential is a few KiB.
constexpr size_t kMaxExecOutputBytes = 1024 * 1024;

// client-go's help for a missing plugin, then the kubeconfig's own installHint.
constexpr std::string_view kInstallHelp =
    "\n\nIt looks like you are trying to use a client-go credential plugin that is not "
    "installed.\n\nTo learn more about this feature, consult the documentation available "
    "at:\n      "
    "https://kubernetes.io/docs/reference/access-authn-authz/authentication/"
    "#client-go-credential-plugins";

util::Error execError(std::string message) {
  return util::Error{util::ErrorCode::Unavailable, std::move(message)};
}

// Whether the plugin may prompt, as client-go decides it.
Result<bool> interactive(const ExecConfig& c, bool allowInteractive) {
  const bool terminal = isatty(STDIN_FILENO) == 1;
  switch (c.interactiveMode) {
    case InteractiveMode::Never:
      return false;
    case InteractiveMode::IfAvailable:
      return allowInteractive && terminal;
    case InteractiveMode::Always:
      if (!terminal) {
        return execError(
            "exec plugin cannot support interactive mode: standard input is not a terminal");
      }
      if (!allowInteractive) {
        return execError(
            "exec plugin cannot support interactive mode: standard input is unavailable: the "
            "daemon never prompts (set interactiveMode: Never or IfAvailable)");
      }
      return true;
  }
  return false;
}

// berth's environment, then the kubeconfig's env, then KUBERNETES_EXEC_INFO; a later value of a
// name replaces an earlier one (as Go's exec.Cmd with duplicate keys).
std::vector<std::string> pluginEnvironment(const ExecConfig& c, const std::string& info) {
  std::vector<std::pair<std::string, std::string>> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos) {
      continue;
    }
    vars.emplace_back(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  auto set = [&vars](const std::string& name, const std::string& value) {
    for (auto& v : vars) {
      if (v.first == name) {
        v.second = value;
        return;
      }
    }
    vars.emplace_back(name, value);
  };
  for (const auto& [name, value] : c.env) {
    set(name, value);
  }
  set("KUBERNETES_EXEC_INFO", info);
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [name, value] : vars) {
    out.push_back(name + "=" + value);
  }
  return out;
}

// Reads the pipe to its end (or past the limit).
Result<std::string> readAll(int fd) {
  std::string out;
  std::array<char, 4096> buf{};
  while (true) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return execError("exec: reading the plugin's output: " +
                       std::generic_category().message(errno));
    }
    if (n == 0) {
      return out;
    }
    out.append(buf.data(), static_cast<size_t>(n));
    if (out.size() > kMaxExecOutputBytes) {
      return execError("exec: the plugin printed more than " + std::to_string(kMaxExecOutputBytes) +
                       " bytes");
    }
  }
}

// Owns the spawn's file actions and the pipe ends still open in this process.
class Spawn {
 public:
  Spawn() { posix_spawn_file_actions_init(&actions_); }
  ~Spawn() {
    posix_spawn_file_actions_destroy(&actions_);
    closeFd(read_);
    closeFd(write_);
  }
  Spawn(const Spawn&) = delete;
  Spawn& operator=(const Spawn&) = delete;

  // Runs `argv` with `env`; stdout into a pipe, stdin /dev/null unless `interactive`, stderr
  // inherited. Returns posix_spawnp's error number (0 on success).
  int start(const std::vector<std::string>& argv, const std::vector<std::string>& env,
            bool interactive) {
    std::array<int, 2> fds{-1, -1};
    if (pipe2(fds.data(), O_CLOEXEC) != 0) {
      return errno;
    }
    read_ = fds[0];
    write_ = fds[1];
    posix_spawn_file_actions_adddup2(&actions_, write_, STDOUT_FILENO);
    if (!interactive) {
      posix_spawn_file_actions_addopen(&actions_, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    }
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const std::string& a : argv) {
      args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    std::vector<char*> envp;
    envp.reserve(env.size() + 1);
    for (const std::string& e : env) {
      envp.push_back(const_cast<char*>(e.c_str()));
    }
    envp.push_back(nullptr);
    const int rc = posix_spawnp(&pid_, args[0], &actions_, nullptr, args.data(), envp.data());
    closeFd(write_);  // the child holds the write end now; EOF comes when it exits
    return rc;
  }

  int readFd() const { return read_; }
  // Closes our end of the pipe, so a child still writing gets EPIPE rather than blocking.
  void closeRead() { closeFd(read_); }

  // The child's wait status.
  int wait() const {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  }

 private:
  static void closeFd(int& fd) {
    if (fd >= 0) {
      ::close(fd);
      fd = -1;
    }
  }

  posix_spawn_file_actions_t actions_{};
  pid_t pid_ = -1;
  int read_ = -1;
  int write_ = -1;
};

}  // namespace

std::string execInfo(const ExecConfig& config, bool interactive) {
  json spec = json::object();
  if (!config.clusterInfo.empty()) {
    spec["cluster"] = json::parse(config.clusterInfo, nullptr, /*allow_exceptions=*/false);
  }
  spec["interactive"] = interactive;
  return json{{"kind", "ExecCredential"}, {"apiVersion", config.apiVersion}, {"spec", spec}}.dump();
}

Result<ExecCredential> decodeExecCredential(std::string_view output, const ExecConfig& config) {
  const json doc = json::parse(output, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return execError("decoding stdout: not a JSON ExecCredential object");
  }
  const std::string version = doc.value("apiVersion", "");
  if (version != config.apiVersion) {
    return execError("exec plugin is configured to use API version " + config.apiVersion +
                     ", plugin returned version " + version);
  }
  if (doc.value("kind", "") != "ExecCredential") {
    return execError("decoding stdout: kind: must be \"ExecCredential\", not " +
                     util::quoteGo(doc.value("kind", "")));
  }
  const auto status = doc.find("status");
  if (status == doc.end() || status->is_null()) {
    return execError("exec plugin didn't return a status field");
  }
  if (!status->is_object()) {
    return execError("decoding stdout: status: must be an object");
  }
  ExecCredential out;
  struct StringField {
    const char* key;
    std::string* target;
  };
  for (const StringField& f :
       {StringField{"token", &out.token}, StringField{"clientCertificateData", &out.clientCertPem},
        StringField{"clientKeyData", &out.clientKeyPem}}) {
    const auto v = status->find(f.key);
    if (v == status->end() || v->is_null()) {
      continue;
    }
    if (!v->is_string()) {
      return execError(std::string("decoding stdout: status.") + f.key + ": must be a string");
    }
    *f.target = v->get<std::string>();
  }
  if (out.token.empty() && out.clientCertPem.empty() && out.clientKeyPem.empty()) {
    return execError("exec plugin didn't return a token or cert/key pair");
  }
  if (out.clientCertPem.empty() != out.clientKeyPem.empty()) {
    return execError(
        "exec plugin returned only certificate or key, not both (clientCertificateData and "
        "clientKeyData)");
  }
  if (const auto exp = status->find("expirationTimestamp");
      exp != status->end() && !exp->is_null()) {
    if (!exp->is_string()) {
      return execError("decoding stdout: status.expirationTimestamp: must be a string");
    }
    Result<api::Timestamp> t = api::parseTimestamp(exp->get<std::string>());
    if (!t.ok()) {
      return t.error().wrap("decoding stdout: status.expirationTimestamp");
    }
    out.expiry = util::SystemTime(std::chrono::microseconds(t->micros));
  }
  return out;
}

Result<ExecCredential> runExecPlugin(const ExecConfig& config, bool allowInteractive) {
  Result<bool> prompt = interactive(config, allowInteractive);
  if (!prompt.ok()) {
    return prompt.error();
  }
  std::vector<std::string> argv{config.command};
  argv.insert(argv.end(), config.args.begin(), config.args.end());
  Spawn spawn;
  const int rc = spawn.start(argv, pluginEnvironment(config, execInfo(config, *prompt)), *prompt);
  if (rc == ENOENT || rc == EACCES || rc == ENOTDIR) {
    std::string message = "exec: executable " + config.command + " not found";
    message += kInstallHelp;
    if (!config.installHint.empty()) {
      message += "\n\n" + config.installHint;
    }
    return execError(std::move(message));
  }
  if (rc != 0) {
    return execError("exec: starting " + config.command + ": " +
                     std::generic_category().message(rc));
  }
  Result<std::string> output = readAll(spawn.readFd());
  spawn.closeRead();
  const int status = spawn.wait();
  if (WIFSIGNALED(status)) {
    return execError("exec: executable " + config.command + " was killed by signal " +
                     std::to_string(WTERMSIG(status)));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    return execError("exec: executable " + config.command + " failed with exit code " +
                     std::to_string(WEXITSTATUS(status)));
  }
  if (!output.ok()) {
    return output.error();
  }
  return decodeExecCredential(*output, config);
}

ExecCredentialSource::ExecCredentialSource(ExecConfig config, bool allowInteractive,
                                           util::Clock& clock)
    : config_(std::move(config)), allow_interactive_(allowInteractive), clock_(clock) {}

Result<ExecCredential> ExecCredentialSource::credential() {
  std::lock_guard<std::mutex> lock(mu_);
  if (cached_ && (!cached_->expiry || clock_.systemNow() < *cached_->expiry)) {
    return *cached_;
  }
  Result<ExecCredential> fresh = runExecPlugin(config_, allow_interactive_);
  if (!fresh.ok()) {
    return fresh.error().wrap("user " + util::quoteGo(config_.user) + ": getting credentials");
  }
  log::info(2, "Obtained credentials from the exec plugin",
            {{"user", config_.user}, {"command", config_.command}});
  cached_ = *fresh;
  return fresh;
}

void ExecCredentialSource::invalidate(const std::string& token) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cached_ && cached_->token == token) {
    cached_.reset();
  }
}

}  // namespace berth::client
