#pragma once
// kube-scheduler's secure serving, authentication and authorization flags (k8s.io/apiserver's
// SecureServingOptions, DelegatingAuthenticationOptions and DelegatingAuthorizationOptions, with
// kube-scheduler's defaults), parsed and checked into what the serving port is started with.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "cmd/berth/flags.h"
#include "pkg/serving/auth.h"
#include "pkg/serving/tls.h"
#include "pkg/util/result.h"

namespace berth::cmd {

struct ServingSettings {
  // As given on the command line.
  std::string bindAddress = "0.0.0.0";
  int64_t securePort = 10259;
  int64_t deprecatedPort = 10259;
  std::string certDir;
  std::string tlsCertFile;
  std::string tlsKeyFile;
  std::string tlsMinVersion = "VersionTLS12";
  std::string tlsCipherSuites;  // comma-separated Go names
  std::string clientCaFile;
  std::string authenticationKubeconfig;
  bool authenticationSkipLookup = false;
  bool authenticationTolerateLookupFailure = true;  // kube-scheduler's default
  std::chrono::milliseconds tokenCacheTtl{10000};
  std::string authorizationKubeconfig;
  std::string alwaysAllowPaths = "/healthz,/readyz,/livez";
  std::chrono::milliseconds authorizedTtl{10000};
  std::chrono::milliseconds unauthorizedTtl{10000};
  int64_t http2MaxStreams = 0;        // HTTP/1.1 only: 0 is the one value
  bool permitAddressSharing = false;  // SO_REUSEADDR is always set
  bool permitPortSharing = false;     // SO_REUSEPORT is never set

  // Resolved by resolveServingFlags.
  uint16_t port = 10259;   // 0 with `serve`: any free port (--port 0)
  bool serve = true;       // false for --secure-port 0
  serving::TlsConfig tls;  // minimum version and cipher list; the certificate comes later
  serving::PathMatcher alwaysAllow;
  std::vector<std::string> warnings;  // to log once started (a deprecated flag used)
};

void addServingFlags(FlagSet& flags, ServingSettings* settings);
// Checks the values after parsing and fills in the resolved fields.
util::Result<void> resolveServingFlags(const FlagSet& flags, ServingSettings& settings);

// Splits a comma-separated list flag, dropping empty items (pflag's StringSlice).
std::vector<std::string> splitList(const std::string& value);

}  // namespace berth::cmd
