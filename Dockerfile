# The Cosmos DB emulator in a container.
#
#   docker build -t cosmos-emulator .
#   docker run --rm -p 8081-8084:8081-8084 -v cosmos-data:/data cosmos-emulator
#
# The global endpoint is port 8081, region i is 8082+i (three regions by default). Clients in
# other containers reach it by a name given with COSMOS_EMULATOR_ADVERTISE_HOST (for example
# the compose service name); the default advertises 127.0.0.1, right for published ports.

FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p cosmos-emulator --bin cosmos-emulator \
    && cp target/release/cosmos-emulator /cosmos-emulator

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --no-create-home emulator \
    && mkdir /data && chown emulator /data
COPY --from=build /cosmos-emulator /usr/local/bin/cosmos-emulator
USER emulator
VOLUME /data
EXPOSE 8081 8082 8083 8084
HEALTHCHECK --interval=5s --timeout=3s --start-period=30s --retries=3 \
    CMD curl -fsS http://127.0.0.1:8081/_emulator/ready || exit 1
# SIGTERM (docker stop) lets requests in flight finish, then the emulator exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["cosmos-emulator"]
CMD ["--host", "0.0.0.0", "--port", "8081", "--data-dir", "/data"]
