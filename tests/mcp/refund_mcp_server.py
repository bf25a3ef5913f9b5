#!/usr/bin/env python3
"""A refund provider as an MCP server, for Reckon's tests and its MCP sample.

Python 3 standard library only. Serves MCP (revision 2025-06-18) over stdio (the default:
newline-delimited JSON-RPC on stdin/stdout, logs on stderr) or Streamable HTTP (--http PORT:
POST JSON-RPC to any path; answers as JSON, or as an event stream with --sse).

Tools (each with annotations, input and output schemas):
  lookup_payment(payment_id)                  read-only. Any id "pay-N" (N = 1..999) is a
                                              captured payment of N * 1000 cents, EUR.
  send_refund(payment_id, amount_cents, reason, idempotency_key)
                                              refunds once per call: the server does NOT
                                              deduplicate by key (a repeat is a second refund,
                                              as with many real APIs), it only records the key.
                                              Errors (isError, structuredContent.code):
                                              payment_not_found, amount_exceeds_payment.
  find_refund(idempotency_key)                read-only: {"status": "committed", "refund": {...}}
                                              or {"status": "not_found"}.
  close_account(customer_id)                  a destructive tool that has no contract in the
                                              sample: Reckon refuses to host it.

The ledger (--ledger FILE) is JSON lines, each written and fsynced before the answer, so it
survives SIGKILL: {"type": "call", "n", "fault"} for every send_refund call, and {"type":
"refund", "refund_id", "payment_id", "amount_cents", "reason", "idempotency_key",
"meta_operation_id", "meta", "arguments"} for every refund ("meta" and "arguments": the call's
_meta and arguments as received). A torn last line is ignored when reading.

Faults (--faults LIST, comma-separated): the n-th send_refund call of the ledger's whole life
(counted durably, across restarts) gets the n-th fault; calls past the list get none.
  none          behave
  drop_reply    refund, then never answer (stdio) or close the connection (HTTP)
  hang          never answer and never refund (the call hangs until the client gives up)
  crash         refund, then SIGKILL itself before answering
  crash_before  SIGKILL itself before refunding
  garbage       refund, then answer bytes that are not JSON
  rate_limited  no refund; isError with code rate_limited
  odd_error     no refund; isError with code odd_error (a code no contract lists)

Other flags: --pid-file FILE (this process's pid, written at start), --port-file FILE (HTTP:
the bound port), --page-size N (tools/list page size, default 2: the catalog has pages).
"""

import argparse
import http.server
import json
import os
import re
import signal
import sys
import threading
import time
import uuid

PROTOCOL_VERSION = "2025-06-18"
FAULTS = {"none", "drop_reply", "hang", "crash", "crash_before", "garbage", "rate_limited",
          "odd_error"}


def log(message):
    sys.stderr.write("refund_mcp_server[%d]: %s\n" % (os.getpid(), message))
    sys.stderr.flush()


def write_atomically(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


class Ledger:
    """JSON lines, fsynced per record. One lock for readers and writers."""

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        open(path, "a").close()

    def _records(self):
        records = []
        with open(self.path) as f:
            for line in f:
                try:
                    records.append(json.loads(line))
                except ValueError:
                    pass  # a line torn by a kill
        return records

    def _append(self, record):
        with open(self.path, "a") as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def records(self):
        with self.lock:
            return self._records()

    def next_call(self, faults):
        with self.lock:
            n = 1 + sum(1 for r in self._records() if r.get("type") == "call")
            fault = faults[n - 1] if n <= len(faults) else "none"
            self._append({"type": "call", "n": n, "fault": fault})
            return n, fault

    def refunded_cents(self, payment_id):
        return sum(r["amount_cents"] for r in self.records()
                   if r.get("type") == "refund" and r["payment_id"] == payment_id)

    def add_refund(self, refund):
        with self.lock:
            self._append(dict(refund, type="refund"))


def payment(payment_id):
    m = re.fullmatch(r"pay-([1-9][0-9]{0,2})", payment_id or "")
    if not m:
        return None
    return {"payment_id": payment_id, "amount_cents": int(m.group(1)) * 1000,
            "currency": "EUR", "status": "captured"}


REFUND_SCHEMA = {
    "type": "object",
    "properties": {
        "refund_id": {"type": "string"}, "payment_id": {"type": "string"},
        "amount_cents": {"type": "integer"}, "status": {"type": "string"},
    },
    "required": ["refund_id", "payment_id", "amount_cents", "status"],
}

TOOLS = [
    {
        "name": "lookup_payment",
        "title": "Look up a payment",
        "description": "Read a payment: its amount, currency, status and what was already refunded.",
        "inputSchema": {"type": "object",
                        "properties": {"payment_id": {"type": "string", "minLength": 1}},
                        "required": ["payment_id"], "additionalProperties": False},
        "outputSchema": {"type": "object",
                         "properties": {"payment_id": {"type": "string"},
                                        "amount_cents": {"type": "integer"},
                                        "currency": {"type": "string"},
                                        "status": {"type": "string"},
                                        "refunded_cents": {"type": "integer"}},
                         "required": ["payment_id", "amount_cents", "currency", "status",
                                      "refunded_cents"]},
        "annotations": {"title": "Look up a payment", "readOnlyHint": True, "openWorldHint": True},
    },
    {
        "name": "send_refund",
        "title": "Refund a payment",
        "description": "Refund part or all of a captured payment. Every call refunds: the "
                       "idempotency_key is recorded, not deduplicated.",
        "inputSchema": {"type": "object",
                        "properties": {"payment_id": {"type": "string", "minLength": 1},
                                       "amount_cents": {"type": "integer", "minimum": 1},
                                       "reason": {"type": "string", "minLength": 1},
                                       "idempotency_key": {"type": "string", "minLength": 1}},
                        "required": ["payment_id", "amount_cents", "reason", "idempotency_key"],
                        "additionalProperties": False},
        "outputSchema": REFUND_SCHEMA,
        "annotations": {"title": "Refund a payment", "readOnlyHint": False,
                        "destructiveHint": True, "idempotentHint": False, "openWorldHint": True},
    },
    {
        "name": "find_refund",
        "title": "Find a refund by its idempotency key",
        "description": "Whether a refund with this idempotency key exists, and the refund.",
        "inputSchema": {"type": "object",
                        "properties": {"idempotency_key": {"type": "string", "minLength": 1}},
                        "required": ["idempotency_key"], "additionalProperties": False},
        "outputSchema": {"type": "object",
                         "properties": {"status": {"type": "string",
                                                   "enum": ["committed", "not_found"]},
                                        "refund": REFUND_SCHEMA},
                         "required": ["status"]},
        "annotations": {"title": "Find a refund", "readOnlyHint": True, "openWorldHint": True},
    },
    {
        "name": "close_account",
        "title": "Close a customer account",
        "description": "Close a customer's account for good.",
        "inputSchema": {"type": "object",
                        "properties": {"customer_id": {"type": "string"}},
                        "required": ["customer_id"]},
        "annotations": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True},
    },
]


class Stop(Exception):
    """Raised inside a tool to tell the transport how to misbehave: 'drop', 'hang', 'garbage'."""

    def __init__(self, how):
        super().__init__(how)
        self.how = how


def text_result(payload, is_error=False):
    result = {"content": [{"type": "text", "text": json.dumps(payload)}],
              "structuredContent": payload}
    if is_error:
        result["isError"] = True
    return result


def tool_error(code, message):
    return text_result({"code": code, "message": message}, is_error=True)


class RefundServer:
    def __init__(self, ledger, faults, page_size):
        self.ledger = ledger
        self.faults = faults
        self.page_size = page_size

    # --- tools -------------------------------------------------------------------------
    def lookup_payment(self, args, meta):
        p = payment(args.get("payment_id"))
        if p is None:
            return tool_error("payment_not_found", "no payment %r" % args.get("payment_id"))
        return text_result(dict(p, refunded_cents=self.ledger.refunded_cents(p["payment_id"])))

    def send_refund(self, args, meta):
        n, fault = self.ledger.next_call(self.faults)
        log("send_refund call %d fault=%s key=%s" % (n, fault, args.get("idempotency_key")))
        if fault == "crash_before":
            os.kill(os.getpid(), signal.SIGKILL)
        if fault == "hang":
            raise Stop("hang")
        if fault == "rate_limited":
            return tool_error("rate_limited", "too many refunds; try again later")
        if fault == "odd_error":
            return tool_error("odd_error", "something odd happened")
        p = payment(args.get("payment_id"))
        if p is None:
            return tool_error("payment_not_found", "no payment %r" % args.get("payment_id"))
        amount = args.get("amount_cents")
        key = args.get("idempotency_key")
        if not isinstance(amount, int) or amount < 1 or not isinstance(key, str) or not key:
            return tool_error("invalid_refund", "amount_cents >= 1 and idempotency_key required")
        if amount > p["amount_cents"] - self.ledger.refunded_cents(p["payment_id"]):
            return tool_error("amount_exceeds_payment", "the refund exceeds what is left to refund")
        refund = {"refund_id": "re-%d" % n, "payment_id": p["payment_id"],
                  "amount_cents": amount, "reason": args.get("reason", ""),
                  "idempotency_key": key,
                  "meta_operation_id": (meta or {}).get("dev.reckon/operation-id", ""),
                  "meta": meta or {}, "arguments": args,
                  "status": "succeeded"}
        self.ledger.add_refund(refund)
        if fault == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        if fault in ("drop_reply", "garbage"):
            raise Stop("drop" if fault == "drop_reply" else "garbage")
        return text_result({k: refund[k] for k in ("refund_id", "payment_id", "amount_cents",
                                                   "status")})

    def find_refund(self, args, meta):
        key = args.get("idempotency_key")
        for r in self.ledger.records():
            if r.get("type") == "refund" and r.get("idempotency_key") == key:
                return text_result({"status": "committed",
                                    "refund": {k: r[k] for k in ("refund_id", "payment_id",
                                                                 "amount_cents", "status")}})
        return text_result({"status": "not_found"})

    def close_account(self, args, meta):
        return tool_error("not_supported", "this sample closes no account")

    # --- JSON-RPC ------------------------------------------------------------------------
    def handle(self, message):
        """The response to one request (a dict), or None for a notification. Raises Stop."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return error(None, -32600, "not a JSON-RPC 2.0 message")
        method = message.get("method")
        if "id" not in message:
            return None  # notifications/initialized, notifications/cancelled, ...
        rid = message["id"]
        params = message.get("params") or {}
        if method == "initialize":
            return ok(rid, {"protocolVersion": PROTOCOL_VERSION,
                            "capabilities": {"tools": {"listChanged": False}},
                            "serverInfo": {"name": "refund-mcp-server", "version": "1.0"}})
        if method == "ping":
            return ok(rid, {})
        if method == "tools/list":
            start = int(params.get("cursor") or 0)
            page = TOOLS[start:start + self.page_size]
            result = {"tools": page}
            if start + self.page_size < len(TOOLS):
                result["nextCursor"] = str(start + self.page_size)
            return ok(rid, result)
        if method == "tools/call":
            name = params.get("name")
            tool = getattr(self, name, None) if name in {t["name"] for t in TOOLS} else None
            if tool is None:
                return error(rid, -32602, "unknown tool %r" % name)
            return ok(rid, tool(params.get("arguments") or {}, params.get("_meta")))
        return error(rid, -32601, "no method %r" % method)


def ok(rid, result):
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def error(rid, code, message):
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


# --- stdio ------------------------------------------------------------------------------
def serve_stdio(server):
    out_lock = threading.Lock()
    out = sys.stdout.buffer

    def write(text):
        with out_lock:
            out.write(text.encode() + b"\n")
            out.flush()

    def answer(message):
        try:
            response = server.handle(message)
        except Stop as stop:
            if stop.how == "hang":
                time.sleep(10 ** 6)
            if stop.how == "garbage":
                write("<<this is not JSON>>")
            return
        if response is not None:
            write(json.dumps(response))

    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline()
        if not line:
            log("stdin closed; exiting")
            os._exit(0)
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            write(json.dumps(error(None, -32700, "parse error")))
            continue
        if isinstance(message, dict) and message.get("method") == "tools/call":
            threading.Thread(target=answer, args=(message,), daemon=True).start()
        else:
            answer(message)


# --- Streamable HTTP ----------------------------------------------------------------------
def serve_http(server, port, port_file, sse):
    sessions = set()
    sessions_lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def send_body(self, status, body, content_type, headers=()):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
            self.close_connection = True

        def do_GET(self):
            self.send_body(405, "", "text/plain")

        def do_DELETE(self):
            with sessions_lock:
                sessions.discard(self.headers.get("Mcp-Session-Id"))
            self.send_body(200, "", "text/plain")

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            try:
                message = json.loads(body)
            except ValueError:
                self.send_body(400, json.dumps(error(None, -32700, "parse error")),
                               "application/json")
                return
            is_init = isinstance(message, dict) and message.get("method") == "initialize"
            session = self.headers.get("Mcp-Session-Id")
            headers = []
            if is_init:
                session = uuid.uuid4().hex
                with sessions_lock:
                    sessions.add(session)
                headers.append(("Mcp-Session-Id", session))
            else:
                with sessions_lock:
                    known = session in sessions
                if session is None:
                    self.send_body(400, "no Mcp-Session-Id", "text/plain")
                    return
                if not known:
                    self.send_body(404, "no session %s" % session, "text/plain")
                    return
            try:
                response = server.handle(message)
            except Stop as stop:
                if stop.how == "hang":
                    time.sleep(10 ** 6)
                if stop.how == "garbage":
                    self.send_body(200, "<<this is not JSON>>", "application/json")
                    return
                self.close_connection = True  # drop: no answer at all
                return
            if response is None:
                self.send_body(202, "", "text/plain", headers)
            elif sse:
                note = {"jsonrpc": "2.0", "method": "notifications/message",
                        "params": {"level": "info", "data": "working"}}
                stream = ("event: message\ndata: %s\n\n" % json.dumps(note) +
                          ": a comment line\n\n" +
                          "event: message\nid: 1\ndata: %s\n\n" % json.dumps(response))
                self.send_body(200, stream, "text/event-stream", headers)
            else:
                self.send_body(200, json.dumps(response), "application/json", headers)

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        allow_reuse_address = True

    httpd = Server(("127.0.0.1", port), Handler)
    bound = httpd.server_address[1]
    if port_file:
        write_atomically(port_file, "%d\n" % bound)
    log("listening on http://127.0.0.1:%d/mcp" % bound)
    httpd.serve_forever()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ledger", required=True)
    parser.add_argument("--http", type=int, metavar="PORT",
                        help="serve Streamable HTTP on 127.0.0.1:PORT (0: any) instead of stdio")
    parser.add_argument("--sse", action="store_true", help="HTTP: answer as event streams")
    parser.add_argument("--port-file")
    parser.add_argument("--pid-file")
    parser.add_argument("--faults", default="")
    parser.add_argument("--page-size", type=int, default=2)
    args = parser.parse_args()
    faults = [f.strip() for f in args.faults.split(",") if f.strip()]
    for f in faults:
        if f not in FAULTS:
            parser.error("unknown fault %r; known: %s" % (f, ", ".join(sorted(FAULTS))))
    if args.pid_file:
        write_atomically(args.pid_file, "%d\n" % os.getpid())
    server = RefundServer(Ledger(args.ledger), faults, max(1, args.page_size))
    if args.http is not None:
        serve_http(server, args.http, args.port_file, args.sse)
    else:
        serve_stdio(server)


if __name__ == "__main__":
    main()
