# berth's image: built on Debian 12 with the project's own scripts, run on Debian 12 slim with only
# the shared libraries the binary loads, as uid 65532 with no shell needed (exec-form entrypoint)
# and nothing written to the root filesystem, so it runs with readOnlyRootFilesystem.
#   scripts/build-image.sh            (podman on a machine without Docker, else docker build)
#   docker build -t berth:0.1.0 . && docker run --rm berth:0.1.0 version

FROM debian:bookworm AS build
# The commit `berth version` names (the build context has no .git).
ARG BERTH_REVISION=unknown
WORKDIR /src
# Dependencies first, so that source changes reuse this layer.
COPY scripts/install-deps.sh scripts/
RUN BERTH_DEPS=build scripts/install-deps.sh
COPY . .
# The release build CI tests (scripts/build-release.sh), without -Werror: a warning from another
# compiler version must not make the image unbuildable.
RUN scripts/build-release.sh /build -DBERTH_BUILD_BENCH=OFF -DBERTH_WERROR=OFF \
      "-DBERTH_REVISION=${BERTH_REVISION}" -- --target berth \
    && strip --strip-unneeded -o /berth /build/bin/berth

FROM debian:bookworm-slim
ARG BERTH_VERSION=0.1.0
ARG BERTH_REVISION=unknown
ARG BERTH_CREATED=unknown
# Where the source lives: scripts/build-image.sh passes git's origin URL when there is one.
ARG BERTH_SOURCE=unknown
# The repository declares no license yet, hence NOASSERTION (SPDX's word for "not stated").
LABEL org.opencontainers.image.title="berth" \
      org.opencontainers.image.description="A Kubernetes secondary scheduler" \
      org.opencontainers.image.source="${BERTH_SOURCE}" \
      org.opencontainers.image.version="${BERTH_VERSION}" \
      org.opencontainers.image.revision="${BERTH_REVISION}" \
      org.opencontainers.image.created="${BERTH_CREATED}" \
      org.opencontainers.image.licenses="NOASSERTION"
# The packages of the libraries in `ldd berth`: scripts/check-deploy.sh fails when this list and
# the binary disagree, so keep it exactly in step when berth links a new library.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libc6 libgcc-s1 libprometheus-cpp-core1.0 \
      libssl3 libstdc++6 \
      libyaml-cpp0.7 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /berth /usr/local/bin/berth
USER 65532:65532
EXPOSE 10259
ENTRYPOINT ["/usr/local/bin/berth"]
