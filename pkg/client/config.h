#pragma once
// Client configuration: where the API server is and how berth proves who it is, read from a
// kubeconfig file (as kubectl and client-go read it) or from the pod's service account
// (in-cluster). File and environment access are injected, so these rules run without a filesystem.
// berth supports certificates, tokens and token files; a kubeconfig user that needs an exec or
// auth-provider plugin, basic authentication or impersonation is rejected, never half-applied.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/util/result.h"

namespace berth::client {

// Reads a whole file; the error message says why it could not (e.g. "No such file or directory").
using FileReader = std::function<util::Result<std::string>(const std::string& path)>;
// Returns an environment variable, empty when unset (as Go's os.Getenv).
using Env = std::function<std::string(const std::string& name)>;

inline constexpr std::string_view kServiceAccountTokenPath =
    "/var/run/secrets/kubernetes.io/serviceaccount/token";
inline constexpr std::string_view kServiceAccountCAPath =
    "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";

// "berth/VERSION", sent as User-Agent.
std::string defaultUserAgent();

struct RestConfig {
  std::string server;  // "https://host:port" or "http://...", possibly with a path prefix
  std::string caPem;   // trusted roots; empty means the system's roots
  bool insecureSkipTLSVerify = false;  // only when the kubeconfig says so (see warnings)
  std::string tlsServerName;           // name to verify instead of the server's host
  std::string clientCertPem;
  std::string clientKeyPem;
  std::string bearerToken;
  // When set, bearerToken was read from this file; the client re-reads it when it changes, since
  // bound service-account tokens rotate.
  std::string tokenFile;
  std::string userAgent = defaultUserAgent();
  float qps = 50;  // kube-scheduler's client defaults
  int burst = 100;
  // Things the caller should log once at startup (insecure TLS, an unreadable in-cluster CA...).
  std::vector<std::string> warnings;
};

// Reads the kubeconfig `text` found at `path` (used in messages and to resolve relative file
// references against its directory, as client-go does), for `context`, or its current-context
// when `context` is empty. Errors name the file and the field:
//   kubeconfig /x/config: contexts[1].context.cluster: cluster "foo" not found
util::Result<RestConfig> loadKubeconfig(std::string_view text, std::string_view path,
                                        std::string_view context, const FileReader& read);

// The configuration of a pod's service account: KUBERNETES_SERVICE_HOST/PORT, the token file
// (kept as tokenFile) and ca.crt. Fails with NotFound when not running in a cluster.
util::Result<RestConfig> inClusterConfig(const Env& getenv, const FileReader& read);

}  // namespace berth::client
