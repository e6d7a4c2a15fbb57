#include "cmd/berth/serving_flags.h"

#include <optional>
#include <string_view>

namespace berth::cmd {

std::vector<std::string> splitList(const std::string& value) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    const size_t comma = std::min(value.find(',', start), value.size());
    if (comma > start) out.push_back(value.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

void addServingFlags(FlagSet& flags, ServingSettings* s) {
  flags.section("secure serving");
  flags.addString("bind-address", &s->bindAddress,
                  "The IP address on which to listen for the --secure-port port");
  flags.addInt("secure-port", &s->securePort,
               "The port on which to serve HTTPS with authentication and authorization. If 0, "
               "don't serve HTTPS at all");
  flags.setTypeName("bind-address", "ip");
  flags.setDefaultText("bind-address", "0.0.0.0");
  flags.addString("cert-dir", &s->certDir,
                  "The directory where the TLS certs are located. If --tls-cert-file and "
                  "--tls-private-key-file are provided, this flag will be ignored");
  flags.addString("tls-cert-file", &s->tlsCertFile,
                  "File containing the default x509 Certificate for HTTPS (CA cert, if any, "
                  "concatenated after server cert); re-read when it changes. If HTTPS serving is "
                  "enabled, and --tls-cert-file and --tls-private-key-file are not provided, a "
                  "self-signed certificate and key are generated for the public address and saved "
                  "to the directory specified by --cert-dir");
  flags.addString("tls-private-key-file", &s->tlsKeyFile,
                  "File containing the default x509 private key matching --tls-cert-file");
  flags.addString("tls-min-version", &s->tlsMinVersion,
                  "Minimum TLS version supported. Possible values: VersionTLS10, VersionTLS11, "
                  "VersionTLS12, VersionTLS13");
  flags.addString("tls-cipher-suites", &s->tlsCipherSuites,
                  "Comma-separated list of cipher suites for the server (Go's names, e.g. "
                  "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256). If omitted, the default cipher suites "
                  "will be used");
  flags.setTypeName("tls-cipher-suites", "strings");
  flags.addRefused("tls-sni-cert-key", "namedCertKey",
                   "berth serves one certificate: use --tls-cert-file and --tls-private-key-file");
  flags.addInt("http2-max-streams-per-connection", &s->http2MaxStreams,
               "The limit that the server gives to clients for the maximum number of streams in "
               "an HTTP/2 connection. Zero means to use golang's default. berth serves HTTP/1.1, "
               "which has no streams: only 0 is accepted");
  flags.restrict("http2-max-streams-per-connection",
                 onlyValue("0",
                           "berth serves HTTP/1.1 only, so there are no HTTP/2 streams to "
                           "limit"));
  flags.addBool("permit-address-sharing", &s->permitAddressSharing,
                "If true, SO_REUSEADDR will be used when binding the port. This allows binding to "
                "wildcard IPs like 0.0.0.0 and specific IPs in parallel, and it avoids waiting for "
                "the kernel to release sockets in TIME_WAIT state. berth binds with SO_REUSEADDR "
                "either way, as Go's listeners do");
  flags.addBool("permit-port-sharing", &s->permitPortSharing,
                "If true, SO_REUSEPORT will be used when binding the port, which allows more than "
                "one instance to bind on the same address and port. Only false is accepted: "
                "berth binds without SO_REUSEPORT");
  flags.restrict("permit-port-sharing",
                 onlyFalse("berth binds without SO_REUSEPORT: give each instance its own "
                           "--secure-port"));

  flags.section("authentication");
  flags.addString("client-ca-file", &s->clientCaFile,
                  "If set, any request presenting a client certificate signed by one of the "
                  "authorities in the client-ca-file is authenticated with an identity "
                  "corresponding to the CommonName of the client certificate");
  flags.addString("authentication-kubeconfig", &s->authenticationKubeconfig,
                  "kubeconfig file pointing at the 'core' kubernetes server with enough rights to "
                  "create tokenreviews.authentication.k8s.io (default: the in-cluster "
                  "configuration, else --kubeconfig)");
  flags.addBool("authentication-skip-lookup", &s->authenticationSkipLookup,
                "If false, the authentication-kubeconfig will be used to lookup missing "
                "authentication configuration from the cluster");
  flags.addBool("authentication-tolerate-lookup-failure", &s->authenticationTolerateLookupFailure,
                "If true, failures to look up missing authentication configuration from the "
                "cluster are not considered fatal. Note that this can result in authentication "
                "that treats all requests as anonymous");
  flags.addDuration("authentication-token-webhook-cache-ttl", &s->tokenCacheTtl,
                    "The duration to cache responses from the webhook token authenticator");
  for (const char* name : {"requestheader-allowed-names", "requestheader-client-ca-file",
                           "requestheader-extra-headers-prefix", "requestheader-group-headers",
                           "requestheader-uid-headers", "requestheader-username-headers"}) {
    flags.addRefused(
        name, std::string_view(name) == "requestheader-client-ca-file" ? "string" : "strings",
        "berth takes an authenticating proxy's settings only from the requestheader-* keys of "
        "the kube-system/extension-apiserver-authentication ConfigMap, as the API server "
        "publishes them");
  }

  flags.section("authorization");
  flags.addString("authorization-kubeconfig", &s->authorizationKubeconfig,
                  "kubeconfig file pointing at the 'core' kubernetes server with enough rights to "
                  "create subjectaccessreviews.authorization.k8s.io (default: as "
                  "--authentication-kubeconfig)");
  flags.addString("authorization-always-allow-paths", &s->alwaysAllowPaths,
                  "A list of HTTP paths to skip during authorization, i.e. these are authorized "
                  "without contacting the 'core' kubernetes server");
  flags.setTypeName("authorization-always-allow-paths", "strings");
  flags.setDefaultText("authorization-always-allow-paths", "[/healthz,/readyz,/livez]");
  flags.addDuration("authorization-webhook-cache-authorized-ttl", &s->authorizedTtl,
                    "The duration to cache 'authorized' responses from the webhook authorizer");
  flags.addDuration("authorization-webhook-cache-unauthorized-ttl", &s->unauthorizedTtl,
                    "The duration to cache 'unauthorized' responses from the webhook authorizer");

  flags.section("deprecated");
  flags.addInt("port", &s->deprecatedPort,
               "DEPRECATED: use --secure-port; kept as its alias so that older manifests work, "
               "except that 0 picks a free port (and logs it) as it always did");
}

util::Result<void> resolveServingFlags(const FlagSet& flags, ServingSettings& s) {
  int64_t port = s.securePort;
  bool anyFreePort = false;
  if (flags.changed("port")) {
    s.warnings.push_back("--port is deprecated: use --secure-port, which it is an alias of");
    if (!flags.changed("secure-port")) {
      port = s.deprecatedPort;
      anyFreePort = port == 0;  // what --port 0 always meant in berth
    }
  }
  if (port < 0 || port > 65535) {
    return util::invalidArgument("--secure-port " + std::to_string(port) +
                                 " must be between 0 and 65535, inclusive. 0 for turning off "
                                 "secure port");
  }
  s.port = static_cast<uint16_t>(port);
  s.serve = port != 0 || anyFreePort;
  if (s.tlsCertFile.empty() != s.tlsKeyFile.empty()) {
    return util::invalidArgument(
        "--tls-cert-file and --tls-private-key-file must be given together");
  }
  auto version = serving::parseTlsVersion(s.tlsMinVersion);
  if (!version.ok()) return version.error();
  s.tls.minVersion = *version;
  auto ciphers = serving::cipherListOf(splitList(s.tlsCipherSuites));
  if (!ciphers.ok()) return ciphers.error();
  s.tls.cipherList = std::move(*ciphers);
  auto paths = serving::PathMatcher::create(splitList(s.alwaysAllowPaths));
  if (!paths.ok()) return paths.error();
  s.alwaysAllow = std::move(*paths);
  for (const auto& [name, ttl] :
       {std::pair{"authentication-token-webhook-cache-ttl", s.tokenCacheTtl},
        {"authorization-webhook-cache-authorized-ttl", s.authorizedTtl},
        {"authorization-webhook-cache-unauthorized-ttl", s.unauthorizedTtl}}) {
    if (ttl.count() < 0)
      return util::invalidArgument("--" + std::string(name) + ": must not be negative");
  }
  return {};
}

}  // namespace berth::cmd
