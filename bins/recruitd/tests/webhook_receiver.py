"""An HTTPS log destination as a customer's receiver runs it: every batch verified with the
Standard Webhooks reference library (PyPI `standardwebhooks`) before it is acknowledged.

Serves on 127.0.0.1 on a free port (plain HTTP: recruitd allows http to the loopback) and
prints `listening on <port>` once ready. A test steers it over HTTP:
- POST /__secrets   {"secrets": ["whsec_…", …]}: the secrets a batch may be signed with;
                    until some are given every batch is answered 503 with Retry-After: 1.
- POST /__faults    {"faults": [{"status": 503, "retry_after": "1", "delay": 0.5}, …]}: the
                    answers to give the next batches, in order, instead of acknowledging
                    them (status 200 with a delay: acknowledged late).
- GET  /__received  every batch acknowledged: its webhook-id, its timestamp, its content
                    type, and its lines parsed; and the count of refused signatures.
Anything else POSTed is a batch: 401 when no secret verifies it, else the next fault or 204.
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

lock = threading.Lock()
state = {"secrets": [], "faults": [], "received": [], "unverified": 0, "attempts": []}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_GET(self):
        if self.path != "/__received":
            return self.answer(404)
        with lock:
            report = {k: state[k] for k in ("received", "unverified", "attempts")}
        self.answer(200, json.dumps(report).encode(), [("Content-Type", "application/json")])

    def do_POST(self):
        data = self.body()
        if self.path == "/__secrets":
            with lock:
                state["secrets"] = json.loads(data)["secrets"]
            return self.answer(204)
        if self.path == "/__faults":
            with lock:
                state["faults"] = json.loads(data)["faults"]
            return self.answer(204)
        headers = {k.lower(): v for k, v in self.headers.items()}
        with lock:
            secrets = list(state["secrets"])
            state["attempts"].append(headers.get("webhook-id"))
        if not secrets:
            return self.answer(503, b"no secret yet", [("Retry-After", "1")])
        verified = False
        for secret in secrets:
            try:
                Webhook(secret).verify(data, headers, json_parse=False)
                verified = True
                break
            except WebhookVerificationError:
                pass
        if not verified:
            with lock:
                state["unverified"] += 1
            return self.answer(401, b"signature")
        with lock:
            fault = state["faults"].pop(0) if state["faults"] else None
        if fault:
            time.sleep(fault.get("delay", 0))
            status = fault.get("status", 200)
            if status != 200:
                extra = [("Retry-After", fault["retry_after"])] if "retry_after" in fault else []
                return self.answer(status, b"fault", extra)
        kind = headers.get("content-type", "")
        text = data.decode()
        lines = json.loads(text) if kind == "application/json" else [
            json.loads(line) for line in text.splitlines() if line
        ]
        with lock:
            state["received"].append({
                "id": headers["webhook-id"],
                "timestamp": headers["webhook-timestamp"],
                "content_type": kind,
                "batch": headers.get("recruitd-batch"),
                "lines": lines,
            })
        self.answer(204)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"listening on {server.server_address[1]}", flush=True)
sys.stdout.close()
server.serve_forever()
