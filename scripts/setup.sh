#!/usr/bin/env bash
# Installs what building and testing aasa-server needs, only when it is missing.
# Usage: scripts/setup.sh            build and run dependencies
#        scripts/setup.sh --test     plus what the tests use (curl, openssl CLI, headless Chromium, testssl.sh,
#                                    pebble and pebble-challtestsrv for ACME, nginx with its stream
#                                    module as the shard router, PostgreSQL for the throwaway clusters the store's
#                                    tests start, Python jsonschema and cryptography, zbarimg to read the
#                                    pages' QR codes back)
set -euo pipefail

packages=(libmicrohttpd-dev libgnutls28-dev libssl-dev libcurl4-openssl-dev libpq-dev libqrencode-dev libldns-dev pkg-config)
if [[ "${1:-}" == "--test" ]]; then
    packages+=(curl openssl python3 iproute2 chromium testssl.sh pebble nginx libnginx-mod-stream postgresql python3-cryptography zbar-tools bind9 bind9-dnsutils)
fi

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}" >&2
    sudo=""
    if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ "${1:-}" == "--test" ]] && ! python3 -c 'import jsonschema' 2>/dev/null; then
    echo "setup: installing Python jsonschema" >&2
    python3 -m pip install --quiet jsonschema 2>/dev/null || python3 -m pip install --quiet --break-system-packages jsonschema
fi

if [[ "${1:-}" == "--test" ]] && ! python3 -c 'import yaml' 2>/dev/null; then
    echo "setup: installing Python PyYAML" >&2
    python3 -m pip install --quiet pyyaml 2>/dev/null || python3 -m pip install --quiet --break-system-packages pyyaml
fi

if [[ "${1:-}" == "--test" ]] && ! python3 -c 'import schemathesis' 2>/dev/null; then
    echo "setup: installing schemathesis (the tenant API's OpenAPI test)" >&2
    python3 -m pip install --quiet schemathesis 2>/dev/null || python3 -m pip install --quiet --break-system-packages schemathesis
fi

command -v swift >/dev/null || { echo "setup: the Swift toolchain (6.0 or later) is not on PATH" >&2; exit 1; }
