#!/usr/bin/env bash
# Builds the runtime image with podman (no Docker engine here) and proves it: it serves the sample
# domains over HTTPS from mounted config and certificates as a non-root user, reports healthy, and stops
# within five seconds with exit status 0. The base image is
# made locally with debootstrap, and the build stage's output is supplied as a build context (the Swift
# image cannot be pulled here); real users run plain `docker build .`.
#
# Usage: scripts/container-test.sh            (skips with exit 0 when podman cannot be installed)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "container-test: $*" >&2; }

if ! command -v podman >/dev/null || ! command -v debootstrap >/dev/null; then
    if [[ $(id -u) -eq 0 ]] && { apt-get update -qq >/dev/null 2>&1 || true; } \
        && apt-get install -y -qq podman buildah runc debootstrap >/dev/null 2>&1; then
        say "installed podman"
    else
        say "SKIP: podman is not installable here"
        exit 0
    fi
fi

scratch=$(mktemp -d)
cleanup() {
    podman --runtime runc rm -f aasa-container-test >/dev/null 2>&1 || true
    rm -rf "$scratch"
}
trap cleanup EXIT
printf '[containers]\ndefault_ulimits = []\n' > "$scratch/containers.conf"
export CONTAINERS_CONF="$scratch/containers.conf"

base=localhost/debian:bookworm-slim
if ! podman image exists "$base"; then
    say "making a local Debian base image with debootstrap"
    debootstrap --variant=minbase bookworm "$scratch/rootfs" >/dev/null
    tar -C "$scratch/rootfs" -c . | podman import - "$base" >/dev/null
    rm -rf "$scratch/rootfs"
fi

say "building the binary on the host (same Debian release as the runtime base)"
swift build -c release --product aasa-server --static-swift-stdlib >/dev/null
install -D -m 0755 .build/release/aasa-server "$scratch/stage/staging/usr/local/bin/aasa-server"
strip "$scratch/stage/staging/usr/local/bin/aasa-server"
install -d -m 0755 "$scratch/stage/staging/srv/site-config" "$scratch/stage/staging/srv/certs"

say "building the runtime stage"
podman --runtime runc build --isolation chroot --network host \
    --build-context build="$scratch/stage" --build-arg RUNTIME_IMAGE="$base" \
    -f Dockerfile -t localhost/aasa-server:test . >/dev/null 2>"$scratch/build.log" || {
    cat "$scratch/build.log" >&2
    exit 1
}
size=$(podman image inspect localhost/aasa-server:test --format '{{.Size}}')
base_size=$(podman image inspect "$base" --format '{{.Size}}')
say "image size: $((size / 1000000)) MB, of which $(((size - base_size) / 1000000)) MB on top of the base image"

# Sample config and dev certificates, readable by the container's non-root user.
cp -r site-config "$scratch/site-config"
.build/release/aasa-server certs dev --config "$scratch/site-config" --certs "$scratch/certs" >/dev/null
chmod -R a+rX "$scratch/site-config" "$scratch/certs"
chmod a+r "$scratch"/certs/*/privkey.pem

# Free ports chosen by the kernel: the container shares the host's network, where fixed ports may be taken.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
admin=$(free_port)
podman --runtime runc run -d --name aasa-container-test --network host \
    -e AASA_SERVER_HTTPS_PORT=$port -e AASA_SERVER_ADMIN_PORT=$admin \
    -v "$scratch/site-config:/srv/site-config:ro" -v "$scratch/certs:/srv/certs:ro" \
    localhost/aasa-server:test >/dev/null

for _ in $(seq 50); do
    curl -fsS "http://127.0.0.1:$admin/healthz" >/dev/null 2>&1 && break
    sleep 0.2
done

fail() { say "FAIL: $*"; podman --runtime runc logs aasa-container-test >&2 || true; exit 1; }
for domain in shop.example links.example; do
    body=$(curl -fsS --cacert "$scratch/certs/dev-ca/ca.pem" --resolve "$domain:$port:127.0.0.1" \
        "https://$domain:$port/.well-known/apple-app-site-association") || fail "no AASA for $domain"
    [[ "$body" == *'"applinks"'* ]] || fail "unexpected body for $domain: $body"
    say "served $domain over HTTPS from the container"
done
user=$(podman --runtime runc exec aasa-container-test id -u) || fail "cannot exec"
[[ "$user" == 10001 ]] || fail "runs as uid $user, not 10001"
podman --runtime runc exec aasa-container-test aasa-server healthcheck --port $admin >/dev/null || fail "healthcheck failed"
# Read the whole page before matching: under pipefail, `curl | grep -q` fails when grep stops reading first.
metrics=$(curl -fsS "http://127.0.0.1:$admin/metrics") || fail "no metrics page"
[[ "$metrics" == *'aasa_requests_total{domain="shop.example"'* ]] || fail "no request metrics for shop.example"

start=$(date +%s.%N)
podman --runtime runc stop -t 10 aasa-container-test >/dev/null
elapsed=$(python3 -c "import sys; print(round($(date +%s.%N) - $start, 2))")
status=$(podman --runtime runc inspect aasa-container-test --format '{{.State.ExitCode}}')
[[ "$status" == 0 ]] || fail "exit status $status after stop"
python3 -c "import sys; sys.exit(0 if $elapsed < 5 else 1)" || fail "stop took ${elapsed}s"
say "stopped in ${elapsed}s with exit status 0"
echo "container: 1 passed, 0 failed"
