# aasa-server container image.
#
#   docker build -t aasa-server .
#   docker run --rm -p 8443:8443 -v "$PWD/site-config:/srv/site-config:ro" -v "$PWD/certs:/srv/certs:ro" aasa-server
#
# Two stages: the official Swift image for Debian bookworm builds a static-stdlib binary into one staging
# folder; the runtime stage is debian:bookworm-slim with only the C libraries the binary links
# (libmicrohttpd, GnuTLS, OpenSSL, libcurl, libpq, libqrencode, ldns) and the system's CA certificates, which the ACME client trusts for
# the CA's HTTPS (`serve --acme`: mount /srv/certs writable by uid 10001 then). Base images are build arguments so air-gapped builds can use local
# copies (see scripts/container-test.sh).
ARG BUILD_IMAGE=swift:6.3-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${BUILD_IMAGE} AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmicrohttpd-dev libgnutls28-dev libssl-dev libcurl4-openssl-dev libpq-dev libqrencode-dev libldns-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product aasa-server --static-swift-stdlib \
    && strip .build/release/aasa-server \
    && install -D -m 0755 .build/release/aasa-server /staging/usr/local/bin/aasa-server \
    && install -d -m 0755 /staging/srv/site-config /staging/srv/certs

FROM ${RUNTIME_IMAGE}
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmicrohttpd12 libgnutls30 libssl3 libcurl4 libpq5 libqrencode4 libldns3 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin aasa
COPY --from=build /staging/ /
# Mount the configs and certificates here; both are watched and reloaded live.
VOLUME ["/srv/site-config", "/srv/certs"]
ENV AASA_SERVER_CONFIG=/srv/site-config \
    AASA_SERVER_CERTS=/srv/certs \
    AASA_SERVER_HTTPS_PORT=8443 \
    AASA_SERVER_ADMIN_PORT=9090
USER 10001:10001
EXPOSE 8443 9090
HEALTHCHECK --interval=15s --timeout=5s --start-period=5s --retries=3 CMD ["aasa-server", "healthcheck"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["aasa-server"]
CMD ["serve"]
