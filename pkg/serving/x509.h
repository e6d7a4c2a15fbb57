#pragma once
// CertificatePool: a CA bundle that client certificates are verified against after the handshake,
// as k8s.io/apiserver's x509 authenticator verifies them (x509.VerifyOptions with the client-auth
// extended key usage). The server requests certificates without judging them; the pools can
// then change at any time (a reloaded --client-ca-file, a new
// extension-apiserver-authentication ConfigMap) without touching the TLS context.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/serving/server.h"
#include "pkg/util/result.h"

namespace berth::serving {

class CertificatePool {
 public:
  // Every certificate of a PEM bundle; fails, naming `what`, when one does not parse or there is
  // none.
  static util::Result<std::shared_ptr<const CertificatePool>> fromPem(std::string_view pem,
                                                                      std::string_view what);
  ~CertificatePool();
  CertificatePool(const CertificatePool&) = delete;
  CertificatePool& operator=(const CertificatePool&) = delete;

  // Nullopt when `peer`'s chain leads to a certificate of the pool and the leaf may authenticate
  // clients; otherwise why not, as Go's verifier words the common cases.
  std::optional<std::string> verify(const PeerCertificate& peer) const;

  struct Impl;

 private:
  explicit CertificatePool(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};
using CertificatePoolPtr = std::shared_ptr<const CertificatePool>;

}  // namespace berth::serving
