# Build and run berth on Debian 12, with the same packages the project builds with.
FROM debian:12 AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config libboost-dev libssl-dev libcpprest-dev nlohmann-json3-dev \
      libyaml-cpp-dev libspdlog-dev prometheus-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBERTH_BUILD_BENCH=OFF \
    && cmake --build build -j"$(nproc)" --target berth

FROM debian:12-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libyaml-cpp0.7 libspdlog1.10 libfmt9 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/berth /usr/local/bin/berth
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/berth"]
