#pragma once
// Exec credential plugins, as client-go runs them: a kubeconfig user's `exec` names a command
// (aws eks get-token, gke-gcloud-auth-plugin, kubelogin) that prints an ExecCredential
// (client.authentication.k8s.io/v1 or v1beta1) holding a bearer token or a client certificate.
// The command runs with the kubeconfig's args, its env added to berth's environment, and
// KUBERNETES_EXEC_INFO describing the call; its stderr is berth's stderr, and its stdin is
// berth's only when it may prompt (interactiveMode allows it, stdin is a terminal, and the caller
// is interactive: never the daemon). The credential is cached until its expirationTimestamp and
// dropped when the server answers 401, so the next call runs the command again.

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/util/clock.h"
#include "pkg/util/result.h"

namespace berth::client {

enum class InteractiveMode { Never, IfAvailable, Always };

struct ExecConfig {
  std::string user;        // the kubeconfig user's name, for messages
  std::string apiVersion;  // client.authentication.k8s.io/v1 or .../v1beta1
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string installHint;  // shown when the command is not found
  InteractiveMode interactiveMode = InteractiveMode::IfAvailable;
  bool provideClusterInfo = false;
  // With provideClusterInfo, spec.cluster of KUBERNETES_EXEC_INFO (server, CA...) as JSON text.
  std::string clusterInfo;
};

struct ExecCredential {
  std::string token;
  std::string clientCertPem;
  std::string clientKeyPem;
  std::optional<util::SystemTime> expiry;  // none: valid until a 401
};

// The KUBERNETES_EXEC_INFO value: an ExecCredential of the configured version whose spec says
// whether the plugin may prompt, and the cluster when provideClusterInfo is set.
std::string execInfo(const ExecConfig& config, bool interactive);

// The plugin's standard output, checked as client-go checks it (the version it was asked for, a
// status with a token or a whole certificate/key pair, an RFC 3339 expiry).
util::Result<ExecCredential> decodeExecCredential(std::string_view output,
                                                  const ExecConfig& config);

// Runs the plugin once and decodes what it printed. `allowInteractive` is false in the daemon:
// then the plugin never gets a terminal, and interactiveMode Always is an error.
util::Result<ExecCredential> runExecPlugin(const ExecConfig& config, bool allowInteractive);

// The current credential of one exec user, shared by a client's requests. Thread-safe; one run at
// a time, so concurrent requests wait for the same run.
class ExecCredentialSource {
 public:
  // `clock` judges expiry and must outlive the source.
  ExecCredentialSource(ExecConfig config, bool allowInteractive,
                       util::Clock& clock = util::realClock());

  // The cached credential, or a fresh one when there is none or it has expired. An error names the
  // user and says what failed ("exec: executable aws not found" and the install hint).
  util::Result<ExecCredential> credential();
  // The server answered 401 to `token`: unless a newer credential is already cached, the next
  // credential() runs the plugin again.
  void invalidate(const std::string& token);

 private:
  const ExecConfig config_;
  const bool allow_interactive_;
  util::Clock& clock_;
  std::mutex mu_;
  std::optional<ExecCredential> cached_;  // guarded by mu_
};

}  // namespace berth::client
