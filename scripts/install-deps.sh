#!/usr/bin/env bash
# Installs berth's build and test dependencies from Debian 12 packages; a no-op when all are present.
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  libboost-dev libssl-dev libcpprest-dev nlohmann-json3-dev libyaml-cpp-dev libspdlog-dev
  prometheus-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev
  python3-kubernetes openssl
)
# npm fetches kubectl/helm and the schema validator; a machine with Node.js from elsewhere has it.
command -v npm >/dev/null 2>&1 || packages+=(npm)
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
