#!/usr/bin/env python3
"""The HTTP JSON API against a real reflectd (docs/HTTP.md), with a plain HTTP client.

Usage: api_test.py PATH/TO/reflectd

Starts the daemon in a temporary directory (ZeroMQ sockets on ipc://, the API on a free
loopback port), then checks every route, access rule and error of http/api.hpp and the limits
of http/server.hpp, and that the daemon still answers and stops cleanly afterwards. A second
daemon under security.insecure checks that a loopback client needs no token there. Exits 0
when every check passed, 1 with the failed checks listed.
"""

import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

FAILURES = []


def check(condition, what):
    if not condition:
        FAILURES.append(what)
        print("FAILED:", what, flush=True)


def sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


TOKENS = {
    # token: (agent_id, namespaces, max_sensitivity, admin)
    "admin-token": ("operator", '["*"]', "hyper", True),
    "reader-token": ("reader", "[alpha]", "low", False),
    "burst-token": ("burst", "[alpha]", "low", False),
}


def write_files(directory, insecure):
    lines = ["tokens:"]
    for token, (agent, namespaces, level, admin) in TOKENS.items():
        lines += [
            f"  - sha256: {sha256(token)}",
            f"    agent_id: {agent}",
            f"    namespaces: {namespaces}",
            f"    max_sensitivity: {level}",
            f"    admin: {'true' if admin else 'false'}",
        ]
    tokens = os.path.join(directory, "tokens.yaml")
    with open(tokens, "w", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    config = os.path.join(directory, "reflectd.yaml")
    sockets = {role: f"ipc://{directory}/{role[0]}" for role in ("ingest", "push", "notify", "control")}
    with open(config, "w", encoding="utf-8") as out:
        out.write(
            "bus:\n"
            + "".join(f"  {role}: [\"{endpoint}\"]\n" for role, endpoint in sockets.items())
            + "  max_message_bytes: 65536\n"
            f"store:\n  path: \"{directory}/reflectd.db\"\n"
            "daemon:\n  metrics_listen: \"\"\n"
            "http:\n  listen: \"127.0.0.1:0\"\n  max_connections: 8\n  header_timeout_s: 1\n"
            "  rate_per_s: 0.01\n  rate_burst: 100\n"
            f"security:\n  http_tokens_file: \"{tokens}\"\n  insecure: {'true' if insecure else 'false'}\n"
            "recall:\n  wordnet_dir: \"\"\n"
        )
    return config


class Daemon:
    def __init__(self, binary, insecure=False):
        self.dir = tempfile.TemporaryDirectory(prefix="reflectd-http-")
        config = write_files(self.dir.name, insecure)
        self.log_path = os.path.join(self.dir.name, "stderr.log")
        self.log = open(self.log_path, "w+", encoding="utf-8")
        self.process = subprocess.Popen([binary, "--config", config], stderr=self.log)
        self.base = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self.process.poll() is None:
            with open(self.log_path, encoding="utf-8") as log:
                match = re.search(r"http http://([0-9.:]+)/v1/", log.read())
            if match:
                self.base = "http://" + match.group(1)
                break
            time.sleep(0.05)
        if self.base is None:
            raise RuntimeError("reflectd did not get ready:\n" + self.text())

    def address(self):
        host, port = self.base[len("http://"):].rsplit(":", 1)
        return host, int(port)

    def text(self):
        with open(self.log_path, encoding="utf-8") as log:
            return log.read()

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=30)
        self.log.close()
        return code


def call(base, method, path, body=None, token=None, headers=None):
    """(status, parsed JSON body or text, headers) of one request."""
    data = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token is not None:
        request.add_header("Authorization", "Bearer " + token)
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, raw, got = response.status, response.read(), response.headers
    except urllib.error.HTTPError as error:
        status, raw, got = error.code, error.read(), error.headers
    try:
        return status, json.loads(raw), got
    except ValueError:
        return status, raw.decode(errors="replace"), got


def event(n, namespace="alpha", **extra):
    e = {"id": f"http-{namespace}-{n}", "kind": "observation", "namespace": namespace,
         "content": f"the http test observed lighthouse number {n}"}
    e.update(extra)
    return e


HERE = os.path.dirname(os.path.abspath(__file__))


def validate_openapi(doc):
    """The document through @seriousme/openapi-schema-validator (package-lock.json here)."""
    if not os.path.isdir(os.path.join(HERE, "node_modules", "@seriousme")):
        installed = subprocess.run(["npm", "ci", "--prefix", HERE, "--no-audit", "--no-fund"],
                                   stdout=subprocess.DEVNULL, check=False)
        check(installed.returncode == 0, "npm ci installs the OpenAPI validator")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as out:
        json.dump(doc, out)
    result = subprocess.run(["node", os.path.join(HERE, "validate_openapi.mjs"), out.name],
                            capture_output=True, text=True, check=False)
    os.unlink(out.name)
    check(result.returncode == 0, "openapi.json is a valid OpenAPI 3.1 document: " + result.stdout)


def check_openapi(base):
    status, doc, _ = call(base, "GET", "/v1/openapi.json")
    check(status == 200 and doc.get("openapi") == "3.1.0", "openapi.json is OpenAPI 3.1")
    validate_openapi(doc)
    paths = doc.get("paths", {})
    for route in ("/v1/events", "/v1/events/{id}", "/v1/status", "/v1/recall", "/v1/run"):
        check(route in paths, f"openapi lists {route}")
    check("get" not in paths.get("/v1/run", {}), "openapi: the admin command run is POST only")
    # Every GET operation the document names is served (a field it requires may be missing:
    # 400 names it), and none is an unknown route.
    for route, operations in paths.items():
        if "get" not in operations or "{" in route or route == "/v1/openapi.json":
            continue
        status, body, _ = call(base, "GET", route, token="admin-token")
        check(status in (200, 400) and isinstance(body, dict) and "ok" in body,
              f"GET {route} is served as the document says ({status})")


def check_authentication(base):
    status, body, headers = call(base, "GET", "/v1/status")
    check(status == 401, f"no token: 401 (got {status})")
    check("bearer token is required" in body.get("error", ""), "no token: the error says why")
    check(headers.get("WWW-Authenticate", "").startswith("Bearer"), "401 names the Bearer scheme")
    status, body, _ = call(base, "GET", "/v1/status", token="not-a-token")
    check(status == 401 and "not in security.http_tokens_file" in body["error"],
          "an unknown token: 401")
    status, body, _ = call(base, "GET", "/v1/status", headers={"Authorization": "Basic YTpi"})
    check(status == 401 and "Bearer" in body["error"], "another scheme: 401")
    status, body, _ = call(base, "GET", "/v1/status", token="admin-token",
                           headers={"Origin": "http://evil.example"})
    check(status == 403 and body["error"].startswith("origin:"), "a cross-site Origin: 403")


def check_ingest(base):
    status, body, _ = call(base, "POST", "/v1/events", event(1), token="admin-token")
    check(status == 200 and body["ok"] and body["results"][0]["status"] == "stored"
          and isinstance(body["results"][0]["seq"], int), f"one event stored: {body}")
    status, body, _ = call(base, "POST", "/v1/events", [event(1), event(2)], token="admin-token")
    check(status == 200 and [r["status"] for r in body["results"]] == ["duplicate", "stored"]
          and [r["index"] for r in body["results"]] == [0, 1], f"a batch: {body}")
    bad = {"kind": "observation", "namespace": "alpha"}
    status, body, _ = call(base, "POST", "/v1/events", [event(3), bad], token="admin-token")
    check(status == 400 and body["results"][0]["status"] == "stored"
          and body["results"][1]["status"] == "rejected"
          and body["results"][1]["error"].startswith("content"),
          f"a rejected event is named, the others stored: {body}")
    status, body, _ = call(base, "POST", "/v1/events", b"{not json", token="admin-token")
    check(status == 400 and body["ok"] is False and "error" in body, f"not JSON: 400 {body}")
    status, body, _ = call(base, "POST", "/v1/events", b"x" * 70000, token="admin-token")
    check(status == 413 and body["error"].startswith("body:"), f"a body over the limit: 413 ({status})")
    # Sensitivities for the reader's clearance (low): medium is one above, high two.
    for n, level in ((10, "medium"), (11, "high")):
        status, body, _ = call(base, "POST", "/v1/events", event(n, sensitivity=level),
                               token="admin-token")
        check(status == 200, f"a {level} event stored")
    status, body, _ = call(base, "POST", "/v1/events", event(1, namespace="beta"),
                           token="reader-token")
    check(status == 400 and "namespace" in body["results"][0]["error"],
          f"an event outside the token's namespaces is rejected: {body}")


def check_reads(base):
    status, body, _ = call(base, "GET", "/v1/status", token="reader-token")
    check(status == 200 and body["ok"], "GET /v1/status")
    check(body.get("http", {}).get("stored", -1) >= 0 or "events" in json.dumps(body),
          "status answers")
    status, body, _ = call(base, "GET", "/v1/events/http-alpha-1", token="reader-token")
    check(status == 200 and body["events"][0]["id"] == "http-alpha-1", f"GET /v1/events/ID: {status}")
    status, body, _ = call(base, "GET", "/v1/events/no-such-event", token="reader-token")
    check(status == 404, f"an unknown event: 404 ({status})")
    status, body, _ = call(base, "GET", "/v1/events/http-alpha-10", token="reader-token")
    check(status == 200 and body["events"][0].get("redacted") is True,
          f"one level above the clearance: redacted ({body})")
    status, body, _ = call(base, "GET", "/v1/events/http-alpha-11", token="reader-token")
    check(status == 404, f"two levels above the clearance: absent ({status})")
    found = False
    deadline = time.monotonic() + 20
    while not found and time.monotonic() < deadline:
        status, body, _ = call(base, "GET", "/v1/recall?q=lighthouse+number+2&namespace=alpha",
                               token="reader-token")
        check(status == 200, f"GET /v1/recall: {status}")
        found = any(r.get("id") == "http-alpha-2" for r in body.get("results", []))
        if not found:
            time.sleep(0.2)  # the search index trails the commit (search_index_lag_events)
    check(found, "recall over HTTP finds the event")
    status, body, _ = call(base, "POST", "/v1/recall", {"text": "lighthouse", "limit": 3},
                           token="admin-token")
    check(status == 200 and body["ok"], "POST /v1/recall")


def check_errors(base):
    status, body, _ = call(base, "POST", "/v1/run", {"job": "decay"}, token="reader-token")
    check(status == 403 and "admin" in body["error"], f"an admin command without admin: 403 {body}")
    status, body, _ = call(base, "GET", "/v1/recall?q=x&namespace=beta", token="reader-token")
    check(status == 403 and body["error"].startswith("namespace:"), f"another namespace: 403 {body}")
    status, body, _ = call(base, "GET", "/v1/recall?limit=many", token="reader-token")
    check(status == 400 and body["error"] == "limit: must be an integer", f"a bad parameter: {body}")
    status, body, _ = call(base, "POST", "/v1/recall", b"[1]", token="reader-token")
    check(status == 400 and body["error"] == "body: must be a JSON object", f"a bad body: {body}")
    status, body, _ = call(base, "POST", "/v1/recall", {"limit": "x"}, token="reader-token")
    check(status == 400 and body["ok"] is False, f"the command's own refusal: 400 {body}")
    status, body, _ = call(base, "POST", "/v1/nope", {}, token="reader-token")
    check(status == 404 and "known:" in body["error"], f"an unknown command: 404 {status}")
    status, body, _ = call(base, "GET", "/elsewhere", token="reader-token")
    check(status == 404, "a path outside /v1/: 404")
    status, body, headers = call(base, "GET", "/v1/run", token="admin-token")
    check(status == 405 and headers.get("Allow") == "POST", f"GET of an admin command: 405 {status}")
    status, body, headers = call(base, "DELETE", "/v1/status", token="admin-token")
    check(status == 405 and headers.get("Allow") == "GET, POST", "DELETE: 405 with Allow")
    status, body, _ = call(base, "POST", "/v1/run", {"job": "decay", "wait": True},
                           token="admin-token")
    check(status == 200 and body["ok"], f"an admin command with admin rights: {body}")


def check_rate_limit(base):
    statuses = [call(base, "GET", "/v1/status", token="burst-token")[0] for _ in range(100)]
    check(statuses == [200] * 100, "the burst is admitted")
    status, body, headers = call(base, "GET", "/v1/status", token="burst-token")
    # One token comes back every 100 s (rate_per_s 0.01), so however slowly the burst went (a
    # sanitizer build), the next request finds the bucket empty.
    retry = headers.get("Retry-After", "")
    check(status == 429 and retry.isdigit() and 1 <= int(retry) <= 100,
          f"past the burst: 429 with Retry-After ({status}, {retry})")
    status, _, _ = call(base, "GET", "/v1/status", token="reader-token")
    check(status == 200, "another token is not limited by the first")


def check_connection_limits(daemon):
    host, port = daemon.address()
    idle = [socket.create_connection((host, port)) for _ in range(8)]
    # The server has taken the eight when a request on one of them is answered.
    idle[0].sendall(b"GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n")
    idle[0].settimeout(10)
    check(idle[0].recv(12).startswith(b"HTTP/1.1 200"), "a connection under the limit is served")
    extra = socket.create_connection((host, port))
    extra.settimeout(10)
    answer = extra.recv(4096)
    check(answer.startswith(b"HTTP/1.1 503"), f"past http.max_connections: 503 ({answer[:40]})")
    for s in idle + [extra]:
        s.close()
    # The server sees those closes as it reads them: a request is served again once it has.
    deadline = time.monotonic() + 10
    while call(daemon.base, "GET", "/v1/status", token="admin-token")[0] == 503:
        check(time.monotonic() < deadline, "closed connections are no longer counted")
        time.sleep(0.05)
    # A header that trickles: closed after header_timeout_s (1 s) from its first byte.
    slow = socket.create_connection((host, port))
    slow.sendall(b"GET /v1/status HTTP/1.1\r\nHost: x\r\n")
    slow.settimeout(10)
    started = time.monotonic()
    closed = slow.recv(100) == b""
    check(closed and time.monotonic() - started < 5, "an unfinished request is cut off")
    slow.close()
    status, _, _ = call(daemon.base, "GET", "/v1/status", token="admin-token")
    check(status == 200, "the daemon answers after the limits were hit")


def main():
    binary = sys.argv[1]
    daemon = Daemon(binary)
    try:
        check_openapi(daemon.base)
        check_authentication(daemon.base)
        check_ingest(daemon.base)
        check_reads(daemon.base)
        check_errors(daemon.base)
        check_rate_limit(daemon.base)
        check_connection_limits(daemon)
    finally:
        code = daemon.stop()
        check(code == 0, f"SIGTERM stops the daemon with 0 ({code})")
        if FAILURES:
            print(daemon.text()[-4000:])
    insecure = Daemon(binary, insecure=True)
    try:
        status, body, _ = call(insecure.base, "GET", "/v1/status")
        check(status == 200 and body["ok"], "security.insecure: loopback needs no token")
        status, body, _ = call(insecure.base, "GET", "/v1/status", token="not-a-token")
        check(status == 401, "security.insecure: a wrong token is still refused")
    finally:
        insecure.stop()
    if FAILURES:
        print(f"{len(FAILURES)} checks failed")
        return 1
    print("every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
