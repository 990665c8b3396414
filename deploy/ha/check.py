#!/usr/bin/env python3
"""The failover check: recruitd on the topology of `deploy/ha/up`, written to and read from
while the database primary is killed, frozen, and a recruitd replica is killed; then the
history and the final state are checked.

    deploy/ha/up && deploy/ha/check.py [--duration 150] ; deploy/ha/down
    deploy/ha/check.py --self-test        # the checker on histories made to fail it

Generator: --writers (8) clients record batches of 5 accesses with their own entry ids and an
idempotency key each, alternating between the two recruitd replicas. Every attempt is logged
with its outcome: ok (201), failed (a refusal that is final), or unknown (no answer, 409 in
flight, 429, 502/503/504); an unknown batch is sent again with the same key until it is ok or
failed. Two readers page through the ledger meanwhile, and an exporter exports one writer's
entries at a time (`--read-database-url`: on a standby once it has caught up).
Nemesis: the primary's postgres killed (SIGKILL), the primary frozen (SIGSTOP for 20 s, then
SIGCONT), a recruitd replica killed and started again, a recruitd replica frozen for 30 s with
a client beside it stopped mid-COPY (what it holds must not stall the other replica). When the
members run in network namespaces (`HA_NETNS=1 deploy/ha/up`), partitions too
(`deploy/ha/net`): the primary cut off from the other members for 30 s while its clients
still reach it (split brain); what the primary sends the others lost, on and off
(asymmetric, flapping); a tenth of the packets between all members lost for 20 s; the
primary's link to the others congested for 20 s; a recruitd replica (each runs in a
namespace too) cut off from the database and everything else for 30 s while its clients
still reach it: what it held open (a transaction, a lease) must not stall the other replica.
`--faults` picks some.
Checker, from the history and the final state only: every acknowledged entry stored exactly
once; nothing stored that no batch explains (a batch that failed finally explains nothing);
every batch resolved within 20 s of the cluster having a primary again (a client's wait for
an answer from a frozen replica, to its own timeout of 15 s, not counted); every export holds
every batch of its writer acknowledged before it began; no 500; the chains verify
(`recruitd audit verify`). It prints each fault's recovery time (from the fault to the first
acknowledged batch after it).
Log stream: a stream of the organization, delivered by both replicas (one at a time) to a
receiver here that checks every batch's Standard Webhooks signature and answers one batch in
seven 503 and drops the connection on one in eleven after reading it. Checked: every
acknowledged entry received, positions first received in chain order without a gap, every
signature valid, and what was received clean under `recruitd audit verify --stream`.
Restore drill (`--restore-drill`): writers record, a differential backup is taken, a signed
checkpoint kept, the last WAL segment archived; every member is killed and its data removed,
the cluster restored (`deploy/ha/restore`); every acknowledged entry must be back exactly
once and the chains must verify against the checkpoint.
Self-tests: `--self-test` runs the checker on histories made to fail it; `--expect-loss` on a
topology started with `HA_SYNC=async` passes only if the checker finds acknowledged entries
lost (what asynchronous replication loses to a split brain), showing it can.
Needs only Python's standard library and the PostgreSQL client binaries.
"""

import argparse
import base64
import hashlib
import hmac
import http.client
import http.server
import json
import os
import signal
import ssl
import subprocess
import sys
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

RESOLVE_LIMIT_S = 20.0
BATCH = 5
GIVE_UP_S = 120.0


def env():
    """The addresses `deploy/ha/up` wrote to $HA_DIR/env."""
    path = Path(os.environ.get("HA_DIR", "/tmp/recruitd-ha")) / "env"
    values = {}
    for line in path.read_text().splitlines():
        name, _, value = line.removeprefix("export ").partition("=")
        values[name] = value.strip("'")
    return values


class History:
    """Events, each with its time on the monotonic clock, in the order they happened."""

    def __init__(self):
        self.events = []
        self.lock = threading.Lock()
        self.start = time.monotonic()

    def now(self):
        return round(time.monotonic() - self.start, 3)

    def add(self, **event):
        event["t"] = self.now()
        with self.lock:
            self.events.append(event)
        return event["t"]


def request(method, url, token, body=None, timeout=15.0, key=None):
    """(status, headers, parsed body); status 0 for no answer. `key`: the idempotency key."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", f"Bearer {token}")
    if key is not None:
        req.add_header("Idempotency-Key", f'"{key}"')
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return response.status, response.headers, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as e:
        try:
            payload = json.loads(e.read() or b"null")
        except ValueError:
            payload = None
        return e.code, e.headers, payload
    except (OSError, ValueError):
        return 0, {}, None


def writer(n, apps, token, subject, history, stop):
    """Records batches until told to stop, each until it is resolved."""
    batch = 0
    while not stop.is_set():
        batch += 1
        name = f"w{n}-{batch}"
        key = str(uuid.uuid4())
        now = datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
        ids = [f"pal_{uuid.uuid4().hex}" for _ in range(BATCH)]
        entries = [{
            "id": i, "access_time": now, "account_id": str(uuid.UUID(int=n + 1)),
            "ip_addresses": ["203.0.113.9"],
            "data_subject": {"type": "EMPLOYEE", "user": subject},
            "access_data": ["NAME"], "access_menu": "failover-check",
            "access_menu_path": f"/writer/{n}", "activity_category": "READ",
        } for i in ids]
        history.add(kind="invoke", batch=name, key=key, ids=ids)
        started, attempt = time.monotonic(), 0
        while True:
            app = apps[(n + attempt) % len(apps)]
            attempt += 1
            sent = history.now()
            status, headers, body = request(
                "POST", f"{app}/v1/audit-logs/privacy", token, {"entries": entries}, key=key)
            if status == 201:
                history.add(kind="ok", batch=name, status=status,
                            replayed=headers.get("Idempotent-Replayed") == "true")
                break
            code = (body or {}).get("error", {}).get("code") if isinstance(body, dict) else None
            if status in (0, 409, 429, 500, 502, 503, 504):
                history.add(kind="unknown", batch=name, status=status, code=code, app=app,
                            sent=sent)
                if time.monotonic() - started > GIVE_UP_S:
                    history.add(kind="unresolved", batch=name)
                    break
                wait = headers.get("Retry-After")
                time.sleep(min(float(wait), 5.0) if wait and wait.isdigit() else 0.5)
                continue
            history.add(kind="failed", batch=name, status=status, code=code)
            break


def reader(n, apps, token, window, history, stop):
    """Pages through the ledger until told to stop, logging each page's status."""
    while not stop.is_set():
        cursor = None
        app = apps[n % len(apps)]
        for _ in range(20):
            url = (f"{app}/v1/audit-logs/privacy?limit=100&timestamp_gte={window[0]}"
                   f"&timestamp_lt={window[1]}" + (f"&cursor={cursor}" if cursor else ""))
            status, _, body = request("GET", url, token, timeout=15.0)
            history.add(kind="read", status=status)
            if status != 200:
                time.sleep(0.5)
                break
            cursor = body["pagination"]["next_cursor"]
            if not cursor or stop.is_set():
                break
        time.sleep(0.2)


def exporter(apps, token, window, history, stop, writers):
    """Exports one writer's entries at a time, by its account, until told to stop; logs the
    entry ids each export held."""
    n = 0
    while not stop.is_set():
        k, app = n % writers, apps[n % len(apps)]
        n += 1
        url = (f"{app}/v1/audit-logs/privacy/export?timestamp_gte={window[0]}"
               f"&timestamp_lt={window[1]}&account_id={uuid.UUID(int=k + 1)}")
        req = urllib.request.Request(url)
        req.add_header("Authorization", f"Bearer {token}")
        began = round(time.monotonic() - history.start, 3)
        try:
            with urllib.request.urlopen(req, timeout=30.0) as response:
                ids = [json.loads(line)["entry"]["id"] for line in response.read().splitlines()]
                history.add(kind="export", writer=k, began=began, status=200, ids=ids)
        except urllib.error.HTTPError as e:
            history.add(kind="export", writer=k, began=began, status=e.code)
        except (OSError, ValueError, KeyError, http.client.HTTPException):
            # Cut mid-way (the application killed) or not answered: no verdict on it.
            history.add(kind="export", writer=k, began=began, status=0)
        time.sleep(3.0)


class Cluster:
    """The Patroni members and the recruitd replicas of `deploy/ha/up`."""

    def __init__(self, values):
        self.values = values
        self.dir = Path(values["HA_DIR"])
        self.rest = values["PATRONI_REST"].split()

    def leader(self):
        for n, url in enumerate(self.rest, start=1):
            try:
                with urllib.request.urlopen(f"{url}/primary", timeout=1) as r:
                    if r.status == 200:
                        return n
            except (OSError, ValueError):
                pass
        return None

    def postmaster(self, member):
        pid_file = self.dir / f"pg{member}" / "data" / "postmaster.pid"
        return int(pid_file.read_text().split()[0])

    def postgres_pids(self, member):
        postmaster = self.postmaster(member)
        children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True,
                                  text=True).stdout.split()
        return [postmaster] + [int(c) for c in children]

    def sql(self, query):
        """psql's answer to `query` on the write port, within 5 s (TimeoutExpired past it)."""
        return subprocess.run(
            [f"{self.values['PG_BIN']}/psql", self.values["DATABASE_URL"], "-X", "-At", "-c",
             query], capture_output=True, text=True, timeout=5,
            env={**os.environ, "PGCONNECT_TIMEOUT": "2"})

    def writable(self):
        """Whether the write port reaches a primary that commits a write: a message written to
        the WAL in a transaction (no table needed), whose commit waits for the synchronous
        standby as any write's does, so a primary cut off from its standbys does not count. (A
        transaction id alone writes no WAL and would not wait.)"""
        probe = ("SELECT NOT pg_is_in_recovery() AND "
                 "pg_logical_emit_message(true, 'failover-check', 'probe') IS NOT NULL")
        result = self.sql(probe)
        return result.returncode == 0 and result.stdout.strip() == "t"

    def wait_writable(self, limit=120.0):
        started = time.monotonic()
        while time.monotonic() - started < limit:
            try:
                if self.writable():
                    return True
            except subprocess.TimeoutExpired:
                pass
            time.sleep(0.25)
        return False

    def held(self):
        """The primary's sessions in a transaction for over 5 s (what a stalled write may wait
        for), as text; printed when a fault ends, so that a slow batch can be explained."""
        query = ("SELECT pid, state, wait_event_type || ':' || wait_event, "
                 "round(extract(epoch FROM now() - xact_start)), "
                 "left(regexp_replace(query, '\\s+', ' ', 'g'), 80) FROM pg_stat_activity "
                 "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() "
                 "AND xact_start < now() - interval '5 s'")
        try:
            result = self.sql(query)
            return result.stdout.strip() or result.stderr.strip() or "none"
        except subprocess.TimeoutExpired:
            return "the primary did not answer"

    STUCK_LOCK = 4242

    def stuck_copy(self):
        """A client beside replica 1 (in its namespace, when it has one) that takes a lock in a
        transaction and starts a `COPY … FROM STDIN`, then sends nothing: what a writer of
        recruitd looks like to the database when its network is cut, or its process frozen,
        mid-batch. Returned once the lock is held."""
        beside = ([str(Path(__file__).with_name("net")), "app-exec", "1"]
                  if self.values.get("HA_NETNS") == "1" else [])
        psql = f"{self.values['PG_BIN']}/psql"
        process = subprocess.Popen(
            [*beside, psql, self.values["DATABASE_URL"], "-X", "-q", "-c", "BEGIN",
             "-c", "CREATE TEMP TABLE stuck (n int)",
             "-c", f"SELECT pg_advisory_xact_lock({self.STUCK_LOCK})",
             "-c", "COPY stuck FROM STDIN"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "HA_PORT": self.values["HA_PORT"]})
        for _ in range(100):
            if self.stuck_held():
                return process
            time.sleep(0.1)
        process.kill()
        raise RuntimeError("the stuck COPY never took its lock")

    def stuck_held(self):
        """Whether the primary still holds the stuck COPY's lock (None: no answer)."""
        query = ("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                 f"AND objid = {self.STUCK_LOCK}")
        try:
            result = self.sql(query)
        except subprocess.TimeoutExpired:
            return None
        return None if result.returncode else result.stdout.strip() != "0"

    def app_pid(self, name):
        """The pid of replica `name` now: the last one started."""
        pids = [int(pid) for label, pid in map(str.split, (self.dir / "pids").read_text()
                                                .splitlines()) if label == name]
        if not pids:
            raise KeyError(name)
        return pids[-1]

    def net(self, *args):
        """deploy/ha/net on this topology's members."""
        subprocess.run([str(Path(__file__).with_name("net")), *map(str, args)], check=True,
                       env={**os.environ, "HA_PORT": self.values["HA_PORT"]})

    def restart_app(self, name):
        """Replica `name` started again by the command deploy/ha/up kept for it."""
        log = open(self.dir / f"{name}.out", "ab")
        process = subprocess.Popen([str(self.dir / name)], stdout=log, stderr=log,
                                   env={**os.environ, "RUST_LOG": "warn"})
        with open(self.dir / "pids", "a") as pids:
            pids.write(f"{name} {process.pid}\n")
        return process


def nemesis(cluster, history, stop, pause, faults):
    """The faults, about `pause` seconds apart. After each, a probe logs when the write port
    takes writes again (while a frozen primary is still frozen, if another took over)."""
    def probe():
        history.add(kind="writable", ok=cluster.wait_writable())

    def kill_primary():
        member = cluster.leader()
        history.add(kind="fault", fault="primary postgres killed (SIGKILL)", member=member)
        os.kill(cluster.postmaster(member), signal.SIGKILL)
        time.sleep(1)
        probe()

    def freeze_primary():
        member = cluster.leader()
        pids = cluster.postgres_pids(member)
        history.add(kind="fault", fault="primary frozen 20 s (SIGSTOP)", member=member)
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        time.sleep(1)
        watching = threading.Thread(target=probe)
        watching.start()
        time.sleep(19)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        history.add(kind="note", note="frozen primary resumed (SIGCONT)")
        watching.join()

    def kill_app():
        pid = cluster.app_pid("app1")
        history.add(kind="fault", fault="recruitd replica killed (SIGKILL)", member="app1")
        os.kill(pid, signal.SIGKILL)
        time.sleep(3)
        cluster.restart_app("app1")
        probe()

    def stuck_released(began):
        """Logs how long after `began` the stuck COPY's lock went (None: not within 29 s), then
        waits out the fault's 30 s. The database applies no statement or idle timeout to a COPY
        waiting for data: the lock it holds stops every writer until something ends it."""
        released = None
        while time.monotonic() - began < 29:
            if cluster.stuck_held() is False:
                released = round(time.monotonic() - began, 1)
                break
            time.sleep(0.5)
        history.add(kind="stuck", released=released)
        time.sleep(max(0.0, 29 - (time.monotonic() - began)))
        print(f"sessions held open 1 s before the fault ends:\n{cluster.held()}", flush=True)
        time.sleep(max(0.0, 30 - (time.monotonic() - began)))

    def cut_app():
        port = urllib.parse.urlsplit(cluster.values["APP_URLS"].split()[0]).port
        history.add(kind="fault", member="app1", fault="recruitd replica cut off from the "
                    "database 30 s, its clients still reach it")
        stuck = cluster.stuck_copy()
        cut = time.monotonic()
        cluster.net("cut-app", 1, port)
        watching = threading.Thread(target=probe)
        watching.start()
        stuck_released(cut)
        cluster.net("heal-app", 1)
        stuck.kill()
        history.add(kind="note", note="replica's link healed")
        watching.join()

    def freeze_app():
        # Its connections stay alive (the kernel answers for a stopped process): no keepalive
        # ends them, only the other replica.
        pid, url = cluster.app_pid("app1"), cluster.values["APP_URLS"].split()[0]
        history.add(kind="fault", member="app1", fault="recruitd replica frozen 30 s (SIGSTOP) "
                    "mid-COPY, its connections alive", frozen=url)
        stuck = cluster.stuck_copy()
        frozen = time.monotonic()
        os.kill(pid, signal.SIGSTOP)
        watching = threading.Thread(target=probe)
        watching.start()
        stuck_released(frozen)
        os.kill(pid, signal.SIGCONT)
        stuck.kill()
        history.add(kind="note", note="frozen replica resumed (SIGCONT)", thawed=url)
        watching.join()

    def isolate_primary():
        member = cluster.leader()
        history.add(kind="fault", member=member,
                    fault="primary cut off from the other members 30 s, clients still reach it")
        cluster.net("isolate", member)
        time.sleep(1)
        watching = threading.Thread(target=probe)
        watching.start()
        time.sleep(29)
        cluster.net("heal", member)
        history.add(kind="note", note="partition healed")
        watching.join()

    def flap_primary():
        member = cluster.leader()
        history.add(kind="fault", member=member,
                    fault="what the primary sends the other members lost, 4 s on, 4 s off, x4")
        for _ in range(4):
            cluster.net("oneway", member)
            time.sleep(4)
            cluster.net("heal", member)
            time.sleep(4)
        probe()

    def lossy_links():
        history.add(kind="fault", fault="10 % of the packets between the members lost 20 s")
        for member in (1, 2, 3):
            cluster.net("lossy", member, 10)
        time.sleep(20)
        cluster.net("heal")
        probe()

    def slow_links():
        member = cluster.leader()
        history.add(kind="fault", member=member, fault=f"the primary's link to the other "
                    f"members held to {SLOW_KBIT} kbit/s 20 s (congested: packets queue, then drop)")
        cluster.net("slow", member, SLOW_KBIT)
        time.sleep(20)
        cluster.net("heal", member)
        probe()

    named = {"kill": kill_primary, "freeze": freeze_primary, "app": kill_app,
             "isolate": isolate_primary, "flap": flap_primary, "lossy": lossy_links,
             "cut-app": cut_app, "freeze-app": freeze_app, "slow": slow_links}
    for name in faults:
        if stop.wait(pause):
            return
        try:
            named[name]()
        except Exception as e:
            # A fault not injected is a run that proves nothing: the verdict fails.
            history.add(kind="nemesis failed", fault=name, error=repr(e))
            raise


# The faults by name (--faults), in the order they run; the network's need HA_NETNS=1.
FAULTS = ("kill", "freeze", "app", "freeze-app", "isolate", "flap", "lossy", "slow", "cut-app")
NETWORK_FAULTS = ("isolate", "flap", "lossy", "slow", "cut-app")
# The congested link's rate: below what the writers' WAL needs under load.
SLOW_KBIT = 2000


class Receiver:
    """A log stream's receiver on this machine, where the replicas reach it: each batch's signature checked against the stream's
    secret (Standard Webhooks, v1), its lines kept in the order they arrive, and faults of its
    own: a 503 with Retry-After on every seventh batch, the connection dropped after reading
    every eleventh. Until it has the secret it answers 503."""

    def __init__(self, work, host):
        self.lines, self.unverified, self.batches = [], 0, 0
        self.secret, self.lock = None, threading.Lock()
        self.file = work / "received.ndjson"
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver.lock:
                    receiver.batches += 1
                    n, secret = receiver.batches, receiver.secret
                if secret is None or n % 7 == 0:
                    self.send_response(503)
                    self.send_header("Retry-After", "1")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if not signed(secret, self.headers, body):
                    with receiver.lock:
                        receiver.unverified += 1
                    self.send_response(401)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                with receiver.lock:
                    lines = [line for line in body.decode().splitlines() if line]
                    receiver.lines.extend(json.loads(line) for line in lines)
                    with open(receiver.file, "a") as kept:
                        kept.write("".join(line + "\n" for line in lines))
                if n % 11 == 0:
                    # Stored, and the answer lost: the batch comes again.
                    self.close_connection = True
                    return
                # Each answer says where it ends: TLS closed without close_notify is an error.
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = http.server.ThreadingHTTPServer((host, 0), Handler)
        # HTTPS with the certificate deploy/ha/up made for this machine's address.
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(work / "tls" / "receiver.pem", work / "tls" / "receiver.key")
        self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.url = f"https://{host}:{self.server.server_address[1]}/in"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def arrivals(self):
        """(position, entry id) of every line received, in the order received."""
        with self.lock:
            return [(line["position"], line["entry"]["id"]) for line in self.lines]


def signed(secret, headers, body):
    """Whether `body` carries a valid Standard Webhooks v1 signature by `secret`."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    content = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode()
    given = [s.removeprefix("v1,") for s in headers.get("webhook-signature", "").split()]
    return any(hmac.compare_digest(expected, g) for g in given)


def open_stream(values, work, owner, receiver):
    """A stream of the organization from its chain's start to `receiver`, made with the CLI as
    its owner; the receiver is given its secret."""
    settings = work / "stream.json"
    settings.write_text(json.dumps({"name": "failover SIEM", "after_position": 0,
                                    "destination": {"type": "https", "url": receiver.url}}))
    made = subprocess.run(
        [values["RECRUITD_BINARY"], "--database-url", values["DATABASE_URL"],
         "--outbound-allow", values["HOST_ADDRESS"], "log-stream", "create", "--user", owner,
         "--settings", str(settings), "--json"],
        capture_output=True, text=True,
        env={**os.environ, "RUST_LOG": "warn", "SSL_CERT_FILE": str(work / "tls" / "ca.pem")})
    if made.returncode != 0:
        sys.exit(f"the log stream was not made: {made.stderr}")
    stream = json.loads(made.stdout)
    with receiver.lock:
        receiver.secret = stream["signing_secret"]
    return stream["id"]


def stream_findings(acknowledged, arrivals):
    """What a stream's receiver got wrong, from the acknowledged entry ids and the (position,
    id) of each line in the order it arrived: entries never received, and positions first
    received out of chain order or after a gap."""
    received = {i for _, i in arrivals}
    disorder, top = [], 0
    for position, _ in arrivals:
        if position > top + 1:
            disorder.append(f"position {position} after {top}")
        top = max(top, position)
    return {
        "not delivered": sorted(i for i in acknowledged if i not in received),
        "delivered out of order": disorder,
    }


def delivered(values, receiver, stored, limit=180.0):
    """Waits until the receiver holds every stored entry (at most `limit` s); then checks what
    it holds with `recruitd audit verify --stream`: its findings, and the figures."""
    began = time.monotonic()
    while time.monotonic() - began < limit:
        if {i for _, i in receiver.arrivals()} >= set(stored):
            break
        time.sleep(1)
    waited = round(time.monotonic() - began, 1)
    verified = subprocess.run(
        [values["RECRUITD_BINARY"], "audit", "verify", "--stream", str(receiver.file),
         "--from-position", "0"],
        capture_output=True, text=True, env={**os.environ, "RUST_LOG": "warn"})
    arrivals = receiver.arrivals()
    findings = {
        "stream not verified": [] if verified.returncode == 0
        else [verified.stdout.strip()[-500:] or verified.stderr.strip()[-500:]],
        "stream batches unverified": [receiver.unverified] if receiver.unverified else [],
    }
    figures = {"stream lines received": len(arrivals),
               "stream duplicates": len(arrivals) - len({p for p, _ in arrivals}),
               "stream caught up after the writers stopped, s": waited}
    return findings, figures


def stored_ids(values, organization):
    """Every privacy ledger entry id of the organization, as stored (one line an entry)."""
    out = subprocess.run(
        [f"{values['PG_BIN']}/psql", values["DATABASE_URL"], "-X", "-At", "-c",
         f"SELECT 'pal_' || replace(id::text, '-', '') FROM privacy_audit_logs "
         f"WHERE organization_id = '{organization}'"],
        capture_output=True, text=True, check=True)
    return out.stdout.split()


def check(events, stored):
    """The verdict on a history and the final state: a dict of findings, each a list naming
    what it found, and the figures."""
    batches, first_attempt, outcome, resolved_at = {}, {}, {}, {}
    faults, writable, fivexx = [], [], 0
    for e in events:
        kind = e["kind"]
        if kind == "invoke":
            batches[e["batch"]] = e["ids"]
            first_attempt[e["batch"]] = e["t"]
        elif kind in ("ok", "failed", "unresolved"):
            outcome[e["batch"]] = kind
            resolved_at[e["batch"]] = e["t"]
        if kind in ("unknown", "read", "failed", "export") and e.get("status") == 500:
            fivexx += 1
        if kind == "fault":
            faults.append(e)
        if kind == "writable" and e.get("ok"):
            writable.append(e["t"])
    counts = {}
    for entry in stored:
        counts[entry] = counts.get(entry, 0) + 1
    acknowledged = [i for b, ids in batches.items() if outcome.get(b) == "ok" for i in ids]
    explained = {i for b, ids in batches.items() if outcome.get(b) != "failed" for i in ids}
    findings = {
        "lost": sorted(i for i in acknowledged if counts.get(i, 0) == 0),
        "duplicated": sorted(i for i, n in counts.items() if n > 1),
        "unexplained": sorted(i for i in counts if i not in explained),
        "unresolved": sorted(b for b in batches if outcome.get(b) in (None, "unresolved")),
        "slow": [],
        "server errors": [fivexx] if fivexx else [],
        "faults not injected": [f"{e['fault']}: {e['error']}" for e in events
                                if e["kind"] == "nemesis failed"],
        "stale exports": stale_exports(events, outcome, resolved_at, batches),
        # A cut-off or frozen client's transaction mid-COPY kept past the limit.
        "transactions held": [
            "a stalled client's COPY " + ("held to the end of the fault" if e["released"] is None
                                          else f"held {e['released']} s")
            for e in events if e["kind"] == "stuck"
            and (e["released"] is None or e["released"] > RESOLVE_LIMIT_S)],
    }
    fault_times = [f["t"] for f in faults]
    frozen = frozen_windows(events)
    waited = {}
    for e in events:
        # A client's wait for a replica that was frozen (no answer until its own timeout) is
        # no server's doing: not counted against the batch.
        if e["kind"] == "unknown" and e.get("status") == 0:
            for app, begin, end in frozen:
                if e.get("app") == app:
                    overlap = min(e["t"], end) - max(e["sent"], begin)
                    waited[e["batch"]] = waited.get(e["batch"], 0.0) + max(0.0, overlap)
    longest = 0.0
    for b, done in resolved_at.items():
        # From when it began; or, for a batch a fault caught (one that struck while it ran, or
        # up to a client's timeout before), from when the write port took writes again after
        # that fault (a batch resolved before the probe saw it counts nothing).
        began = first_attempt[b]
        struck = [f for f in fault_times if began - 15.0 <= f <= done]
        if struck:
            back = next((w for w in writable if w > struck[-1]), None)
            since = max(began, back) if back is not None and back <= done else done
        else:
            since = began
        took = done - since - waited.get(b, 0.0)
        longest = max(longest, took)
        if took > RESOLVE_LIMIT_S:
            findings["slow"].append(f"{b} ({took:.1f} s)")
    figures = {"batches": len(batches), "acknowledged entries": len(acknowledged),
               "stored entries": len(stored), "longest resolution s": round(longest, 1)}
    if waited:
        figures["longest wait on a frozen replica s"] = round(max(waited.values()), 1)
    held = [e["released"] for e in events if e["kind"] == "stuck"]
    if held:
        figures["a stalled client's COPY ended after s"] = held
    return findings, figures


def frozen_windows(events):
    """(replica, from, to) of each time a replica was frozen (to: its end, or never)."""
    windows = []
    for f in (e for e in events if e["kind"] == "fault" and "frozen" in e):
        thawed = next((e["t"] for e in events if e.get("thawed") == f["frozen"]
                       and e["t"] > f["t"]), float("inf"))
        windows.append((f["frozen"], f["t"], thawed))
    return windows


def stale_exports(events, outcome, resolved_at, batches):
    """Exports that lack an entry of their writer's batches acknowledged before they began:
    each named by when it began and how many it lacked."""
    stale = []
    for e in (e for e in events if e["kind"] == "export" and e["status"] == 200):
        held = set(e["ids"])
        prefix = f"w{e['writer']}-"
        lacked = sum(1 for b, ids in batches.items() if b.startswith(prefix)
                     and outcome.get(b) == "ok" and resolved_at[b] < e["began"]
                     for i in ids if i not in held)
        if lacked:
            stale.append(f"export at {e['began']} s lacks {lacked}")
    return stale


def recoveries(events):
    """Per fault: when it began, when the write port took writes again, and how long until the
    first batch sent after the fault was acknowledged."""
    rows = []
    sent = {e["batch"]: e["t"] for e in events if e["kind"] == "invoke"}
    for f in (e for e in events if e["kind"] == "fault"):
        first_ok = next((e["t"] for e in events if e["kind"] == "ok" and e["t"] > f["t"]
                         and sent[e["batch"]] > f["t"]), None)
        back = next((e["t"] for e in events if e["kind"] == "writable" and e["t"] > f["t"]), None)
        rows.append((f["fault"], f["t"], None if back is None else round(back - f["t"], 1),
                     None if first_ok is None else round(first_ok - f["t"], 1)))
    return rows


def heavy_reads(apps):
    """recruitd_heavy_reads_total by where they ran, summed over the applications' metrics."""
    totals = {}
    for app in apps:
        try:
            with urllib.request.urlopen(f"{app}/metrics", timeout=5.0) as response:
                for line in response.read().decode().splitlines():
                    if line.startswith("recruitd_heavy_reads_total{"):
                        labels, _, value = line.partition("} ")
                        on = labels.split('on="')[1].rstrip('"')
                        totals[on] = totals.get(on, 0) + int(float(value))
        except OSError:
            pass
    return totals


def setup(values, work, clients):
    """An organization with an owner, and `clients` tokens that record and read the
    ledger."""
    org, owner = uuid.uuid4().hex, uuid.uuid4().hex
    document = {
        "organizations": [{
            "id": f"org_{org}", "name": "Failover check", "domain": "failover.example",
            "settings": {
                "work_hours": [], "interview_buffer": {"before_minutes": 0, "after_minutes": 0},
                "interviewer_load_limits": {
                    "daily": {"maximum": {"limit": 4, "type": "NUMBER_OF_INTERVIEWS"},
                              "minimum": {"interviews": 0, "minutes": 0}},
                    "weekly": {"maximum": {"limit": 15, "type": "NUMBER_OF_INTERVIEWS"},
                               "minimum": {"interviews": 0, "minutes": 0}}},
                "feedback_writing_time_minutes": 15,
                "conflict_keywords": {"out_of_office": [], "avoid": [],
                                      "available_if_needed": [], "recruiting_block": []},
            },
        }],
        "users": [{"id": f"usr_{owner}", "organization_id": f"org_{org}", "name": "Owner",
                   "email": "owner@failover.example", "role": "OWNER"}],
    }
    path = work / "failover-directory.json"
    path.write_text(json.dumps(document))
    binary, url = values["RECRUITD_BINARY"], values["DATABASE_URL"]
    quiet = {**os.environ, "RUST_LOG": "warn"}
    subprocess.run([binary, "--database-url", url, "import", str(path)], check=True,
                   stdout=subprocess.DEVNULL, env=quiet)
    tokens = []
    # A token for each client: the rate limits are per token, as for separate services.
    for _ in range(clients):
        created = subprocess.run(
            [binary, "--database-url", url, "token", "create", "--user", f"usr_{owner}",
             "--scopes", "audit_logs:write,audit_logs:read", "--json"],
            check=True, capture_output=True, text=True, env=quiet)
        tokens.append(json.loads(created.stdout)["token"])
    return str(uuid.UUID(org)), f"usr_{owner}", tokens


def restore_drill(values, cluster, writers, duration):
    """The restore drill on the topology: writers record for `duration` s; a differential
    backup a third of the way, a checkpoint kept outside (signed, in the topology's
    directory) two thirds of the way; the writers stopped, the last WAL segment archived
    (`deploy/ha/backup check`), every member killed and its data removed, the cluster restored
    (`deploy/ha/restore --lost`). Then every acknowledged entry must be stored exactly once,
    nothing unexplained, and the chains must verify against the checkpoint. Returns the exit
    status."""
    here = Path(__file__).parent
    binary, url = values["RECRUITD_BINARY"], values["DATABASE_URL"]
    quiet = {**os.environ, "RUST_LOG": "warn"}
    key, kept = cluster.dir / "checkpoint.pem", cluster.dir / "kept.ndjson"
    subprocess.run([binary, "audit", "keygen", str(key)], check=True, capture_output=True,
                   env=quiet)
    organization, owner, tokens = setup(values, cluster.dir, writers)
    apps, history, stop = values["APP_URLS"].split(), History(), threading.Event()
    threads = [threading.Thread(target=writer, args=(n, apps, tokens[n], owner, history, stop))
               for n in range(writers)]
    for t in threads:
        t.start()
    time.sleep(duration / 3)
    subprocess.run([str(here / "backup"), "--type=diff", "backup"], check=True)
    history.add(kind="note", note="differential backup taken")
    time.sleep(duration / 3)
    with open(kept, "w") as out:
        subprocess.run([binary, "--database-url", url, "--checkpoint-key", str(key), "audit",
                        "checkpoint"], check=True, stdout=out, env=quiet)
    time.sleep(duration / 3)
    stop.set()
    for t in threads:
        t.join()
    subprocess.run([str(here / "backup"), "check"], check=True)
    began = time.monotonic()
    subprocess.run([str(here / "restore"), "--lost"], check=True)
    took = time.monotonic() - began
    stored = stored_ids(values, organization)
    findings, figures = check(history.events, stored)
    findings["chains"] = chains(values, "--checkpoint-key", key, "audit", "verify",
                                "--checkpoint", kept)
    print(f"restore drill: {figures['acknowledged entries']} entries acknowledged, "
          f"{figures['stored entries']} stored after every member was lost and the cluster "
          f"restored from pgBackRest (latest point) in {took:.1f} s")
    return verdict(findings, "every acknowledged entry restored exactly once, nothing "
                   "unexplained, the chains verify against the checkpoint kept outside")


def chains(values, *command):
    """What `recruitd --database-url … COMMAND` (a verification) found wrong: nothing, or the
    end of what it printed."""
    verified = subprocess.run(
        [values["RECRUITD_BINARY"], "--database-url", values["DATABASE_URL"], *map(str, command)],
        capture_output=True, text=True, env={**os.environ, "RUST_LOG": "warn"})
    if verified.returncode == 0:
        return []
    return [verified.stdout.strip()[-500:] or verified.stderr.strip()[-500:]]


def verdict(findings, passed):
    """Prints each finding, or `passed` when there is none; the exit status."""
    failed = {k: v for k, v in findings.items() if v}
    for name, found in failed.items():
        print(f"FAILED, {name}: {found[:10]}{' …' if len(found) > 10 else ''}")
    if not failed:
        print(passed)
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=150.0)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--self-test", action="store_true")
    parser.add_argument("--faults", type=lambda v: v.split(","), default=None,
                        help=f"some of {','.join(FAULTS)} (default: all the topology allows)")
    parser.add_argument("--restore-drill", action="store_true",
                        help="write, back up, lose every member, restore (deploy/ha/restore)")
    parser.add_argument("--expect-loss", action="store_true",
                        help="pass only if acknowledged entries were lost (HA_SYNC=async)")
    args = parser.parse_args()
    if args.self_test:
        result = unittest.main(argv=[sys.argv[0]], exit=False, verbosity=1).result
        sys.exit(0 if result.wasSuccessful() else 1)
    values = env()
    cluster = Cluster(values)
    if args.restore_drill:
        sys.exit(restore_drill(values, cluster, args.writers, args.duration))
    netns = values.get("HA_NETNS") == "1"
    faults = args.faults or [f for f in FAULTS if netns or f not in NETWORK_FAULTS]
    unknown = [f for f in faults if f not in FAULTS or (f in NETWORK_FAULTS and not netns)]
    if unknown:
        sys.exit(f"faults {unknown}: not faults of this checker, or need HA_NETNS=1")
    organization, owner, tokens = setup(values, cluster.dir, args.writers + 3)
    receiver = Receiver(cluster.dir, values["HOST_ADDRESS"])
    open_stream(values, cluster.dir, owner, receiver)
    apps = values["APP_URLS"].split()
    history = History()
    stop, stop_nemesis = threading.Event(), threading.Event()
    now = datetime.now(timezone.utc)
    window = ((now - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
              (now + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ"))
    threads = [threading.Thread(target=writer, args=(n, apps, tokens[n], owner, history, stop))
               for n in range(args.writers)]
    threads += [threading.Thread(target=reader,
                                 args=(n, apps, tokens[args.writers + n], window, history, stop))
                for n in range(2)]
    threads.append(threading.Thread(
        target=exporter, args=(apps, tokens[args.writers + 2], window, history, stop, args.writers)))
    for t in threads:
        t.start()
    pause = args.duration / (len(faults) + 1)
    chaos = threading.Thread(target=nemesis,
                             args=(cluster, history, stop_nemesis, pause, faults))
    chaos.start()
    chaos.join()
    time.sleep(max(0.0, args.duration - (time.monotonic() - history.start)))
    stop.set()
    for t in threads:
        t.join()
    events = history.events
    (cluster.dir / "history.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    stored = stored_ids(values, organization)
    findings, figures = check(events, stored)
    if args.expect_loss:
        # The self-test of an asynchronous topology: the loss must be seen.
        lost = findings["lost"]
        print(f"acknowledged entries: {figures['acknowledged entries']}, lost: {len(lost)}")
        if not lost:
            sys.exit("FAILED: nothing acknowledged was lost on an asynchronous topology under "
                     f"{', '.join(faults)}: the checker or the fault cannot show a loss")
        print("as expected, the checker caught the entries asynchronous replication lost")
        sys.exit(0)
    streamed, stream_figures = delivered(values, receiver, stored)
    ok = {e["batch"] for e in events if e["kind"] == "ok"}
    acknowledged = [i for e in events if e["kind"] == "invoke" and e["batch"] in ok
                    for i in e["ids"]]
    findings.update(streamed)
    findings.update(stream_findings(acknowledged, receiver.arrivals()))
    figures.update(stream_figures)
    findings["chains"] = chains(values, "audit", "verify")
    print("\n| fault | at s | writable again after s | first new batch acknowledged after s |")
    print("|---|---|---|---|")
    for fault, at, back, first in recoveries(events):
        print(f"| {fault} | {at} | {back} | {first} |")
    print()
    for name, value in figures.items():
        print(f"{name}: {value}")
    unknown = sum(1 for e in events if e["kind"] == "unknown")
    statuses = {}
    for e in events:
        if e["kind"] == "unknown":
            statuses[e["status"]] = statuses.get(e["status"], 0) + 1
    print(f"unknown attempts, retried with their key: {unknown} {statuses}")
    print(f"reads: {sum(1 for e in events if e['kind'] == 'read')}, failed: "
          f"{sum(1 for e in events if e['kind'] == 'read' and e['status'] != 200)}")
    exports = [e for e in events if e["kind"] == "export"]
    print(f"exports: {len(exports)}, whole: {sum(1 for e in exports if e['status'] == 200)}, "
          f"entries held: {sum(len(e.get('ids', [])) for e in exports)}; heavy reads "
          f"(replicas that ran to the end): {heavy_reads(apps)}")
    sys.exit(verdict(findings, "every acknowledged entry stored exactly once, nothing "
                     f"unexplained, every batch resolved within {RESOLVE_LIMIT_S:.0f} s of a "
                     "writable primary, no 500, the chains verify; the log stream delivered "
                     "every entry in order, verified"))


class CheckerTest(unittest.TestCase):
    """The checker names what it must find: a history made to fail it does."""

    def history(self):
        return [
            {"kind": "invoke", "batch": "w0-1", "ids": ["p1", "p2"], "t": 0.0},
            {"kind": "ok", "batch": "w0-1", "status": 201, "t": 0.1},
            {"kind": "invoke", "batch": "b", "ids": ["p3"], "t": 0.2},
            {"kind": "unknown", "batch": "b", "status": 503, "t": 0.3},
            {"kind": "fault", "fault": "primary killed", "t": 0.4},
            {"kind": "writable", "ok": True, "t": 5.0},
            {"kind": "ok", "batch": "b", "status": 201, "t": 30.0},
            {"kind": "invoke", "batch": "c", "ids": ["p4"], "t": 31.0},
            {"kind": "failed", "batch": "c", "status": 422, "t": 31.1},
            {"kind": "read", "status": 500, "t": 32.0},
            {"kind": "export", "writer": 0, "began": 0.05, "status": 200, "ids": [], "t": 0.2},
            {"kind": "export", "writer": 0, "began": 33.0, "status": 200, "ids": ["p1"],
             "t": 33.5},
        ]

    def test_a_sound_history_passes(self):
        events = [e for e in self.history() if e["kind"] != "read"]
        events[6] = dict(events[6], t=6.0)
        events[-1] = dict(events[-1], ids=["p1", "p2"])
        findings, figures = check(events, ["p1", "p2", "p3"])
        self.assertEqual({k: v for k, v in findings.items() if v}, {})
        self.assertEqual(figures["acknowledged entries"], 3)

    def test_lost_duplicated_unexplained_slow_and_500_are_named(self):
        # p2 acknowledged but missing; p1 stored twice; p4 of a failed batch and p9 of no
        # batch stored; b resolved 25 s after the primary was back; a read got a 500; an
        # export began after w0-1 was acknowledged and lacks p2 (one before it may lack both).
        findings, _ = check(self.history(), ["p1", "p1", "p3", "p4", "p9"])
        self.assertEqual(findings["lost"], ["p2"])
        self.assertEqual(findings["duplicated"], ["p1"])
        self.assertEqual(findings["unexplained"], ["p4", "p9"])
        self.assertEqual(findings["slow"], ["b (25.0 s)"])
        self.assertEqual(findings["server errors"], [1])
        self.assertEqual(findings["stale exports"], ["export at 33.0 s lacks 1"])

    def test_a_transaction_the_database_kept_for_a_cut_off_client_is_named(self):
        events = self.history() + [{"kind": "stuck", "released": None, "t": 40.0},
                                   {"kind": "stuck", "released": 8.5, "t": 80.0},
                                   {"kind": "stuck", "released": 21.0, "t": 120.0}]
        findings, _ = check(events, ["p1", "p2", "p3"])
        self.assertEqual(findings["transactions held"],
                         ["a stalled client's COPY held to the end of the fault",
                          "a stalled client's COPY held 21.0 s"])

    def test_waiting_on_a_frozen_replica_is_the_clients_and_on_a_live_one_the_servers(self):
        frozen, live = "http://10.0.0.21:1", "http://10.0.0.22:1"
        events = [
            {"kind": "fault", "fault": "replica frozen", "frozen": frozen, "t": 10.0},
            {"kind": "writable", "ok": True, "t": 10.2},
            {"kind": "invoke", "batch": "a", "ids": ["p1"], "t": 10.5},
            {"kind": "unknown", "batch": "a", "status": 504, "app": live, "sent": 10.5,
             "t": 20.5},
            {"kind": "unknown", "batch": "a", "status": 0, "app": frozen, "sent": 21.0,
             "t": 36.0},
            {"kind": "ok", "batch": "a", "status": 201, "t": 36.5},
            {"kind": "invoke", "batch": "b", "ids": ["p2"], "t": 11.0},
            {"kind": "unknown", "batch": "b", "status": 0, "app": live, "sent": 11.0,
             "t": 26.0},
            {"kind": "ok", "batch": "b", "status": 201, "t": 36.5},
            {"kind": "note", "note": "resumed", "thawed": frozen, "t": 40.0},
        ]
        findings, figures = check(events, ["p1", "p2"])
        self.assertEqual(findings["slow"], ["b (25.5 s)"])
        self.assertEqual(figures["longest wait on a frozen replica s"], 15.0)

    def test_a_fault_that_could_not_be_injected_fails_the_run(self):
        events = self.history() + [{"kind": "nemesis failed", "fault": "freeze-app",
                                    "error": "ProcessLookupError(3)", "t": 50.0}]
        findings, _ = check(events, ["p1", "p2", "p3"])
        self.assertEqual(findings["faults not injected"], ["freeze-app: ProcessLookupError(3)"])

    def test_a_batch_never_resolved_is_named(self):
        events = self.history()[:4]
        findings, _ = check(events, ["p1", "p2"])
        self.assertEqual(findings["unresolved"], ["b"])

    def test_a_stream_that_skips_reorders_or_loses_is_named(self):
        # Redelivery from an earlier position (a lost answer, a lease taken over) is sound.
        sound = [(1, "p1"), (2, "p2"), (1, "p1"), (2, "p2"), (3, "p3")]
        found = stream_findings(["p1", "p2", "p3"], sound)
        self.assertEqual({k: v for k, v in found.items() if v}, {})
        # An acknowledgement taken before the destination's: p2 never arrives, p3 jumps it.
        found = stream_findings(["p1", "p2", "p3"], [(1, "p1"), (3, "p3")])
        self.assertEqual(found["not delivered"], ["p2"])
        self.assertEqual(found["delivered out of order"], ["position 3 after 1"])

    def test_a_signature_is_checked_as_standard_webhooks_says(self):
        # The specification's example.
        secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
        headers = {"webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
                   "webhook-timestamp": "1614265330",
                   "webhook-signature": "v1,bogus v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="}
        body = b'{"test": 2432232314}'
        self.assertTrue(signed(secret, headers, body))
        self.assertFalse(signed(secret, headers, body + b" "))


if __name__ == "__main__":
    main()
