"""A Splunk HTTP Event Collector as its documentation describes it, for the tests: no real one
can run here (docs/decisions.md, D47). It enforces what a sender meets at a real collector:

- `Authorization: Splunk <token>`: none is 401 code 2; an unknown token 403 code 4; a
  disabled one 403 code 1.
- `POST /services/collector/event` (and `/services/collector`, `/services/collector/event/1.0`):
  events concatenated, parsed one after another as Splunk does; an event without `event` is
  400 code 12, a blank one code 13; a `time` that is not a number, or `fields` whose values
  are not strings (or lists of them), code 15; an index the token may not write, code 7; each
  with `invalid-event-number`. `Content-Encoding: gzip` is read (counted in `gzipped`, with
  the bytes before and after). A body over `max_content_length` is 413.
- Tokens with indexer acknowledgement need a channel (`X-Splunk-Request-Channel` or
  `?channel=`, a GUID): none is 400 code 10, another value code 11. Each request taken gets
  the channel's next `ackId` (from 0); `POST /services/collector/ack` says `true` for an id
  once it is indexed (after `ack_delay` seconds), once, and then forgets it. A token without
  acknowledgement asking there is 400 code 14.
- `GET /services/collector/health`: 200 code 17.

A test steers it: `POST /__config` {"tokens": {name: {"ack": bool, "indexes": [...],
"disabled": bool}}, "max_content_length": n, "ack_delay": s}; `POST /__faults` {"faults":
[{"status": 503, "code": 9, "retry_after": "1"}, …]} answers the next requests so;
`POST /__restart` forgets every channel (its pending acknowledgements never come);
`GET /__received` the events indexed, in the order taken, and counts.
"""

import gzip
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

GUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
TEXT = {
    0: "Success", 1: "Token disabled", 2: "Token is required", 3: "Invalid authorization",
    4: "Invalid token", 5: "No data", 6: "Invalid data format", 7: "Incorrect index",
    8: "Internal server error", 9: "Server is busy", 10: "Data channel is missing",
    11: "Invalid data channel", 12: "Event field is required", 13: "Event field cannot be blank",
    14: "ACK is disabled", 15: "Error in handling indexed fields", 17: "HEC is healthy",
}

lock = threading.Lock()
state = {
    "tokens": {}, "max_content_length": 1 << 20, "ack_delay": 0.5, "faults": [],
    # channel -> {"next": n, "pending": {ack_id: (ready_at, events)}}
    "channels": {},
    # events indexed: without acknowledgement when taken, with it when the ack is ready
    "indexed": [], "requests": 0, "ack_queries": 0, "refused": [],
    # event requests that came compressed: how many, their bytes, and those bytes inflated
    "gzipped": {"requests": 0, "bytes": 0, "inflated": 0},
}


def answer_of(code, extra=None):
    body = {"text": TEXT[code], "code": code}
    body.update(extra or {})
    return body


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, headers=()):
        data = json.dumps(body).encode() if not isinstance(body, bytes) else body
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read(self, events=False):
        data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if (self.headers.get("Content-Encoding") or "").lower() == "gzip":
            inflated = gzip.decompress(data)
            if events:
                with lock:
                    counts = state["gzipped"]
                    counts["requests"] += 1
                    counts["bytes"] += len(data)
                    counts["inflated"] += len(inflated)
            data = inflated
        return data

    def token(self):
        auth = self.headers.get("Authorization") or ""
        if not auth.startswith("Splunk "):
            return None, (401, answer_of(2))
        name = auth[len("Splunk "):].strip()
        with lock:
            token = state["tokens"].get(name)
        if token is None:
            return None, (403, answer_of(4))
        if token.get("disabled"):
            return None, (403, answer_of(1))
        return token, None

    def channel(self, token):
        query = parse_qs(urlsplit(self.path).query)
        channel = self.headers.get("X-Splunk-Request-Channel") or (query.get("channel") or [None])[0]
        if token.get("ack"):
            if not channel:
                return None, (400, answer_of(10))
            if not GUID.match(channel):
                return None, (400, answer_of(11))
        return channel, None

    def do_GET(self):
        path = urlsplit(self.path).path
        if path == "/services/collector/health":
            return self.reply(200, answer_of(17))
        if path == "/__received":
            with lock:
                report = {k: state[k] for k in ("indexed", "requests", "ack_queries", "refused",
                                                "gzipped")}
            return self.reply(200, report)
        self.reply(404, {"text": "The requested URL was not found on this server.", "code": 404})

    def do_POST(self):
        path = urlsplit(self.path).path
        if path.startswith("/__"):
            return self.control(path, json.loads(self.read() or b"{}"))
        if path == "/services/collector/ack":
            return self.ack()
        if path not in ("/services/collector", "/services/collector/event",
                        "/services/collector/event/1.0"):
            return self.reply(404, {"text": "The requested URL was not found on this server.",
                                    "code": 404})
        length = int(self.headers.get("Content-Length") or 0)
        with lock:
            state["requests"] += 1
            too_large = length > state["max_content_length"]
            fault = state["faults"].pop(0) if state["faults"] else None
        if too_large:
            self.rfile.read(length)
            return self.reply(413, {"text": "Content too large", "code": 413})
        data = self.read(events=True)
        token, refused = self.token()
        if refused:
            return self.refuse(*refused)
        channel, refused = self.channel(token)
        if refused:
            return self.refuse(*refused)
        if fault:
            extra = [("Retry-After", fault["retry_after"])] if "retry_after" in fault else []
            return self.reply(fault["status"], answer_of(fault.get("code", 8)), extra)
        events, refused = parse(data.decode("utf-8"), token)
        if refused:
            return self.refuse(*refused)
        with lock:
            if token.get("ack"):
                ch = state["channels"].setdefault(channel, {"next": 0, "pending": {}})
                ack_id = ch["next"]
                ch["next"] += 1
                ch["pending"][ack_id] = (time.time() + state["ack_delay"], events)
                return self.reply(200, answer_of(0, {"ackId": ack_id}))
            state["indexed"].extend(events)
        self.reply(200, answer_of(0))

    def refuse(self, status, body):
        with lock:
            state["refused"].append(body)
        self.reply(status, body)

    def ack(self):
        token, refused = self.token()
        if refused:
            return self.reply(*refused)
        if not token.get("ack"):
            return self.reply(400, answer_of(14))
        channel, refused = self.channel(token)
        if refused:
            return self.reply(*refused)
        asked = json.loads(self.read() or b"{}").get("acks", [])
        now = time.time()
        acks = {}
        with lock:
            state["ack_queries"] += 1
            pending = state["channels"].get(channel, {"pending": {}})["pending"]
            for ack_id in asked:
                ready = pending.get(ack_id)
                if ready is not None and ready[0] <= now:
                    # Indexed: said once, then forgotten.
                    state["indexed"].extend(ready[1])
                    del pending[ack_id]
                    acks[str(ack_id)] = True
                else:
                    acks[str(ack_id)] = False
        self.reply(200, {"acks": acks})

    def control(self, path, body):
        with lock:
            if path == "/__config":
                for key in ("tokens", "max_content_length", "ack_delay"):
                    if key in body:
                        state[key] = body[key]
            elif path == "/__faults":
                state["faults"] = body["faults"]
            elif path == "/__restart":
                state["channels"] = {}
        self.reply(200, {})


def parse(text, token):
    """The events of a body, as Splunk reads concatenated JSON; or the refusal."""
    decoder = json.JSONDecoder()
    events, i, n = [], 0, 0
    indexes = token.get("indexes")
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            break
        try:
            event, i = decoder.raw_decode(text, i)
        except ValueError:
            return None, (400, answer_of(6, {"invalid-event-number": n}))
        if not isinstance(event, dict):
            return None, (400, answer_of(6, {"invalid-event-number": n}))
        if "event" not in event:
            return None, (400, answer_of(12, {"invalid-event-number": n}))
        if event["event"] in ("", None):
            return None, (400, answer_of(13, {"invalid-event-number": n}))
        if "time" in event and (isinstance(event["time"], bool)
                                or not isinstance(event["time"], (int, float))):
            return None, (400, answer_of(15, {"invalid-event-number": n}))
        for value in (event.get("fields") or {}).values():
            values = value if isinstance(value, list) else [value]
            if not all(isinstance(v, str) for v in values):
                return None, (400, answer_of(15, {"invalid-event-number": n}))
        if indexes is not None and event.get("index", indexes[0] if indexes else None) not in indexes:
            return None, (400, answer_of(7, {"invalid-event-number": n}))
        events.append(event)
        n += 1
    if not events:
        return None, (400, answer_of(5))
    return events, None


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"listening on {server.server_address[1]}", flush=True)
sys.stdout.close()
server.serve_forever()
