#!/usr/bin/env bash
# Builds berth's image from the Dockerfile: with `docker build` where a Docker daemon answers, else
# with Debian's podman and runc (no daemon), on a Debian 12 base made here by debootstrap from
# Debian's own packages, so no container registry is needed.
#   scripts/build-image.sh [TAG]     (default berth:VERSION; prints the image ID last)
# Env: BERTH_IMAGE_ARCHIVE=FILE also writes the image as an OCI archive (podman save).
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n 's/^project(berth VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
tag=${1:-berth:$version}
revision=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
# The source label names a repository URL, never a local path (a clone of a clone has one).
source_url=$(git remote get-url origin 2>/dev/null || true)
[[ "$source_url" == *://* || "$source_url" == git@* ]] || source_url=unknown
created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
args=(--build-arg "BERTH_VERSION=$version" --build-arg "BERTH_REVISION=$revision"
      --build-arg "BERTH_SOURCE=$source_url" --build-arg "BERTH_CREATED=$created")

if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  docker build "${args[@]}" -t "$tag" .
  docker image inspect --format '{{.Id}}' "$tag"
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
need=()
for p in podman runc debootstrap; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# crun (podman's default runtime) fails on these machines: cgroups are in hybrid mode and setting
# RLIMIT_NOFILE is refused. runc with cgroupfs and no default ulimits works. The settings go in a
# file of our own passed by CONTAINERS_CONF, never over the machine's containers.conf.
conf=$(mktemp -d)
trap 'rm -rf "$conf"' EXIT
cat >"$conf/containers.conf" <<'CONF'
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
CONF
export CONTAINERS_CONF=$conf/containers.conf
podman=($sudo podman --runtime runc)

# The Dockerfile's bases, debian:bookworm and debian:bookworm-slim, made once by debootstrap
# (minbase; a few minutes) and kept in podman's store; a base made by an older recipe (its
# berth.base label) is made again. Both tags name one tree, trimmed as Docker's slim variant is:
# no package caches or lists, documentation (but copyright files), man pages or translations, now
# or for packages installed later. It is the same Debian release as Docker Hub's images, not
# byte-identical to them.
recipe=2
base=docker.io/library/debian
for t in bookworm bookworm-slim; do
  made=$("${podman[@]}" image inspect --format '{{index .Labels "berth.base"}}' "$base:$t" 2>/dev/null) ||
    made=""
  [ "$made" = "$recipe" ] || { made=""; break; }
done
if [ -z "$made" ]; then
  root=$(mktemp -d)
  $sudo debootstrap --variant=minbase bookworm "$root" >/dev/null
  $sudo rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* \
    "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/*
  $sudo find "$root/usr/share/doc" -type f ! -name copyright -delete
  printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
    'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' \
    'path-exclude /usr/share/locale/*' | $sudo tee "$root/etc/dpkg/dpkg.cfg.d/slim" >/dev/null
  $sudo tar -C "$root" -c . |
    "${podman[@]}" import --change "LABEL berth.base=$recipe" - "$base:bookworm" >/dev/null
  "${podman[@]}" tag "$base:bookworm" "$base:bookworm-slim"
  $sudo rm -rf "$root"
fi

# The build stage fetches Debian packages: with podman it needs the host's network.
"${podman[@]}" build --network=host "${args[@]}" -t "$tag" . >&2
if [ -n "${BERTH_IMAGE_ARCHIVE:-}" ]; then
  rm -f "$BERTH_IMAGE_ARCHIVE"
  "${podman[@]}" save --format oci-archive -o "$BERTH_IMAGE_ARCHIVE" "$tag" >&2
fi
"${podman[@]}" image inspect --format '{{.Id}}' "$tag"
