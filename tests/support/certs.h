#pragma once
// Test PKI generated in memory with OpenSSL: a self-signed CA, a serving certificate for
// 127.0.0.1 and localhost, and client certificates whose subject is what kube-apiserver's x509
// authenticator reads (CN = user name, O = groups). Tests that exercise HTTPS, client-certificate
// and token authentication need no files and no fixed expiry dates; every call makes fresh EC
// P-256 keys, valid from an hour ago for a day.

#include <string>

namespace berth::test {

struct CertifiedKey {
  std::string certificatePem;
  std::string privateKeyPem;
};

struct TestPki {
  CertifiedKey ca;
  CertifiedKey server;  // SAN IP:127.0.0.1, DNS:localhost; signed by `ca`
  CertifiedKey client;  // CN=berth-test, O=system:masters; signed by `ca`
};

// Any OpenSSL failure throws std::runtime_error (GoogleTest reports it as a test failure).
TestPki makeTestPki();
// A client certificate signed by `ca`.
CertifiedKey issueClientCertificate(const CertifiedKey& ca, const std::string& commonName,
                                    const std::string& organization);
// A CA unrelated to any other: certificates it signs must be rejected.
CertifiedKey makeCa(const std::string& commonName);
// A serving certificate signed by `ca` with subject CN=commonName and the given subjectAltName
// ("IP:127.0.0.1,DNS:localhost"); none when empty, so the host is named only by the CN.
CertifiedKey issueServerCertificate(const CertifiedKey& ca, const std::string& commonName,
                                    const std::string& subjectAltNames);

}  // namespace berth::test
