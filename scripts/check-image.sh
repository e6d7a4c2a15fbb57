#!/usr/bin/env bash
# Runs berth's image as the chart does and fails on the first thing that is wrong:
# - every library of the binary resolves inside the runtime stage (ldd there, not on the host);
# - `berth version` and `berth demo` run as uid 65532 on a read-only root filesystem, with the
#   image's own entrypoint (no shell);
# - the OCI labels name the version and the commit;
# then prints the image's size.
#   scripts/check-image.sh IMAGE     (podman, or docker where a Docker daemon answers)
set -euo pipefail
cd "$(dirname "$0")/.."
image=$1
version=$(sed -n 's/^project(berth VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  engine=(docker)
else
  # The same runtime settings as scripts/build-image.sh (see there why).
  conf=$(mktemp -d)
  trap 'rm -rf "$conf"' EXIT
  printf '[containers]\ndefault_ulimits = []\n[engine]\ncgroup_manager = "cgroupfs"\nruntime = "runc"\n' \
    >"$conf/containers.conf"
  export CONTAINERS_CONF=$conf/containers.conf
  engine=(podman --runtime runc)
fi
fail() { echo "check-image: $*" >&2; exit 1; }
run=("${engine[@]}" run --rm --read-only --user 65532:65532 --network none)

libs=$("${run[@]}" --entrypoint /usr/bin/ldd "$image" /usr/local/bin/berth) ||
  fail "ldd /usr/local/bin/berth failed inside $image"
if grep -q "not found" <<<"$libs"; then
  fail "libraries missing inside $image:"$'\n'"$(grep "not found" <<<"$libs")"
fi
echo "ldd inside the image: $(grep -c '=>' <<<"$libs") libraries, all found"

out=$("${run[@]}" "$image" version) || fail "berth version failed inside $image"
[[ "$out" == "berth v$version (commit "* ]] || fail "berth version printed: $out"
echo "berth version: $out"

labels=$("${engine[@]}" image inspect --format \
  '{{index .Labels "org.opencontainers.image.version"}} {{index .Labels "org.opencontainers.image.revision"}}' \
  "$image")
revision=${out##*(commit }
revision=${revision%%[,)]*}
[ "$labels" = "$version $revision" ] || fail "labels version/revision are \"$labels\", want \"$version $revision\""
echo "labels: org.opencontainers.image.version $version, revision $revision"

demo=$("${run[@]}" "$image" demo 2>&1) || fail "berth demo failed inside $image:"$'\n'"$demo"
grep -q "bound by berth" <<<"$demo" || fail "berth demo inside $image bound nothing:"$'\n'"$demo"
grep -q "batch/big-batch *Preempted: " <<<"$demo" ||
  fail "berth demo inside $image showed no preemption:"$'\n'"$demo"
echo "berth demo as uid 65532, read-only root: $(grep -c "bound by berth" <<<"$demo") pods bound"

size=$("${engine[@]}" image inspect --format '{{.Size}}' "$image")
echo "image size: $((size / 1024 / 1024)) MiB"
