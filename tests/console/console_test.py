#!/usr/bin/env python3
"""The web console in a real browser: the server-mode refund scenario, driven by clicks.

Real processes on 127.0.0.1, every port picked by the process that listens:
payments-provider, `reckon server --http`, two refund-workers and reckon-test-worker. Tokens
come from the CLI (`reckon auth token create`): oscar (operator) starts runs through the HTTP
API with a bearer token, then sees signal and cancel forms but no decision buttons in the
console; rita (reader) logs in and sees no action buttons at all; ada
(approver) logs in and, by clicking:

  - approves one refund above $100 in the inbox and watches it complete on its run page
    (the page follows the run with the /watch long poll);
  - sees the server refuse a decision whose intent hash is not the operation's (the page's
    hash is altered in the DOM first, as if the intent had changed) and the page say so;
  - denies another;
  - resolves an operation that needs a person through the form, with its confirmation step;
  - filters and pages the runs list, and checks an MCP catalog on the contracts page.

Then the provider's ledger must hold one refund per approved payment and none for the denied
one. Every field a person controls (workflow inputs, notes, deny reasons, signal payloads and
names, cancel reasons, filters, an MCP catalog, workflow ids) carries script payloads that
would set window.__xss; it must stay undefined, no element may be injected, and the text must
show literally. The browser's log must hold no error (the only ones allowed are the network
lines of answers the test provokes on purpose: 401 before logging in, 409 for the changed
intent). Also over plain HTTP: a cookie-authenticated POST without X-CSRF-Token is refused
403, an unknown run is 404 JSON, a 2 MiB body is 413.

Screenshots of every page go to <out-dir>/console-screenshots/. Exit code 0 when everything
holds; 1 with the reason (and the processes' logs) otherwise.

Usage: console_test.py --reckon PATH --payments-provider PATH --refund-worker PATH
                       --test-worker PATH --source-dir DIR --out-dir DIR
"""

import argparse
import base64
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import traceback
import urllib.parse

try:
    from selenium import webdriver
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:  # pragma: no cover - depends on the machine
    print("console_test: this python (%s) cannot import selenium; install the Debian packages "
          "python3-selenium, chromium and chromium-driver (cmake/debian-packages.txt, ./dev "
          "installs them)" % sys.executable, file=sys.stderr)
    sys.exit(1)

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT_S = 30

# Each payload would set window.__xss if it ever reached the page as markup or code.
XSS = [
    '<script>window.__xss="script"</script>',
    '"><img src=x onerror="window.__xss=\'img\'">',
    "'><svg onload=window.__xss='svg'>",
    '<iframe srcdoc="<script>parent.__xss=1</script>"></iframe>',
    'javascript:window.__xss="href"//',
    '<a href="javascript:window.__xss=1">link</a>',
]
XSS_ALL = " ".join(XSS)
# Fragments with no quote in them: they read the same in plain text and inside JSON text.
XSS_MARKS = ["<script>window.__xss=", "<img src=x onerror=", "<svg onload=window.__xss=",
             "<iframe srcdoc="]

# Network lines of the browser log that the test provokes on purpose.
ALLOWED_NETWORK = [
    re.compile(r"/api/v1/session - Failed to load resource: the server responded with a status "
               r"of 401"),  # the page asks whether a session exists before anyone logged in
    re.compile(r"/operations/[^ ]+/approve - Failed to load resource: the server responded with "
               r"a status of 403"),
    re.compile(r"/api/v1/runs/no-such-run - Failed to load resource: the server responded with a "
               r"status of 404"),
    # A payload typed into the runs filters: the server may refuse it as an invalid type or id.
    re.compile(r"/api/v1/runs\?[^ ]*%3C[^ ]* - Failed to load resource: the server responded "
               r"with a status of 400"),
]


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def wait_for(predicate, what, timeout=WAIT_S, interval=0.05):
    """Polls predicate() until it returns something truthy; returns it, or raises Failure."""
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        try:
            value = predicate()
            if value:
                return value
        except (StaleElementReferenceException, Failure) as error:
            last_error = error
        if time.monotonic() >= deadline:
            raise Failure("timed out after %d s waiting for %s%s" %
                          (timeout, what, " (last: %s)" % last_error if last_error else ""))
        time.sleep(interval)


# --- processes ----------------------------------------------------------------------------------

class Processes:
    """Every process the test starts; stop() ends them (SIGTERM, then SIGKILL after 10 s)."""

    def __init__(self, work):
        self.work = work
        self.running = []  # (name, Popen)

    def start(self, name, argv, env=None):
        out = open(os.path.join(self.work, name + ".out"), "wb")
        err = open(os.path.join(self.work, name + ".log"), "wb")
        full_env = dict(os.environ)
        full_env.update(env or {})
        process = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                   env=full_env)
        out.close()
        err.close()
        self.running.append((name, process))
        return process

    def check_alive(self):
        for name, process in self.running:
            if process.poll() is not None:
                raise Failure("%s exited with %s; its log:\n%s" %
                              (name, process.returncode, self.log(name)))

    def log(self, name, tail=4000):
        try:
            with open(os.path.join(self.work, name + ".log"), "rb") as f:
                return f.read()[-tail:].decode("utf-8", "replace")
        except OSError:
            return ""

    def stop(self):
        for _, process in reversed(self.running):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for _, process in reversed(self.running):
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def read_file(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def run_cli(reckon, args, work, name):
    """Runs `reckon args...`; raises Failure naming its stderr unless it exits 0."""
    err_path = os.path.join(work, name + ".err")
    with open(err_path, "wb") as err:
        done = subprocess.run([reckon] + args, stdout=subprocess.PIPE, stderr=err, timeout=60,
                              stdin=subprocess.DEVNULL)
    check(done.returncode == 0, "`reckon %s` exited %d: %s" %
          (" ".join(args[:4]), done.returncode, read_file(err_path)))
    return done.stdout.decode()


# --- HTTP ---------------------------------------------------------------------------------------

class Reply:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.text = body.decode("utf-8", "replace")
        try:
            self.json = json.loads(self.text) if self.text else None
        except ValueError:
            self.json = None

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def error_code(self):
        if isinstance(self.json, dict) and isinstance(self.json.get("error"), dict):
            return self.json["error"].get("code")
        return None

    def __repr__(self):
        return "HTTP %d %s" % (self.status, self.text[:500])


def http_call(port, method, path, body=None, headers=None, raw=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        all_headers = {"Accept": "application/json"}
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            all_headers["Content-Type"] = "application/json"
        all_headers.update(headers or {})
        connection.request(method, path, body=data, headers=all_headers)
        response = connection.getresponse()
        return Reply(response.status, response.getheaders(), response.read())
    finally:
        connection.close()


def bearer(token):
    return {"Authorization": "Bearer " + token}


# --- the browser --------------------------------------------------------------------------------

class Browser:
    """Headless Chromium through chromedriver, with its log kept and checked."""

    def __init__(self, base_url, shots_dir):
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--window-size=1360,900", "--disable-extensions", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-default-apps", "--disable-sync", "--metrics-recording-only",
                    "--lang=en-US"]:
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        self.base = base_url
        self.shots = shots_dir
        self.log = []  # every browser log entry seen

    def quit(self):
        self.driver.quit()

    def go(self, hash_path):
        self.driver.get(self.base + hash_path)

    def find(self, css, root=None):
        return (root or self.driver).find_element(By.CSS_SELECTOR, css)

    def find_all(self, css, root=None):
        return (root or self.driver).find_elements(By.CSS_SELECTOR, css)

    def wait_css(self, css, what=None, timeout=WAIT_S):
        return wait_for(lambda: (self.find_all(css) or [None])[0], what or css, timeout)

    def wait_gone(self, css, what=None):
        wait_for(lambda: not self.find_all(css), what or ("%s to disappear" % css))

    def text(self, css):
        return self.find(css).text

    def main_text(self):
        return self.driver.execute_script("return document.getElementById('main').textContent")

    def set_value(self, element, value):
        """Types `value` into a text field (send_keys: real key events)."""
        element.clear()
        element.send_keys(value)

    def screenshot(self, name):
        """A full-page PNG in the screenshots directory (Chromium's DevTools protocol: the page
        laid out at its whole height, so nothing is cut off or scrolled)."""
        driver = self.driver
        metrics = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
        height = int(min(max(900, metrics["cssContentSize"]["height"]), 6000))
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "mobile": False, "width": 1360, "height": height, "deviceScaleFactor": 1})
        try:
            shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": 1360, "height": height, "scale": 1}})
        finally:
            driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        with open(os.path.join(self.shots, name + ".png"), "wb") as f:
            f.write(base64.b64decode(shot["data"]))

    def assert_clean(self, where):
        """No payload ran, none became an element, and the log holds no error."""
        driver = self.driver
        marker = driver.execute_script("return window.__xss")
        check(marker is None, "%s: a script payload ran (window.__xss = %r)" % (where, marker))
        injected = driver.execute_script(
            "return Array.from(document.querySelectorAll('#main img, #main svg, #main iframe, "
            "#main script, #main object, #main embed, #notices img, #notices script')).map("
            "(e) => e.outerHTML.slice(0, 200))")
        check(not injected, "%s: payload markup became elements: %r" % (where, injected))
        bad_links = driver.execute_script(
            "return Array.from(document.querySelectorAll('a[href]')).map((a) => "
            "a.getAttribute('href')).filter((h) => !h.startsWith('#'))")
        check(not bad_links, "%s: links that leave the console: %r" % (where, bad_links))
        self.check_log(where)

    def check_log(self, where):
        entries = self.driver.get_log("browser")
        self.log.extend(entries)
        errors = []
        for entry in entries:
            if entry.get("level") != "SEVERE":
                continue
            message = entry.get("message", "")
            if entry.get("source") == "network" and any(p.search(message) for p in ALLOWED_NETWORK):
                continue
            errors.append(message)
        check(not errors, "%s: the browser logged errors:\n  %s" % (where, "\n  ".join(errors)))

    def log_in(self, token):
        self.go("#/login")
        field = self.wait_css("#login-token", "the login form")
        self.set_value(field, token)
        self.find("#login-submit").click()
        self.wait_css("#topbar:not([hidden]) #who-name", "the logged-in header")

    def log_out(self):
        self.find("#logout").click()
        self.wait_css("#login-token", "the login form after logging out")


# --- the scenario -------------------------------------------------------------------------------

class Scenario:
    def __init__(self, args):
        self.args = args
        self.out_dir = os.path.abspath(args.out_dir)
        self.work = os.path.join(self.out_dir, "console-test")
        self.shots = os.path.join(self.out_dir, "console-screenshots")
        for directory in (self.work, self.shots):
            shutil.rmtree(directory, ignore_errors=True)
            os.makedirs(directory)
        self.processes = Processes(self.work)
        self.browser = None
        self.tokens = {}

    # -- set-up --

    def wait_port_file(self, path, what):
        def ready():
            self.processes.check_alive()
            text = read_file(path).strip()
            return int(text) if text.isdigit() and int(text) > 0 else None
        return wait_for(ready, what)

    def start_provider(self):
        self.processes.start("payments-provider", [
            self.args.payments_provider, "--port", "0", "--ledger",
            os.path.join(self.work, "ledger.db"), "--seed", "7"])

        def listening():
            self.processes.check_alive()
            m = re.search(r"^listening on 127\.0\.0\.1:(\d+)$",
                          read_file(os.path.join(self.work, "payments-provider.out")), re.M)
            return int(m.group(1)) if m else None
        self.provider_port = wait_for(listening, "payments-provider to listen")

    def start_server(self):
        journal = os.path.join(self.work, "journal.db")
        self.processes.start("reckon-server", [
            self.args.reckon, "server", "--journal", journal, "--listen", "127.0.0.1:0",
            "--port-file", os.path.join(self.work, "port"), "--http", "127.0.0.1:0",
            "--http-port-file", os.path.join(self.work, "http-port"), "--quiet"])
        self.port = self.wait_port_file(os.path.join(self.work, "port"), "the server's port file")
        self.http_port = self.wait_port_file(os.path.join(self.work, "http-port"),
                                             "the server's HTTP port file")
        self.address = "127.0.0.1:%d" % self.port
        self.admin_token_file = journal + ".admin-token"

    def create_tokens(self):
        for name, role in [("workers", "worker"), ("oscar", "operator"), ("ada", "approver"),
                           ("rita", "reader")]:
            path = os.path.join(self.work, name + ".token")
            run_cli(self.args.reckon, ["auth", "token", "create", "--name", name, "--role", role,
                                       "--out", path, "--token-file", self.admin_token_file,
                                       "--server", self.address], self.work, "token-" + name)
            self.tokens[name] = read_file(path).strip()
            check(self.tokens[name], "the token file of %s is empty" % name)

    def start_workers(self):
        token = os.path.join(self.work, "workers.token")
        provider = "http://127.0.0.1:%d" % self.provider_port
        for worker in ("w1", "w2"):
            self.processes.start("refund-worker-" + worker, [
                self.args.refund_worker, "--server", self.address, "--token-file", token,
                "--provider", provider, "--id", worker])
        self.processes.start("reckon-test-worker", [
            self.args.test_worker, "--server", self.address, "--token-file", token, "--id", "t1"])

    def api(self, method, path, body=None, who="oscar", raw=None, headers=None):
        all_headers = bearer(self.tokens[who])
        all_headers.update(headers or {})
        return http_call(self.http_port, method, "/api/v1" + path, body, all_headers, raw)

    def start_run(self, workflow_id, workflow_type, workflow_input):
        """POST /api/v1/runs as oscar, again while no worker hosting the type has registered."""
        body = {"workflow_id": workflow_id, "workflow_type": workflow_type, "input": workflow_input}

        def started():
            self.processes.check_alive()
            reply = self.api("POST", "/runs", body)
            if reply.status == 200:
                return reply
            if "worker" in reply.text and reply.status in (400, 409, 412, 503):
                return None  # a worker is still registering
            raise Failure("POST /api/v1/runs %s: %r" % (workflow_id, reply))
        reply = wait_for(started, "a worker to take workflow type %s" % workflow_type,
                         interval=0.1)
        check(isinstance(reply.json, dict) and reply.json.get("workflow_id") == workflow_id,
              "POST /api/v1/runs answered %r" % reply)

    def provider_get(self, path):
        return http_call(self.provider_port, "GET", path)

    def pick_payments(self):
        """Two payments above $100 (they need approval) and one below."""
        big, small = [], []
        for n in range(1, 200):
            reply = self.provider_get("/payments/pay-%d" % n)
            check(reply.status == 200, "GET /payments/pay-%d: %r" % (n, reply))
            (big if reply.json["amount_cents"] > 10000 else small).append("pay-%d" % n)
            if len(big) >= 2 and small:
                return big[0], big[1], small[0]
        raise Failure("no two payments above $100 among pay-1..pay-199")

    def run_status(self, workflow_id):
        reply = self.api("GET", "/runs/" + workflow_id)
        check(reply.status == 200, "GET /api/v1/runs/%s: %r" % (workflow_id, reply))
        return reply.json

    def wait_operation_state(self, workflow_id, tool, state):
        def reached():
            self.processes.check_alive()
            detail = self.run_status(workflow_id)
            return any(op.get("tool") == tool and op.get("state") == state
                       for op in detail.get("operations", []))
        wait_for(reached, "%s's %s operation to be %s" % (workflow_id, tool, state), interval=0.1)

    # -- the runs the console will show --

    def start_runs(self):
        self.pay_approve, self.pay_deny, self.pay_small = self.pick_payments()
        self.start_run("refund-small", "refund", {"payment_id": self.pay_small,
                                                  "reason": "duplicate charge " + XSS_ALL})
        self.start_run("refund-approve", "refund", {"payment_id": self.pay_approve,
                                                    "reason": "damaged item " + XSS_ALL})
        self.start_run("refund-deny", "refund", {"payment_id": self.pay_deny,
                                                 "reason": "changed mind " + XSS_ALL})
        self.start_run("person-1", "call_once", {
            "tool": "unsure",
            "input": {"account": "acct-" + XSS[0], "amount_cents": 100, "memo": XSS_ALL}})
        self.start_run("signal-1", "signal_then_call", {
            "signal": "go", "tool": "charge",
            "input": {"account": "acct-7", "amount_cents": 300, "memo": XSS_ALL}})
        self.start_run("cancel-1", "signal_then_call", {
            "signal": "go", "tool": "charge", "input": {"account": "acct-7", "amount_cents": 300}})
        # A signal payload and a cancel reason carry the payloads too.
        reply = self.api("POST", "/runs/signal-1/signal", {"name": "go", "payload": {"note": XSS_ALL}})
        check(reply.status == 200, "POST signal: %r" % reply)
        reply = self.api("POST", "/runs/cancel-1/signal", {"name": XSS[1], "payload": XSS_ALL})
        check(reply.status in (200, 400), "POST signal with a payload name: %r" % reply)
        reply = self.api("POST", "/runs/cancel-1/cancel", {"reason": XSS_ALL})
        check(reply.status == 200, "POST cancel: %r" % reply)
        # Ids are validated by the server: a payload id is refused with 400 (or, if a future
        # server accepted it, must render as text like everything else).
        self.xss_ids = []
        for payload in XSS[:3]:
            reply = self.api("POST", "/runs", {"workflow_id": payload, "workflow_type": "refund",
                                               "input": {"payment_id": self.pay_small,
                                                         "reason": "x"}})
            check(reply.status in (200, 400), "POST /runs with id %r: %r" % (payload, reply))
            if reply.status == 200:
                self.xss_ids.append(payload)
            else:
                check(reply.error_code() == "invalid_argument",
                      "a refused id should be invalid_argument: %r" % reply)
        self.wait_operation_state("refund-approve", "send_refund", "awaiting_approval")
        self.wait_operation_state("refund-deny", "send_refund", "awaiting_approval")
        self.wait_operation_state("person-1", "unsure", "needs_human")

    # -- HTTP-level refusals --

    def check_http_refusals(self):
        port = self.http_port
        # A session cookie without the CSRF header: 403 csrf_missing; with a wrong one: 403.
        login = http_call(port, "POST", "/api/v1/session", {"token": self.tokens["ada"]})
        check(login.status == 200 and login.json.get("csrf_token"), "POST /session: %r" % login)
        cookie_header = login.header("Set-Cookie") or ""
        check("HttpOnly" in cookie_header and "SameSite=Strict" in cookie_header,
              "the session cookie must be HttpOnly and SameSite=Strict: %r" % cookie_header)
        cookie = cookie_header.split(";", 1)[0]
        check(cookie.startswith("reckon_session="), "unexpected cookie %r" % cookie_header)
        path = "/api/v1/runs/person-1/operations/x/resolve"
        body = {"committed": False, "note": "no csrf"}
        refused = http_call(port, "POST", path, body, {"Cookie": cookie})
        check(refused.status == 403 and refused.error_code() == "csrf_missing",
              "a cookie POST without X-CSRF-Token must be 403 csrf_missing: %r" % refused)
        wrong = http_call(port, "POST", path, body, {"Cookie": cookie, "X-CSRF-Token": "0" * 32})
        check(wrong.status == 403, "a cookie POST with a wrong CSRF token must be 403: %r" % wrong)
        reads = http_call(port, "GET", "/api/v1/whoami", headers={"Cookie": cookie})
        check(reads.status == 200 and reads.json.get("name") == "ada",
              "GET /whoami with the cookie: %r" % reads)
        # Unknown run and unknown path: 404 JSON.
        for unknown in ("/api/v1/runs/no-such-run", "/api/v1/runs/no-such-run/history",
                        "/api/v1/no-such-thing"):
            reply = http_call(port, "GET", unknown, headers=bearer(self.tokens["rita"]))
            check(reply.status == 404 and reply.error_code() == "not_found"
                  and "json" in (reply.header("Content-Type") or ""),
                  "GET %s must be 404 JSON not_found: %r" % (unknown, reply))
        # A payload id in a path: 400 or 404, JSON either way.
        reply = http_call(port, "GET", "/api/v1/runs/%3Cscript%3E", headers=bearer(self.tokens["rita"]))
        check(reply.status in (400, 404) and reply.error_code(), "GET /runs/<script>: %r" % reply)
        # No token at all: 401 JSON.
        reply = http_call(port, "GET", "/api/v1/runs")
        check(reply.status == 401 and reply.error_code() == "unauthenticated",
              "GET /runs without credentials: %r" % reply)
        self.check_oversized_body(port)
        # The console's assets and their headers.
        for path, kind in (("/", "text/html"), ("/console/app.js", "javascript"),
                           ("/console/app.css", "text/css")):
            reply = http_call(port, "GET", path)
            check(reply.status == 200 and kind in (reply.header("Content-Type") or ""),
                  "GET %s: %r" % (path, reply.header("Content-Type")))
            csp = reply.header("Content-Security-Policy") or ""
            check("script-src 'self'" in csp and "default-src 'self'" in csp,
                  "GET %s: Content-Security-Policy %r" % (path, csp))
            check(reply.header("X-Content-Type-Options") == "nosniff",
                  "GET %s: X-Content-Type-Options missing" % path)

    def check_oversized_body(self, port):
        """2 MiB to POST /api/v1/runs: 413 payload_too_large, read or not."""
        size = 2 * 1024 * 1024
        head = ("POST /api/v1/runs HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
                "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" %
                (port, self.tokens["oscar"], size)).encode()
        body = b'{"workflow_id": "big", "input": "' + b"a" * (size - 40)
        body += b" " * (size - len(body) - 2) + b'"}'
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        try:
            sock.sendall(head)
            try:
                sock.sendall(body)
            except OSError:
                pass  # the server may answer and close before reading the body
            received = b""
            while b"\r\n\r\n" not in received:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                received += chunk
        finally:
            sock.close()
        status_line = received.split(b"\r\n", 1)[0].decode("latin-1")
        check(re.match(r"HTTP/1\.[01] 413", status_line),
              "a 2 MiB body must be refused with 413, got %r" % received[:300])

    # -- the browser --

    def reader_sees_no_buttons(self):
        b = self.browser
        b.go("")
        b.wait_css("#login-token", "the login page")
        b.screenshot("01-login")
        b.assert_clean("login page")
        b.log_in(self.tokens["rita"])
        check(b.text("#who-name") == "rita", "the header should name rita")
        b.go("#/inbox")
        b.wait_css("[data-test=approval-card][data-workflow-id=refund-approve]", "rita's inbox")
        check(not b.find_all("[data-test=approve]") and not b.find_all("[data-test=deny]"),
              "a reader must see no Approve or Deny button")
        check(b.find_all("[data-test=read-only]"), "a reader's inbox should say it is read-only")
        b.screenshot("02-inbox-reader")
        b.go("#/people")
        b.wait_css("[data-test=person-card][data-workflow-id=person-1]", "rita's needs-a-person queue")
        check(not b.find_all("[data-test=resolve-form]"), "a reader must see no resolve form")
        b.go("#/runs/person-1")
        b.wait_css("[data-test=event]", "person-1's timeline")
        check(not b.find_all("#signal-form") and not b.find_all("#cancel-form"),
              "a reader must see no signal or cancel form")
        b.assert_clean("reader pages")
        b.log_out()
        # The operator who started the runs: signal and cancel, but no decision (no approve
        # permission, and separation of duties besides).
        b.log_in(self.tokens["oscar"])
        b.go("#/runs/person-1")
        b.wait_css("#signal-form", "the operator's signal form")
        check(b.find_all("#cancel-form"), "an operator should see the cancel form")
        b.go("#/inbox")
        b.wait_css("[data-test=approval-card][data-workflow-id=refund-approve]", "oscar's inbox")
        check(not b.find_all("[data-test=approve]"), "an operator must see no Approve button")
        b.assert_clean("operator pages")
        b.log_out()

    def approver_logs_in(self):
        b = self.browser
        b.log_in(self.tokens["ada"])
        check(b.text("#who-name") == "ada", "the header should name ada")

    def runs_page(self):
        b = self.browser
        b.go("#/runs")
        b.wait_css("[data-test=run-row][data-workflow-id=refund-small]", "the runs list")
        wait_for(lambda: b.find_all("[data-test=run-row][data-workflow-id=refund-small]"
                                    "[data-status=completed]"), "refund-small to show completed")
        b.screenshot("03-runs")
        # Waiting for a person: exactly the runs with an operation waiting.
        b.find("#runs-filter-needs-human").click()

        def rows():  # one read in the page: the rows are redrawn by the live refresh
            return sorted(b.driver.execute_script(
                "return Array.from(document.querySelectorAll('[data-test=run-row]'))"
                ".map((r) => r.getAttribute('data-workflow-id'))"))
        wait_for(lambda: rows() == ["person-1", "refund-approve", "refund-deny"],
                 "the needs-a-person filter")
        b.find("#runs-filter-needs-human").click()
        # Status and id prefix.
        Select(b.find("#runs-filter-status")).select_by_value("cancelled")
        wait_for(lambda: rows() == ["cancel-1"], "the status filter")
        Select(b.find("#runs-filter-status")).select_by_value("")
        b.set_value(b.find("#runs-search"), "refund-")
        wait_for(lambda: rows() == ["refund-approve", "refund-deny", "refund-small"],
                 "the id-prefix search")
        # Tool and type filters.
        b.set_value(b.find("#runs-search"), "")
        b.set_value(b.find("#runs-filter-tool"), "unsure")
        wait_for(lambda: rows() == ["person-1"], "the tool filter")
        b.set_value(b.find("#runs-filter-tool"), "")
        b.set_value(b.find("#runs-filter-type"), "signal_then_call")
        wait_for(lambda: rows() == ["cancel-1", "signal-1"], "the type filter")
        # Payloads typed into the filters are sent and shown back as text, never run.
        b.set_value(b.find("#runs-filter-type"), XSS[1])
        b.set_value(b.find("#runs-search"), XSS[0])
        wait_for(lambda: b.find_all("#runs-empty:not([hidden])") or b.find_all("#runs-error .callout"),
                 "the list to answer a payload filter")
        b.assert_clean("runs filters with payloads")
        # Cursor pagination, two runs a page.
        b.go("#/runs?limit=2")
        b.driver.refresh()
        wait_for(lambda: len(rows()) == 2, "a first page of two")
        first = rows()
        b.find("#runs-next").click()
        wait_for(lambda: rows() and rows() != first, "the next page")
        second = rows()
        check(not set(first) & set(second),
              "the next page should hold other runs: %s then %s" % (first, second))
        b.find("#runs-prev").click()
        wait_for(lambda: rows() == first, "back to the first page")
        b.assert_clean("runs page")

    def inbox_card(self, workflow_id):
        return self.browser.wait_css(
            "[data-test=approval-card][data-workflow-id=%s]" % workflow_id,
            "the approval card of %s" % workflow_id)

    def changed_intent_is_refused(self):
        """The page shows a hash that is not the operation's (as if the intent changed after it
        was shown): Approve must be refused by the server and the page must say so."""
        b = self.browser
        b.go("#/inbox")
        card = self.inbox_card("refund-deny")
        hash_el = self.browser.find("[data-test=intent-hash]", card)
        shown = hash_el.text
        check(re.search(r"[0-9a-f]{16}", shown), "the card should show the intent hash: %r" % shown)
        altered = shown[:-1] + ("0" if shown[-1] != "0" else "1")
        b.driver.execute_script("arguments[0].textContent = arguments[1]", hash_el, altered)
        b.find("[data-test=approve]", card).click()
        result = wait_for(lambda: (b.find_all("[data-test=decision-result].error", card) or [None])[0],
                          "the page to show the refusal")
        # docs/HTTP_API.md: a stale intent hash is 403 permission_denied.
        check(result.get_attribute("data-code") == "permission_denied",
              "a changed intent must be refused with permission_denied, got %r: %s" %
              (result.get_attribute("data-code"), result.text))
        check("intent changed" in result.text, "the page should say the intent changed: %r" % result.text)
        b.screenshot("04-inbox-intent-refused")
        detail = self.run_status("refund-deny")
        check(any(op["state"] == "awaiting_approval" for op in detail["operations"]),
              "nothing may be decided on a changed intent: %r" % detail["operations"])
        b.driver.refresh()  # the reload asks the server for the session's CSRF token again
        self.inbox_card("refund-deny")
        b.assert_clean("inbox after the refusal")

    def approve(self):
        b = self.browser
        b.go("#/inbox")
        card = self.inbox_card("refund-approve")
        page = b.main_text()
        for mark in XSS_MARKS:
            check(mark in page, "the inbox should show the payload %r as text" % mark)
        op_id = card.get_attribute("data-operation-id")
        binding = b.find("[data-test=binding]", card).text
        shown_hash = b.find("[data-test=intent-hash]", card).text
        check(op_id in binding and shown_hash in binding and "if the intent changes" in binding,
              "the card must state what approving binds to: %r" % binding)
        check(b.find("[data-test=expiry]", card).text.strip() not in ("", "never"),
              "the card should say when the approval expires")
        check(b.find_all("[data-test=card-summary]", card), "the card should summarize the contract")
        b.screenshot("05-inbox")
        b.set_value(b.find("[data-test=decision-note]", card), "checked the ticket " + XSS_ALL)
        b.find("[data-test=approve]", card).click()
        b.wait_css("[data-test=notice-success]", "the approval to be confirmed")
        b.assert_clean("inbox after approving")
        # Watch it complete on its run page (followed by the /watch long poll).
        b.go("#/runs/refund-approve")
        b.wait_css("[data-test=event][data-type=approvalgranted]", "the approval in the timeline")
        b.wait_css("#main .page-head [data-test=run-status][data-state=completed]",
                   "refund-approve to complete on its run page")
        b.wait_css("[data-test=event][data-type=workflowcompleted]", "the completion in the timeline")
        granted = b.text("[data-test=event][data-type=approvalgranted]")
        check("ada" in granted and XSS[0] in granted,
              "the timeline should show ada's approval and her note as text: %r" % granted)
        check(b.find_all("[data-test=event][data-type=attemptstarted]"), "an attempt line")
        check(b.find_all("[data-test=event][data-type=operationcommitted]"), "a commit line")
        check(re.search(r"re_", b.text("#run-result")), "the result should hold the refund id")
        b.screenshot("06-run-approved")
        b.assert_clean("run page of refund-approve")

    def deny(self):
        b = self.browser
        b.go("#/inbox")
        card = self.inbox_card("refund-deny")
        b.set_value(b.find("[data-test=decision-note]", card), "not eligible " + XSS_ALL)
        b.find("[data-test=deny]", card).click()
        b.wait_css("[data-test=notice-success]", "the denial to be confirmed")
        b.wait_gone("[data-test=approval-card][data-workflow-id=refund-deny]",
                    "the denied card to leave the inbox")
        b.wait_css("#inbox-empty:not([hidden])", "the empty inbox")
        b.screenshot("07-inbox-empty")
        b.go("#/runs/refund-deny")
        denied = b.wait_css("[data-test=event][data-type=approvaldenied]", "the denial in the timeline")
        check("ada" in denied.text and XSS[1] in denied.text,
              "the timeline should show ada's denial and her reason as text: %r" % denied.text)
        b.wait_css("#main .page-head [data-test=run-status]:not([data-state=running])",
                   "refund-deny to end")
        b.screenshot("08-run-denied")
        b.assert_clean("run page of refund-deny")

    def resolve(self):
        b = self.browser
        b.go("#/people")
        card = b.wait_css("[data-test=person-card][data-workflow-id=person-1]", "person-1's card")
        evidence = b.find("[data-test=evidence]", card).text
        check("reference" in evidence, "the card should show the evidence text: %r" % evidence)
        # Committed without a reference is refused by the form itself.
        b.find("[data-test=resolve-committed]", card).click()
        b.find("[data-test=resolve-review]", card).click()
        check("provider reference" in b.text("[data-test=resolve-error]"),
              "the form should ask for the provider reference")
        b.set_value(b.find("[data-test=provider-ref]", card), "un_console_1")
        b.set_value(b.find("[data-test=resolve-note]", card), "found it in the provider " + XSS_ALL)
        b.find("[data-test=resolve-review]", card).click()
        confirmation = b.wait_css("[data-test=resolve-confirmation]:not([hidden])", "the confirmation step")
        text = confirmation.text
        check("committed" in text and "un_console_1" in text and "ada" in text,
              "the confirmation should say what will be journaled: %r" % text)
        b.screenshot("09-people-confirm")
        b.find("[data-test=resolve-confirm]", card).click()
        b.wait_css("[data-test=notice-success]", "the resolution to be confirmed")
        b.wait_css("#people-empty:not([hidden])", "the empty needs-a-person queue")
        b.go("#/runs/person-1")
        b.wait_css("#main .page-head [data-test=run-status][data-state=completed]",
                   "person-1 to complete after the resolution")
        resolved = b.wait_css("[data-test=event][data-type=humanresolved]", "the resolution line")
        check("ada" in resolved.text and "un_console_1" in resolved.text and XSS[0] in resolved.text,
              "the timeline should show ada's resolution: %r" % resolved.text)
        check(b.find_all("[data-test=event][data-type=outcomeunknown]"), "an outcome-unknown line")
        check(b.find_all("[data-test=event][data-type=reconciliationresult]"), "a reconciliation line")
        check(b.find_all("[data-test=event][data-type=needshuman]"), "a needs-a-person line")
        page = b.main_text()
        for mark in XSS_MARKS:
            check(mark in page, "person-1's page should show the payload %r as text" % mark)
        b.screenshot("10-run-resolved")
        b.assert_clean("run page of person-1")

    def other_run_pages(self):
        b = self.browser
        b.go("#/runs/signal-1")
        signal_line = b.wait_css("[data-test=event][data-type=signalreceived]", "signal-1's signal line")
        check("oscar" in signal_line.text and "<script>window.__xss=" in signal_line.text,
              "the signal line should show its payload as text: %r" % signal_line.text)
        b.assert_clean("run page of signal-1")
        b.go("#/runs/cancel-1")
        cancel_line = b.wait_css("[data-test=event][data-type=workflowcancelrequested]", "the cancel line")
        check(XSS[0] in cancel_line.text, "the cancel reason should show as text: %r" % cancel_line.text)
        b.assert_clean("run page of cancel-1")
        # An unknown run: the server's 404, shown as text.
        b.go("#/runs/" + "no-such-run")
        error = b.wait_css("[data-test=error]", "the unknown run's error")
        check("not found" in error.text, "the page should say the run was not found: %r" % error.text)
        b.assert_clean("run page of an unknown run")
        for workflow_id in self.xss_ids:
            b.go("#/runs/" + urllib.parse.quote(workflow_id, safe=""))
            b.wait_css("[data-test=run-id]", "the run page of a payload id")
            b.assert_clean("run page of a payload id")

    def contracts(self):
        b = self.browser
        b.go("#/contracts")
        b.wait_css("[data-test=contract-card][data-name=send_refund]", "send_refund's contract card")
        check(b.find_all("[data-test=contract-card][data-name=unsure]"), "unsure's contract card")
        with open(os.path.join(self.args.source_dir, "samples", "mcp", "tools_list.json")) as f:
            catalog = json.load(f)
        catalog["tools"].append({"name": "evil" + XSS[0], "title": XSS[1], "description": XSS_ALL,
                                 "inputSchema": {"type": "object"},
                                 "annotations": {"title": XSS[2], "readOnlyHint": False}})
        field = b.find("#mcp-input")
        b.driver.execute_script("arguments[0].value = arguments[1]", field, json.dumps(catalog, indent=2))
        b.find("#mcp-check").click()
        report = b.wait_css("[data-test=mcp-report]", "the MCP report")
        rows = b.find_all("[data-test=mcp-row]", report)
        check(len(rows) == len(catalog["tools"]),
              "the report should have one row per tool: %d of %d" % (len(rows), len(catalog["tools"])))
        verdicts = {r.get_attribute("data-tool"): r.get_attribute("data-verdict") for r in rows}
        check(verdicts.get("evil" + XSS[0]) == "no_contract",
              "the payload-named tool should be reported without a contract: %r" % verdicts)
        check("<script>window.__xss=" in report.text, "the payload tool name should show as text")
        b.find("#mcp-input").clear()
        b.screenshot("11-contracts")
        b.assert_clean("contracts page")

    def check_ledger(self):
        reply = self.provider_get("/refunds")
        check(reply.status == 200 and isinstance(reply.json, list), "GET /refunds: %r" % reply)
        counts = {}
        for refund in reply.json:
            counts[refund["payment_id"]] = counts.get(refund["payment_id"], 0) + 1
        check(counts.get(self.pay_approve) == 1,
              "the approved payment %s needs exactly one refund: %r" % (self.pay_approve, counts))
        # Runs whose payload ids a server accepted would refund the small payment too.
        small_runs = 1 + len(self.xss_ids)
        check(counts.get(self.pay_small) == small_runs,
              "the small payment %s needs exactly %d refund(s): %r" %
              (self.pay_small, small_runs, counts))
        check(self.pay_deny not in counts,
              "the denied payment %s must have no refund: %r" % (self.pay_deny, counts))
        check(len(reply.json) == 1 + small_runs, "refunds of other payments: %r" % counts)

    def run(self):
        began = time.monotonic()
        self.start_provider()
        self.start_server()
        self.create_tokens()
        self.start_workers()
        self.start_runs()
        self.check_http_refusals()
        self.browser = Browser("http://127.0.0.1:%d/" % self.http_port, self.shots)
        self.reader_sees_no_buttons()
        self.approver_logs_in()
        self.runs_page()
        self.changed_intent_is_refused()
        self.approve()
        self.deny()
        self.resolve()
        self.other_run_pages()
        self.contracts()
        self.browser.log_out()
        self.browser.assert_clean("after logging out")
        self.check_ledger()
        self.processes.check_alive()
        print("console_test: passed in %.1f s; screenshots in %s" %
              (time.monotonic() - began, self.shots))

    def close(self, failed):
        if self.browser is not None:
            if failed:
                try:
                    self.browser.driver.save_screenshot(os.path.join(self.shots, "failure.png"))
                    print("browser log:", file=sys.stderr)
                    for entry in self.browser.log + self.browser.driver.get_log("browser"):
                        print("  ", entry, file=sys.stderr)
                except WebDriverException:
                    pass
            self.browser.quit()
        self.processes.stop()
        if failed:
            for name, _ in self.processes.running:
                print("--- %s log (tail)\n%s" % (name, self.processes.log(name)), file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reckon", required=True)
    parser.add_argument("--payments-provider", required=True)
    parser.add_argument("--refund-worker", required=True)
    parser.add_argument("--test-worker", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--out-dir", required=True)
    args = parser.parse_args()
    for path in (args.reckon, args.payments_provider, args.refund_worker, args.test_worker,
                 CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            print("console_test: %s is missing or not executable" % path, file=sys.stderr)
            return 1
    scenario = Scenario(args)
    failed = True
    try:
        scenario.run()
        failed = False
    except Failure as failure:
        print("console_test: FAILED: %s" % failure, file=sys.stderr)
    except Exception:  # a bug in the test or a driver error: same report
        traceback.print_exc()
    finally:
        scenario.close(failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
