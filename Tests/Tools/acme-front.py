#!/usr/bin/env python3
"""An HTTPS front in front of Debian's pebble 2.4, for tests: what Let's Encrypt does and pebble does not.

Every request is forwarded to pebble unchanged (method, path, query, body and headers, `Host` included: pebble
builds every URL it returns from `Host`, so its URLs name the front) and pebble's answer is returned. On top:

- `--rate N/SECONDS`: a token bucket on newOrder POSTs (capacity N, refilled continuously at N per SECONDS, like
  Let's Encrypt's limits). Over it: 429 `rateLimited` with `Retry-After` (whole seconds until a token) and a fresh
  `Replay-Nonce`; the order is not forwarded. A newOrder pebble refuses for its nonce (`badNonce`, which the client sends
  again) gives its token back: the CA checks the nonce before its limits.
- `--profiles name=description,...`: `meta.profiles` in the directory; a newOrder naming another profile is
  answered 400 `invalidProfile`.
- management under `/front/` (never forwarded): `GET /front/stats`, `POST /front/pause?seconds=S`,
  `POST /front/fail-orders?on=1|0`, `POST /front/delay?path=PREFIX&seconds=S`.

One line per request goes to stderr. Standard library only.
"""

import argparse
import base64
import http.client
import http.server
import json
import math
import signal
import ssl
import sys
import threading
import time
import urllib.parse

# Request and response headers that belong to one connection, not to the exchange (RFC 9110 §7.6.1).
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}
# The largest request body the front reads: far above any ACME request (a CSR is a few KiB).
MAX_BODY = 1 << 20


class State:
    """What the front counts and the knobs the tests turn, behind one lock."""

    def __init__(self, rate, profiles):
        self.lock = threading.Lock()
        self.rate = rate  # (capacity, seconds) or None
        self.tokens = float(rate[0]) if rate else 0.0
        self.refilled = time.monotonic()
        self.profiles = profiles  # {name: description} or None
        self.paused_until = 0.0
        self.fail_orders = False
        self.delays = {}  # path prefix -> seconds
        self.stats = {"newOrders": 0, "rateLimited": 0, "newAccounts": 0, "profiles": [], "replaces": [],
                      "requests": 0}

    def take_token(self):
        """Takes one newOrder token; returns None, or the whole seconds until one is there."""
        if not self.rate:
            return None
        capacity, seconds = self.rate
        per_second = capacity / seconds
        now = time.monotonic()
        self.tokens = min(float(capacity), self.tokens + (now - self.refilled) * per_second)
        self.refilled = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return None
        return max(1, math.ceil((1.0 - self.tokens) / per_second))

    def give_back_token(self):
        """Returns the token of a newOrder that made no order."""
        if self.rate:
            self.tokens = min(float(self.rate[0]), self.tokens + 1.0)


def decode_payload(body):
    """The JSON payload of a flattened JWS, or {} when it is none."""
    try:
        payload = json.loads(body)["payload"]
        if not payload:
            return {}
        decoded = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return decoded if isinstance(decoded, dict) else {}
    except (ValueError, KeyError, TypeError):
        return {}


class Front(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "acme-front"

    # Filled in by main().
    state = None
    upstream = None  # (host, port)
    upstream_context = None
    paths = {}  # "newOrder"/"newAccount"/"newNonce" -> path

    def log_message(self, format, *args):
        sys.stderr.write("%s %s\n" % (time.strftime("%H:%M:%S"), format % args))
        sys.stderr.flush()

    def do_GET(self):
        self.handle_any()

    def do_HEAD(self):
        self.handle_any()

    def do_POST(self):
        self.handle_any()

    def do_PUT(self):
        self.handle_any()

    def do_DELETE(self):
        self.handle_any()

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0 or length > MAX_BODY:
            self.answer(413, {"Content-Type": "text/plain"}, b"request body too large\n")
            return
        body = self.rfile.read(length) if length else b""
        url = urllib.parse.urlsplit(self.path)
        if url.path.startswith("/front/"):
            self.manage(url, body)
            return
        state = self.state
        with state.lock:
            state.stats["requests"] += 1
        is_order = self.command == "POST" and url.path == self.paths.get("newOrder")
        if is_order:
            if not self.admit_order(body):
                return
        elif self.command == "POST" and url.path == self.paths.get("newAccount"):
            with state.lock:
                state.stats["newAccounts"] += 1
        with state.lock:
            delay = max([s for prefix, s in state.delays.items() if url.path.startswith(prefix)], default=0)
        if delay > 0:
            self.log_message("holding %s for %s s", url.path, delay)
            time.sleep(delay)
        status, answer = self.forward(body)
        if is_order and status == 400 and b"badNonce" in answer:
            # Pebble rejected the nonce and made no order; the client sends it again. The CA checks the nonce before
            # its limits, so the token and the count go back.
            with state.lock:
                state.give_back_token()
                state.stats["newOrders"] -= 1
                state.stats["profiles"].pop()
                state.stats["replaces"].pop()

    def admit_order(self, body):
        """Answers a newOrder the front refuses and returns False, or counts it and returns True."""
        payload = decode_payload(body)
        state = self.state
        with state.lock:
            now = time.monotonic()
            if state.paused_until > now:
                state.stats["rateLimited"] += 1
                wait = max(1, math.ceil(state.paused_until - now))
                refusal = (429, "rateLimited", "paused by the test: new orders refused for %d s" % wait, wait)
            elif state.fail_orders:
                refusal = (500, "serverInternal", "the test made new orders fail", None)
            elif "profile" in payload and (state.profiles is None or payload["profile"] not in state.profiles):
                listed = ", ".join(sorted(state.profiles)) if state.profiles else "none"
                refusal = (400, "invalidProfile", "profile %r is not offered (offered: %s)" % (payload["profile"],
                                                                                             listed), None)
            else:
                wait = state.take_token()
                if wait is not None:
                    state.stats["rateLimited"] += 1
                    refusal = (429, "rateLimited", "too many new orders: retry in %d s" % wait, wait)
                else:
                    refusal = None
                    state.stats["newOrders"] += 1
                    state.stats["profiles"].append(payload.get("profile"))
                    state.stats["replaces"].append(payload.get("replaces"))
        if refusal is None:
            return True
        status, kind, detail, retry_after = refusal
        headers = {"Content-Type": "application/problem+json", "Cache-Control": "no-store"}
        nonce = self.fresh_nonce()
        if nonce:
            headers["Replay-Nonce"] = nonce
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        problem = {"type": "urn:ietf:params:acme:error:" + kind, "detail": detail, "status": status}
        self.answer(status, headers, json.dumps(problem).encode())
        return False

    def fresh_nonce(self):
        """A nonce pebble will accept, from a HEAD of its newNonce."""
        try:
            connection = self.connect()
            connection.request("HEAD", self.paths.get("newNonce", "/nonce-plz"), headers={"Host": self.headers.get(
                "Host", "%s:%d" % self.upstream)})
            response = connection.getresponse()
            response.read()
            connection.close()
            return response.getheader("Replay-Nonce")
        except OSError as error:
            self.log_message("no nonce from pebble: %s", error)
            return None

    def connect(self):
        return http.client.HTTPSConnection(self.upstream[0], self.upstream[1], timeout=60,
                                           context=self.upstream_context)

    def forward(self, body):
        headers = {}
        for name, value in self.headers.items():
            if name.lower() not in HOP_BY_HOP and name.lower() != "content-length":
                headers[name] = value
        if body or self.command in ("POST", "PUT"):
            headers["Content-Length"] = str(len(body))
        try:
            connection = self.connect()
            connection.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for name, value in headers.items():
                connection.putheader(name, value)
            connection.endheaders(body if body else None)
            response = connection.getresponse()
            answer = response.read()
            answer_headers = [(n, v) for n, v in response.getheaders() if n.lower() not in HOP_BY_HOP
                              and n.lower() != "content-length"]
            connection.close()
        except OSError as error:
            self.answer(502, {"Content-Type": "text/plain"}, ("pebble did not answer: %s\n" % error).encode())
            return 502, b""
        if self.command == "GET" and self.path.split("?")[0] == "/dir" and self.state.profiles is not None:
            try:
                directory = json.loads(answer)
                directory.setdefault("meta", {})["profiles"] = self.state.profiles
                answer = json.dumps(directory, indent=2).encode()
            except ValueError:
                pass
        self.answer(response.status, answer_headers, answer, reason=response.reason)
        return response.status, answer

    def manage(self, url, body):
        query = dict(urllib.parse.parse_qsl(url.query))
        state = self.state
        try:
            if self.command == "GET" and url.path == "/front/stats":
                with state.lock:
                    text = json.dumps(state.stats)
                self.answer(200, {"Content-Type": "application/json"}, text.encode())
                return
            if self.command == "POST" and url.path == "/front/pause":
                with state.lock:
                    state.paused_until = time.monotonic() + float(query["seconds"])
            elif self.command == "POST" and url.path == "/front/fail-orders":
                with state.lock:
                    state.fail_orders = query["on"] == "1"
            elif self.command == "POST" and url.path == "/front/delay":
                seconds = float(query["seconds"])
                with state.lock:
                    if seconds > 0:
                        state.delays[query["path"]] = seconds
                    else:
                        state.delays.pop(query["path"], None)
            else:
                self.answer(404, {"Content-Type": "text/plain"}, b"no such management route\n")
                return
        except (KeyError, ValueError) as error:
            self.answer(400, {"Content-Type": "text/plain"}, ("bad management request: %s\n" % error).encode())
            return
        self.answer(200, {"Content-Type": "text/plain"}, b"ok\n")

    def answer(self, status, headers, body, reason=None):
        self.log_request(status)
        self.send_response_only(status, reason)
        items = list(headers.items() if isinstance(headers, dict) else headers)
        if not any(name.lower() == "date" for name, _ in items):
            items.append(("Date", self.date_time_string()))
        for name, value in items:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class TLSServer(http.server.ThreadingHTTPServer):
    """Accepts in the main thread and does each TLS handshake in the connection's own thread."""

    daemon_threads = True
    context = None

    def finish_request(self, request, client_address):
        request.settimeout(60)
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError) as error:
            sys.stderr.write("%s TLS handshake failed: %s\n" % (time.strftime("%H:%M:%S"), error))
            return
        try:
            self.RequestHandlerClass(tls, client_address, self)
        finally:
            try:
                tls.close()
            except OSError:
                pass


def upstream_paths(upstream, context):
    """newOrder, newAccount and newNonce paths from pebble's directory."""
    connection = http.client.HTTPSConnection(upstream[0], upstream[1], timeout=10, context=context)
    connection.request("GET", "/dir")
    directory = json.loads(connection.getresponse().read())
    connection.close()
    return {key: urllib.parse.urlsplit(directory[key]).path for key in ("newOrder", "newAccount", "newNonce")}


def main():
    # A parent may have blocked SIGTERM (a test runner's threads do, and a spawned child inherits the mask): unblock
    # it, so a plain kill stops the front.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True, help="the port to listen on, on 127.0.0.1")
    parser.add_argument("--pebble-port", type=int, required=True, help="pebble's ACME port on 127.0.0.1")
    parser.add_argument("--cert", required=True, help="the certificate the front serves (pebble's cert.pem)")
    parser.add_argument("--key", required=True, help="its private key (pebble's key.pem)")
    parser.add_argument("--rate", help="N/SECONDS: the newOrder token bucket")
    parser.add_argument("--profiles", help="name=description,...: the directory's meta.profiles")
    arguments = parser.parse_args()

    rate = None
    if arguments.rate:
        count, seconds = arguments.rate.split("/")
        rate = (int(count), float(seconds))
        if rate[0] <= 0 or rate[1] <= 0:
            parser.error("--rate needs N/SECONDS with both above 0")
    profiles = None
    if arguments.profiles:
        profiles = dict(item.split("=", 1) if "=" in item else (item, item) for item in arguments.profiles.split(","))

    upstream = ("127.0.0.1", arguments.pebble_port)
    upstream_context = ssl.create_default_context(cafile=arguments.cert)
    for attempt in range(100):
        try:
            paths = upstream_paths(upstream, upstream_context)
            break
        except (OSError, ValueError):
            if attempt == 99:
                raise
            time.sleep(0.1)

    Front.state = State(rate, profiles)
    Front.upstream = upstream
    Front.upstream_context = upstream_context
    Front.paths = paths
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(arguments.cert, arguments.key)
    server = TLSServer(("127.0.0.1", arguments.port), Front)
    server.context = server_context
    sys.stderr.write("acme-front on 127.0.0.1:%d for pebble on %d, paths %s, rate %s, profiles %s\n"
                     % (arguments.port, arguments.pebble_port, paths, rate, profiles))
    sys.stderr.flush()
    server.serve_forever()


if __name__ == "__main__":
    main()
