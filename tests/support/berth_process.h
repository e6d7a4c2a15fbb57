#pragma once
// The real `berth` binary as a child process, for end-to-end tests: spawned with posix_spawn, its
// stdout and stderr appended to a log file the test polls for klog lines, stopped with SIGTERM or
// killed with SIGKILL, and reaped exactly once. Also the small pieces every such test needs: a
// kubeconfig for an embedded API server, reading `key="value"` fields from a text-format log line,
// and an HTTPS GET for the health and metrics endpoints.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/util/result.h"
#include "tests/support/certs.h"

namespace berth::test {

// Writes a kubeconfig whose only cluster is `serverUrl`, with no credentials.
util::Result<void> writeKubeconfig(const std::string& path, const std::string& serverUrl);

// The value of `key` in a klog text line (`key="quoted"` with JSON escapes, or `key=bare`);
// nullopt when the line has no such field.
std::optional<std::string> logField(std::string_view line, std::string_view key);

struct HttpReply {
  int code = 0;
  std::string body;
  std::string peerCommonName;   // the CN of the certificate the server presented
  std::string peerFingerprint;  // its SHA-256, hex
};
// The SHA-256 (hex) of the first certificate in `pem`, as HttpReply::peerFingerprint.
std::string certificateFingerprint(const std::string& pem);
// GET https://127.0.0.1:port/path with `Connection: close`, without verifying the server's
// certificate, sending `authorization` as the Authorization header when set and `headers`
// ("Name: value" each) after it, presenting `clientCertificate` when given; an error names the
// URL.
util::Result<HttpReply> httpsGet(uint16_t port, const std::string& path,
                                 const std::string& authorization = {},
                                 std::chrono::milliseconds timeout = std::chrono::seconds(10),
                                 const std::vector<std::string>& headers = {},
                                 const CertifiedKey* clientCertificate = nullptr);

class BerthProcess {
 public:
  // Starts `binary` with `args` (not including argv[0]); stdout and stderr are appended to
  // `logPath`. An error names the binary.
  static util::Result<std::unique_ptr<BerthProcess>> spawn(const std::string& binary,
                                                           const std::vector<std::string>& args,
                                                           std::string logPath);
  // Kills (SIGKILL) and reaps a process still running, so no test leaves one behind.
  ~BerthProcess();
  BerthProcess(const BerthProcess&) = delete;
  BerthProcess& operator=(const BerthProcess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& logPath() const { return log_path_; }

  // Reaps the process if it has exited; true while it runs.
  bool running();
  // The exit code once reaped (128 + signal number when a signal ended it).
  std::optional<int> exitCode() const { return exit_code_; }
  // Waits up to `limit` for the process to exit; its exit code, or nullopt if it still runs.
  std::optional<int> waitForExit(std::chrono::milliseconds limit);
  // SIGTERM, then waits up to `limit`: the exit code, or -1 when it did not exit in time (it is
  // then killed).
  int terminate(std::chrono::milliseconds limit = std::chrono::seconds(10));
  // SIGKILL and reap.
  void kill();

  // Everything the process has written so far.
  std::string log() const;
  // The last `maxChars` characters of the log, for failure messages.
  std::string logTail(size_t maxChars = 6000) const;
  // The first log line containing every one of `needles`, waiting up to `limit` for it to be
  // written; nullopt on timeout, or at once when the process has exited without writing it.
  std::optional<std::string> waitForLogLine(const std::vector<std::string>& needles,
                                            std::chrono::milliseconds limit);

 private:
  BerthProcess(pid_t pid, std::string logPath) : pid_(pid), log_path_(std::move(logPath)) {}
  void reaped(int status);

  pid_t pid_;
  std::string log_path_;
  std::optional<int> exit_code_;
};

using BerthProcessPtr = std::unique_ptr<BerthProcess>;

}  // namespace berth::test
