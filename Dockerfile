# Sibyl in a container: `sibyl`, `sibyltool` and `sibyl-cli` on Debian bookworm.
#
#   docker build -t sibyl .
#   docker run -p 9160:9160 -v sibyl-data:/var/lib/sibyl sibyl
#
# The container's node is configured from /etc/sibyl/storage-conf.xml (the repository's
# conf/; mount your own over it) by docker/entrypoint.sh, which fills in the addresses, seeds
# and token from SIBYL_* environment variables. docker-compose.yml runs three nodes.

# ---- build ------------------------------------------------------------------------------
# The official Rust image on bookworm, so the binaries link against the same glibc as the
# runtime image below. It carries cc and make, which jemalloc's build needs.
ARG RUST_IMAGE=rust:1-bookworm
FROM ${RUST_IMAGE} AS build
WORKDIR /src
# The whole workspace, whatever its crates are (.dockerignore keeps target/ and var/ out).
COPY . .
RUN cargo build --release --locked --bins \
    && mkdir -p /out \
    && cp target/release/sibyl target/release/sibyltool target/release/sibyl-cli /out/

# ---- run --------------------------------------------------------------------------------
FROM debian:bookworm-slim
RUN groupadd --system --gid 999 sibyl \
    && useradd --system --uid 999 --gid sibyl --home-dir /var/lib/sibyl --shell /usr/sbin/nologin sibyl \
    && mkdir -p /var/lib/sibyl /etc/sibyl /usr/local/share/sibyl \
    && chown sibyl:sibyl /var/lib/sibyl
COPY --from=build /out/ /usr/local/bin/
COPY conf/ /etc/sibyl/
COPY docker/entrypoint.sh /usr/local/bin/sibyl-entrypoint
COPY docker/set-conf-elements.awk /usr/local/share/sibyl/
RUN chmod 0755 /usr/local/bin/sibyl-entrypoint
USER sibyl
WORKDIR /var/lib/sibyl
# Data, commit log, saved caches and the generated configuration.
VOLUME ["/var/lib/sibyl"]
# Thrift clients, internode traffic, admin interface (sibyltool).
EXPOSE 9160 7000 7199
# sibyl handles SIGTERM itself (flushes memtables, then exits), so it runs as PID 1.
STOPSIGNAL SIGTERM
ENTRYPOINT ["sibyl-entrypoint"]
CMD ["sibyl"]
