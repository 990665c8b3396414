#!/usr/bin/env python3
"""recruitd against the database's own limit, side by side, in one run on one machine.

    bench/run.py jobs      # scenarios 1 and 6: job and organization reads vs pgbench, memory
    bench/run.py ledger    # scenario 2: ledger pages, first vs a cursor 1 000 000 entries deep
    bench/run.py adapter   # scenario 3: the adapter vs bare tokio-postgres, in one process
    bench/run.py ids       # scenario 4: identifier parsing and formatting vs uuid (divan)
    bench/run.py import    # scenario 5: NDJSON import into PostgreSQL and SQLite
    bench/run.py review    # a month's access review of 1 000 000 entries, against its goal
    bench/run.py soak      # mixed load for --minutes on PostgreSQL and SQLite: RSS over time, 5xx
    bench/run.py revocation  # under load: how long a revocation or a demotion takes to be seen
    bench/run.py record    # recording accesses in 1 000-entry batches vs PostgreSQL's own COPY
    bench/run.py recorded  # recorded ledger reads vs the hand-written transaction (RECORDED_SQL)
    bench/run.py stream    # recording with no log stream vs with three, and whether they keep up
    bench/run.py verify    # `recruitd audit verify` of --entries entries vs reading them with COPY
    bench/run.py export    # `recruitd audit export` of --entries entries vs COPY of the same rows
    bench/run.py reference # job, organization and recorded page reads vs the lean reference
                           # server (bench/lean) and pgbench, interleaved, against the targets
    bench/run.py instructions  # user-space instructions, cache misses and mispredicted branches
                               # per read (valgrind) vs the reference and, with --baseline
                               # BINARY, vs another build

Each scenario starts a throwaway PostgreSQL cluster (initdb into a temporary directory, a free
port; as the `postgres` user when run as root) unless DATABASE_URL names a database to use,
builds recruitd in release mode, loads the data, runs the HTTP load (wrk) and the database load
(pgbench) for the same duration and client counts, and prints a table. Nothing else may run on
the machine meanwhile; the ratios are what to compare between machines, not the absolute rates.
BENCH_SERVER_LOG=FILE keeps the servers' logs (warnings and errors) in FILE.

Options: --duration SECONDS (default 20), --connections 8,64, --entries N (ledger),
--organizations N (ledger), --minutes N (soak, default 10), --stores postgres,sqlite (soak),
--trials N (revocation, default 200).
Needs pgbench and psql (the PostgreSQL binaries) and wrk, which is installed with apt-get when
missing and the script runs as root.
"""

import argparse
import http.client
import datetime
import json
import math
import os
import pwd
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import zoneinfo
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release" / "recruitd"
TICK = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_bin(name):
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    if not candidates:
        sys.exit(f"{name} not found: install the PostgreSQL server binaries")
    return str(candidates[-1])


class Cluster:
    """A throwaway PostgreSQL cluster, removed on exit."""

    def __init__(self, durable=False):
        self.dir = Path(tempfile.mkdtemp(prefix="recruitd-bench-"))
        self.port = free_port()
        as_root = os.geteuid() == 0
        self.user = pwd.getpwnam("postgres") if as_root else None
        if self.user:
            os.chown(self.dir, self.user.pw_uid, self.user.pw_gid)
        self.run([pg_bin("initdb"), "-D", str(self.dir / "data"), "-A", "trust", "-U", "postgres",
                  "--no-sync"])
        options = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 "
                   "-c shared_buffers=1GB -c max_connections=200")
        if not durable:
            # Reads only: durability settings do not change what they measure.
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self.run([pg_bin("pg_ctl"), "-D", str(self.dir / "data"), "-o", options, "-w", "-l",
                  str(self.dir / "log"), "start"])
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/bench"
        psql("postgres://postgres@127.0.0.1:%d/postgres" % self.port, "CREATE DATABASE bench")

    def run(self, command):
        def demote():
            if self.user:
                os.setgid(self.user.pw_gid)
                os.setuid(self.user.pw_uid)
        subprocess.run(command, check=True, preexec_fn=demote, stdout=subprocess.DEVNULL)

    def stop(self):
        try:
            self.run([pg_bin("pg_ctl"), "-D", str(self.dir / "data"), "-m", "immediate", "stop"])
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def psql(url, sql, *args):
    out = subprocess.run([pg_bin("psql"), url, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1",
                          "-c", sql, *args], check=True, capture_output=True, text=True)
    return out.stdout.strip()


def server_log():
    """Where a server's log goes: appended to $BENCH_SERVER_LOG when set, else nowhere."""
    path = os.environ.get("BENCH_SERVER_LOG")
    return open(path, "a") if path else subprocess.DEVNULL


class Server:
    """recruitd serving the database; its CPU time and peak memory read from /proc. Rate limits
    are off: the benchmarks measure the server's capacity, not its quotas."""

    def __init__(self, url, *extra, env=None, binary=BIN, wrapper=()):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [*wrapper, str(binary), "--database-url", url, "--db-pool-size", "32", "serve",
             "--listen", f"127.0.0.1:{self.port}", *extra],
            stdout=subprocess.PIPE, stderr=server_log(), text=True,
            env={**os.environ, "RUST_LOG": "warn", "RECRUITD_RATE_LIMIT_READS": "off",
                 "RECRUITD_RATE_LIMIT_LEDGER_READS": "off", "RECRUITD_RATE_LIMIT_WRITES": "off",
                 "RECRUITD_RATE_LIMIT_AUTH_FAILURES": "off", **(env or {})})
        for _ in range(600):
            try:
                urllib.request.urlopen(self.base + "/readyz", timeout=1)
                return
            except OSError:
                if self.process.poll() is not None:
                    sys.exit("recruitd did not start")
                time.sleep(0.1)
        sys.exit("recruitd did not become ready")

    def cpu_seconds(self):
        return cpu_seconds(self.process.pid)

    def peak_rss_mib(self):
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def reset_peak(self):
        """Starts VmHWM again from the current RSS (`clear_refs` 5), so that the next peak is
        one phase's."""
        Path(f"/proc/{self.process.pid}/clear_refs").write_text("5")

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)


def ensure_tool(command, package):
    """`command`, installed from the distribution's `package` when missing (as root, with
    apt-get)."""
    if shutil.which(command):
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        sys.exit(f"{command} not found: install it (Debian: apt-get install {package})")
    print(f"installing {package} with apt-get", file=sys.stderr)
    quiet = {"stdout": subprocess.DEVNULL, "env": {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}}
    if subprocess.run(["apt-get", "install", "-y", "-q", package], **quiet).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], check=True, **quiet)
        subprocess.run(["apt-get", "install", "-y", "-q", package], check=True, **quiet)


def millis(value):
    number, unit = re.match(r"([\d.]+)(us|ms|s)", value).groups()
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def wrk_script(paths, token):
    """A wrk script (a temporary file, for the caller to remove) that GETs random `paths`
    with `token`."""
    script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
    script.write("local paths = {%s}\n" % ",".join(json.dumps(p) for p in paths))
    script.write('local headers = {["Authorization"] = "Bearer %s"}\n' % token)
    script.write("request = function()\n"
                 "  return wrk.format('GET', paths[math.random(#paths)], headers)\n"
                 "end\n")
    script.close()
    return script


def wrk(base, paths, token, connections, duration):
    """req/s, p50 and p99 in ms, and the number of requests, of GETs of random `paths`."""
    script = wrk_script(paths, token)
    out = subprocess.run(["wrk", f"-t{min(2, connections)}", f"-c{connections}", f"-d{duration}s", "--latency",
                          "-s", script.name, base], check=True, capture_output=True,
                         text=True).stdout
    os.unlink(script.name)
    if "Non-2xx" in out or "Socket errors" in out:
        sys.exit(f"wrk saw failures:\n{out}")
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    count = int(re.search(r"(\d+) requests in", out).group(1))
    p50 = millis(re.search(r"\s50%\s+(\S+)", out).group(1))
    p99 = millis(re.search(r"\s99%\s+(\S+)", out).group(1))
    return rate, p50, p99, count


def pgbench(url, sql, connections, duration):
    """tps, p50 and p99 in ms of `sql` (a pgbench script), prepared, `connections` clients."""
    work = Path(tempfile.mkdtemp())
    (work / "script.sql").write_text(sql)
    out = subprocess.run([pg_bin("pgbench"), "-n", "-M", "prepared", "-c", str(connections),
                          "-j", "2", "-T", str(duration), "-l", "--log-prefix",
                          str(work / "log"), "-f", str(work / "script.sql"), url],
                         check=True, capture_output=True, text=True).stdout
    tps = float(re.search(r"tps = ([\d.]+)", out).group(1))
    latencies = []
    for log in work.glob("log*"):
        for line in log.read_text().splitlines():
            latencies.append(int(line.split()[2]) / 1000)
    shutil.rmtree(work)
    latencies.sort()
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]
    return tps, p(0.50), p(0.99)


def build(*examples):
    command = ["cargo", "build", "--release", "--locked", "-p", "recruitd"]
    subprocess.run(command, check=True, cwd=ROOT)
    for example in examples:
        subprocess.run(["cargo", "build", "--release", "--locked", "-p", "recruit-service",
                        "--example", example], check=True, cwd=ROOT)


def demo(url):
    """Loads the demo data through `serve --demo`; returns the owner token."""
    server = Server(url, "--demo")
    token = None
    lines = iter(server.process.stdout.readline, "")
    for line in lines:
        if line.startswith("Owner token"):
            token = next(lines).strip()
            break
    server.stop()
    return token


JOB_SQL = """\\set i random(1, {count})
SELECT json_build_object(
  'id', j.id, 'name', j.name, 'status', j.status, 'confidential', j.confidential,
  'locations', j.locations, 'ats', json_build_object('type', j.ats_type, 'id', j.ats_id),
  'created_at', j.created_at, 'updated_at', j.updated_at,
  'settings', to_jsonb(s) - 'organization_id' - 'job_id',
  'default_task_queue_id', j.default_task_queue_id, 'locale', j.locale,
  'remote_ats_hiring_process', json_build_object('ats_id', j.remote_ats_id,
     'name', j.remote_name, 'status', j.remote_status),
  'hiring_team', (SELECT coalesce(json_agg(json_build_object('role', t.role,
     'user', json_build_object('id', t.user_id, 'name', u.name)) ORDER BY t.position), '[]')
     FROM job_hiring_team t JOIN users u ON u.organization_id = t.organization_id
       AND u.id = t.user_id
     WHERE t.organization_id = j.organization_id AND t.job_id = j.id))
FROM jobs j JOIN job_settings s ON s.organization_id = j.organization_id AND s.job_id = j.id
WHERE j.organization_id = '{org}' AND j.id = ('{{{ids}}}'::uuid[])[:i];
"""

ORGANIZATION_SQL = """SELECT json_build_object(
  'id', o.id, 'name', o.name, 'domain', o.domain,
  'settings', to_jsonb(o) - 'id' - 'name' - 'domain',
  'work_hours', (SELECT coalesce(json_agg(json_build_object('day', w.day, 'start', w.start_time,
     'end', w.end_time) ORDER BY w.position), '[]')
     FROM organization_work_hours w WHERE w.organization_id = o.id))
FROM organizations o WHERE o.id = '{org}';
"""


def table(header, rows):
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(str(c).rjust(w) for c, w in zip(r, widths)) + " |"
    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print(line(row))


def scenario_jobs(url, args):
    token = demo(url)
    # The demo's tokens belong to its first organization.
    org = psql(url, "SELECT organization_id FROM api_tokens LIMIT 1")
    jobs = psql(url, f"SELECT id FROM jobs WHERE organization_id = '{org}' ORDER BY id").split()
    job_paths = ["/v1/jobs/job_" + j.replace("-", "") for j in jobs]
    cases = [
        ("GET /v1/jobs/{id}", job_paths,
         JOB_SQL.format(count=len(jobs), org=org, ids=",".join(jobs))),
        ("GET /v1/organization", ["/v1/organization"], ORGANIZATION_SQL.format(org=org)),
    ]
    server = Server(url)
    rows = []
    for name, paths, sql in cases:
        for connections in args.connections:
            before = server.cpu_seconds()
            rate, p50, p99, count = wrk(server.base, paths, token, connections, args.duration)
            cpu_us = (server.cpu_seconds() - before) / count * 1e6
            tps, db50, db99 = pgbench(url, sql, connections, args.duration)
            rows.append((name, connections, f"{rate:.0f}", f"{tps:.0f}", f"{rate / tps:.2f}",
                         f"{p50:.2f}", f"{p99:.2f}", f"{db50:.2f}", f"{db99:.2f}", f"{cpu_us:.0f}"))
    peak = server.peak_rss_mib()
    server.stop()
    table(("endpoint", "conns", "HTTP req/s", "pgbench tps", "ratio", "HTTP p50 ms",
           "HTTP p99 ms", "pgbench p50 ms", "pgbench p99 ms", "server CPU µs/req"), rows)
    print(f"\nScenario 6: peak resident memory of the server over the whole run: {peak:.1f} MiB")
    print(f"({len(jobs)} jobs of one organization, {args.duration} s per run, wrk -t2, "
          "pgbench -M prepared -j 2)")


RECORDED_SQL = """BEGIN;
SELECT t.id, t.user_id, t.scopes, u.role FROM api_tokens t
  JOIN users u ON u.organization_id = t.organization_id AND u.id = t.user_id
  WHERE t.secret_hash = '\\x{digest}' AND t.revoked_at IS NULL
    AND (t.expires_at IS NULL OR t.expires_at > now());
SELECT organization_id, id, access_time, account_id, ip_addresses, subject_type,
  subject_user_id, subject_candidate_id, bulk_count, query_type, query_ids, query_values,
  query_scope, access_data, access_menu, access_menu_path, activity_category
  FROM privacy_audit_logs
  WHERE organization_id = '{org}' AND access_time >= '{gte}' AND access_time < '{lt}'
  ORDER BY access_time DESC, id DESC LIMIT 26;
INSERT INTO api_audit_log (organization_id, id, at, token_id, user_id, operation, request_id,
  client_ip, filters, entries_returned, interface)
  VALUES ('{org}', gen_random_uuid(), now(), '{token}', '{user}', 'listPrivacyAuditLogs',
  'bench', '127.0.0.1', '{{"timestamp_gte":"{gte}","timestamp_lt":"{lt}","limit":25}}', 25,
  'REST');
COMMIT;
"""

# The same transaction for a hand-written server that also chains its records, as recruitd
# does: the organization's API ledger head moved under its row lock to the commit, the record
# stored at the new position after the hash before it (SHA-256 over the previous hash only:
# cheaper than recruitd's hash of the whole entry).
CHAINED_SQL = RECORDED_SQL.replace("""INSERT INTO api_audit_log (organization_id, id, at, token_id, user_id, operation, request_id,
  client_ip, filters, entries_returned, interface)
  VALUES ('{org}',""", """UPDATE ledger_heads SET position = position + 1, hash = sha256(hash)
  WHERE organization_id = '{org}' AND ledger = 'api' RETURNING position, hash \\gset
INSERT INTO api_audit_log (position, prev_hash, hash, organization_id, id, at, token_id,
  user_id, operation, request_id, client_ip, filters, entries_returned, interface)
  VALUES (:position, NULL, CAST(:hash AS bytea), '{org}',""")


def recorded_read(url):
    """The demo loaded: its owner token, its organization, the path of a ledger page over the
    last 30 days, and the values RECORDED_SQL is formatted with."""
    import hashlib
    token = demo(url)
    org = psql(url, "SELECT organization_id FROM api_tokens LIMIT 1")
    digest = hashlib.sha256(token.encode()).hexdigest()
    token_id, user = psql(url, "SELECT id, user_id FROM api_tokens "
                               f"WHERE secret_hash = '\\x{digest}'").split("|")
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    spell = lambda t: t.strftime("%Y-%m-%dT%H:%M:%SZ")
    gte, lt = spell(now - datetime.timedelta(days=30)), spell(now)
    path = f"/v1/audit-logs/privacy?timestamp_gte={gte}&timestamp_lt={lt}&limit=25"
    return token, org, path, dict(digest=digest, org=org, gte=gte, lt=lt, token=token_id,
                                  user=user)


def body(base, path, token):
    request = urllib.request.Request(base + path, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request) as response:
        return response.read()


def scenario_recorded(url, args):
    """Reads of the privacy ledger, each recorded in the API audit ledger before its response
    (`GET /v1/audit-logs/privacy`, the last 30 days, 25 entries), against the transaction a
    hand-written server would run per read (RECORDED_SQL, prepared, through pgbench): the
    token's look-up, the page, the insert of the read's record, the commit. That reference
    does not chain its record; recruitd does, so a second one (CHAINED_SQL) also moves the
    chain's head, as a hand-written server with the same tamper evidence would. PostgreSQL at
    its default durability."""
    token, _, path, values = recorded_read(url)
    server = Server(url)
    if len(json.loads(body(server.base, path, token))["data"]) != 25:
        sys.exit("the demo's last 30 days hold fewer than 25 entries")
    sql, chained = RECORDED_SQL.format(**values), CHAINED_SQL.format(**values)
    rows = []
    for connections in args.connections:
        before = psql(url, "SELECT count(*) FROM api_audit_log")
        cpu = server.cpu_seconds()
        rate, p50, p99, count = wrk(server.base, [path], token, connections, args.duration)
        cpu = server.cpu_seconds() - cpu
        recorded = int(psql(url, "SELECT count(*) FROM api_audit_log")) - int(before)
        if recorded < count:
            sys.exit(f"{count} reads answered, {recorded} recorded")
        tps, db50, db99 = pgbench(url, sql, connections, args.duration)
        linked, _, linked99 = pgbench(url, chained, connections, args.duration)
        rows.append((connections, f"{rate:.0f}", f"{tps:.0f}", f"{rate / tps:.2f}",
                     f"{p50:.2f}", f"{p99:.2f}", f"{db50:.2f}", f"{db99:.2f}", f"{linked:.0f}",
                     f"{rate / linked:.2f}", f"{linked99:.2f}", f"{cpu / count * 1e6:.0f}"))
    peak = server.peak_rss_mib()
    server.stop()
    table(("conns", "HTTP req/s", "reference tps", "ratio", "HTTP p50 ms", "HTTP p99 ms",
           "reference p50 ms", "reference p99 ms", "chained reference tps", "ratio",
           "chained reference p99 ms", "server CPU µs/read"), rows)
    print(f"\nPeak resident memory of the server over the whole run: {peak:.1f} MiB")
    print(f"({args.duration} s per run, wrk -t2, pgbench -M prepared -j 2; PostgreSQL at its "
          "default durability)")


LEAN = ROOT / "target" / "release" / "lean"


class Lean(Server):
    """The lean reference server (bench/lean) on the same database, with the same pool size as
    recruitd."""

    def __init__(self, url, wrapper=()):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [*wrapper, str(LEAN), url, f"127.0.0.1:{self.port}", "https://app.recruitd.example",
             "32"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for _ in range(600):
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if self.process.poll() is not None:
                    sys.exit(f"the lean server did not start: {self.process.stderr.read()}")
                time.sleep(0.1)
        sys.exit("the lean server did not start listening")


def at_defaults():
    """The environment of recruitd at its defaults: its access log on (or RUST_LOG's level);
    its rate limits on, with quotas above what the load asks, so that the limiter's work is
    measured and no request is refused."""
    quota = "1000000/s"
    return {"RUST_LOG": os.environ.get("RUST_LOG", "info"),
            "RECRUITD_RATE_LIMIT_READS": quota, "RECRUITD_RATE_LIMIT_LEDGER_READS": quota,
            "RECRUITD_RATE_LIMIT_WRITES": quota, "RECRUITD_RATE_LIMIT_AUTH_FAILURES": quota}


def reads(url):
    """The lean reference built, the demo loaded; its owner token and the reads both servers
    answer: (name, paths, what pgbench runs for it)."""
    subprocess.run(["cargo", "build", "--release", "--locked", "-p", "recruit-bench-lean"],
                   check=True, cwd=ROOT)
    token, org, page, values = recorded_read(url)
    jobs = psql(url, f"SELECT id FROM jobs WHERE organization_id = '{org}' ORDER BY id").split()
    return token, [
        ("job", ["/v1/jobs/job_" + j.replace("-", "") for j in jobs],
         JOB_SQL.format(count=len(jobs), org=org, ids=",".join(jobs))),
        ("organization", ["/v1/organization"], ORGANIZATION_SQL.format(org=org)),
        ("recorded page", [page], RECORDED_SQL.format(**values)),
    ]


def scenario_reference(url, args):
    """recruitd at its defaults (logging, metrics and limits on) against the lean reference
    server (bench/lean: hyper and tokio-postgres, nothing else) and against pgbench running what
    the reference sends, interleaved: the job read, the organization read, and the recorded
    ledger page (one transaction per read for the reference). Per side: req/s, p50/p99, server
    CPU per request (user + system of the process), PostgreSQL CPU per request (its processes'
    user + system over the run); then recruitd's ratios to the reference, against the targets.
    With --baseline BINARY, another build of recruitd (a copy of target/release/recruitd made
    before a change) runs as a fourth side, interleaved with the others, and the ratios of
    this build to it are printed too: one change measured alone, in one run."""
    token, cases = reads(url)
    cases = [c for c in cases if c[0].split()[0] in args.reads]
    defaults = at_defaults()
    server = Server(url, env=defaults)
    lean = Lean(url)
    baseline = Server(url, env=defaults, binary=args.baseline) if args.baseline else None
    sides = [("recruitd", server), ("reference", lean), ("pgbench", None)]
    if baseline:
        sides.insert(1, ("baseline", baseline))
    try:
        for name, paths, _ in cases:
            for path in paths[:3]:
                for side, target in sides[1:-1]:
                    if body(server.base, path, token) != body(target.base, path, token):
                        sys.exit(f"{name}: the {side}'s body differs from recruitd's for {path}")
        results = {}
        for _ in range(args.rounds):
            for name, paths, sql in cases:
                for connections in args.connections:
                    for side, target in sides:
                        pg = postgres_cpu_seconds(url)
                        if target:
                            cpu = target.cpu_seconds()
                            rate, p50, p99, count = wrk(target.base, paths, token, connections,
                                                        args.duration)
                            cpu = target.cpu_seconds() - cpu
                        else:
                            rate, p50, p99 = pgbench(url, sql, connections, args.duration)
                            count, cpu = rate * args.duration, float("nan")
                        pg = postgres_cpu_seconds(url) - pg
                        results.setdefault((name, connections, side), []).append(
                            (rate, p50, p99, cpu / count * 1e6, pg / count * 1e6))
        peaks = (server.peak_rss_mib(), lean.peak_rss_mib())
    finally:
        for _, target in sides[:-1]:
            target.stop()
    # Each figure's median over the rounds: one round slowed down by the machine moves none.
    median = lambda key: [statistics.median(column) for column in zip(*results[key])]
    rows = []
    for name, _, _ in cases:
        for connections in args.connections:
            for side, _ in sides:
                rate, p50, p99, cpu, pg = median((name, connections, side))
                rows.append((name, connections, side, f"{rate:.0f}", f"{p50:.2f}", f"{p99:.2f}",
                             "-" if cpu != cpu else f"{cpu:.0f}", f"{pg:.0f}"))
    table(("read", "conns", "side", "req/s", "p50 ms", "p99 ms", "server CPU µs/req",
           "PostgreSQL CPU µs/req"), rows)
    print()
    targets = []
    for name, _, _ in cases:
        recorded = name == "recorded page"
        for connections in args.connections:
            m = median((name, connections, "recruitd"))
            r = median((name, connections, "reference"))
            rate_goal = (0.9 if connections == 1 else 1.2) if recorded else 0.95
            cpu_goal = 1.5 if recorded else 1.2
            checks = [("rate", m[0] / r[0], rate_goal, True), ("server CPU", m[3] / r[3], cpu_goal, False)]
            if recorded:
                checks.append(("PostgreSQL CPU", m[4] / r[4], 1.0, False))
            for what, ratio, goal, at_least in checks:
                met = ratio >= goal if at_least else ratio <= goal
                targets.append((name, connections, what, f"{ratio:.2f}",
                                f"{'≥' if at_least else '≤'} {goal}", "met" if met else "MISSED"))
    table(("read", "conns", "recruitd / reference", "ratio", "target", ""), targets)
    if baseline:
        compared = []
        for name, _, _ in cases:
            for connections in args.connections:
                m = median((name, connections, "recruitd"))
                b = median((name, connections, "baseline"))
                compared.append((name, connections, f"{m[0] / b[0]:.2f}", f"{m[3] / b[3]:.2f}",
                                 f"{m[4] / b[4]:.2f}"))
        print()
        table(("read", "conns", "rate, this build / baseline", "server CPU", "PostgreSQL CPU"),
              compared)
    print(f"\nPeak resident memory: recruitd {peaks[0]:.1f} MiB (target < 64), reference "
          f"{peaks[1]:.1f} MiB")
    print(f"(medians of {args.rounds} interleaved rounds of {args.duration} s per side, wrk -t2, "
          "pgbench -M prepared -j 2; PostgreSQL at its default durability)")


def callgrind_events(target, paths, token, requests, out):
    """What `target` (running under callgrind with its cache and branch simulation, writing to
    `out`) spends on `requests` requests for `paths` in turn on one connection, counted from
    zero after as many requests to warm it up: callgrind's events (`Ir` instructions, `I1mr`,
    `D1mr` and `D1mw` first-level cache misses, `Bcm` and `Bim` mispredicted branches), totals."""
    connection = http.client.HTTPConnection("127.0.0.1", target.port, timeout=600)

    def send(n):
        for i in range(n):
            connection.request("GET", paths[i % len(paths)],
                               headers={"Authorization": f"Bearer {token}"})
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                sys.exit(f"{paths[i % len(paths)]}: {response.status}")

    send(requests)
    control = lambda flag: subprocess.run(["callgrind_control", flag, str(target.process.pid)],
                                          check=True, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL)
    control("-z")
    send(requests)
    control("-d")
    connection.close()
    dumps = sorted(out.parent.glob(out.name + "*"), key=lambda f: f.stat().st_mtime)
    lines = dumps[-1].read_text().splitlines()
    events = next(line.split()[1:] for line in lines if line.startswith("events:"))
    for line in lines:
        if line.startswith(("summary:", "totals:")):
            return dict(zip(events, map(int, line.split()[1:])))
    sys.exit(f"no totals in {dumps[-1]}")


def scenario_instructions(url, args):
    """User-space instructions per request, counted by valgrind's callgrind: deterministic
    where CPU time swings by ±15 % between runs, so that a change too small for wall-clock
    runs can be measured alone. recruitd at its defaults (as in `reference`) against the lean
    reference and, with --baseline BINARY, against another build; one connection, the job and
    organization reads and the recorded ledger page (--reads). Kernel time (the sockets) and
    PostgreSQL are not counted: compare with `reference`.
    Beside the instructions, callgrind's model of the first-level caches and of branch
    prediction (this machine's cache sizes) counts per request the misses of the instruction
    cache, of the data cache (reads and writes) and the mispredicted branches: what makes an
    instruction cost more than another, and what the instructions alone do not show.
    With --profiles DIR the profiles are kept, one file per side and read: `callgrind_annotate
    --inclusive=yes DIR/recruitd.1` shows where the job read's instructions go (`--sort=D1mw`,
    its data cache misses)."""
    ensure_tool("valgrind", "valgrind")
    token, cases = reads(url)
    cases = [(name, paths) for name, paths, _ in cases if name.split()[0] in args.reads]
    defaults = at_defaults()
    out = args.profiles or Path(tempfile.mkdtemp(prefix="recruitd-callgrind-"))
    out.mkdir(parents=True, exist_ok=True)
    requests = args.requests
    sides = ["recruitd", "reference"] + (["baseline"] if args.baseline else [])
    counts = {}
    try:
        for side in sides:
            file = out / side
            wrapper = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={file}",
                       "--dump-instr=no", "--cache-sim=yes", "--branch-sim=yes"]
            if side == "reference":
                target = Lean(url, wrapper=wrapper)
            else:
                binary = args.baseline if side == "baseline" else BIN
                target = Server(url, env=defaults, binary=binary, wrapper=wrapper)
            try:
                for name, paths in cases:
                    counts[(name, side)] = callgrind_events(target, paths, token, requests, file)
            finally:
                target.stop()
    finally:
        if not args.profiles:
            shutil.rmtree(out, ignore_errors=True)
    measures = [("instructions", ("Ir",)), ("I1 misses", ("I1mr",)),
                ("D1 misses", ("D1mr", "D1mw")), ("mispredicted branches", ("Bcm", "Bim"))]
    per = lambda name, side, events: sum(counts[(name, side)][e] for e in events) / requests
    rows = []
    for name, _ in cases:
        for measure, events in measures:
            mine, theirs = per(name, "recruitd", events), per(name, "reference", events)
            row = [name, measure, f"{mine:,.0f}", f"{theirs:,.0f}", f"{mine / theirs:.2f}"]
            if args.baseline:
                before = per(name, "baseline", events)
                row += [f"{before:,.0f}", f"{mine / before:.3f}"]
            rows.append(row)
    header = ["read", "per request", "recruitd", "reference", "ratio"]
    if args.baseline:
        header += ["baseline", "this build / baseline"]
    table(header, rows)
    print(f"\n(callgrind with its cache and branch simulation, {requests} requests on one "
          "connection after as many to warm up; user space only)")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", choices=["jobs", "ledger", "adapter", "ids", "import", "soak",
                                             "revocation", "record", "recorded", "stream",
                                             "verify", "export",
                                             "review", "reference", "instructions", "scale"])
    parser.add_argument("--duration", type=int, default=20)
    parser.add_argument("--connections", default="8,64",
                        type=lambda s: [int(c) for c in s.split(",")])
    parser.add_argument("--entries", type=int, default=10_000_000)
    parser.add_argument("--organizations", type=int, default=20)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--sides", default="0,3", type=lambda s: [int(n) for n in s.split(",")],
                        help="stream: the numbers of streams to record beside (3 alone for the "
                             "10-minute delivery run, whose other side the disk cannot hold too)")
    parser.add_argument("--reads", default="job,organization,recorded",
                        type=lambda s: s.split(","))
    parser.add_argument("--stores", default="postgres,sqlite", type=lambda s: s.split(","))
    parser.add_argument("--sizes", default="1000000,10000000,30000000",
                        type=lambda s: [int(n) for n in s.split(",")],
                        help="scale: the ledger's sizes, in entries, grown one after another")
    parser.add_argument("--plot", type=Path, default=ROOT / "docs" / "scale.png",
                        help="scale: where to draw the plot")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--profiles", type=Path, default=None,
                        help="instructions: keep callgrind's profiles in this directory "
                             "(read them with callgrind_annotate)")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="reference, instructions: another recruitd binary to measure "
                             "this build against")
    args = parser.parse_args()
    # Scenarios measured by Rust programs of their own: run them as they are.
    delegated = {
        "adapter": ["cargo", "run", "--release", "--locked", "-p", "recruit-adapters-pg",
                    "--example", "adapter_vs_tokio_postgres", "--", str(args.duration),
                    ",".join(map(str, args.connections))],
        "ids": ["cargo", "bench", "--locked", "-p", "recruit-domain", "--bench", "ids"],
        "import": ["cargo", "run", "--release", "--locked", "-p", "recruit-service", "--example",
                   "import_throughput", "--", "--entries", str(min(args.entries, 1_000_000))],
    }
    if args.scenario in delegated:
        # The same cluster settings as the HTTP scenarios, not the tests' small default.
        cluster = None
        env = dict(os.environ)
        if args.scenario != "ids" and not env.get("DATABASE_URL"):
            # The import writes: PostgreSQL at its default durability.
            cluster = Cluster(durable=args.scenario == "import")
            env["DATABASE_URL"] = cluster.url
        try:
            code = subprocess.run(delegated[args.scenario], cwd=ROOT, env=env).returncode
        finally:
            if cluster:
                cluster.stop()
        sys.exit(code)
    ensure_tool("wrk", "wrk")
    build(*(["bench_data"] if args.scenario in ("ledger", "verify", "export", "review", "scale")
            else []))
    if args.scenario == "soak":
        scenario_soak(args)
        return
    cluster = None
    url = os.environ.get("DATABASE_URL")
    if not url:
        # Anything that writes is measured at PostgreSQL's default durability.
        cluster = Cluster(durable=args.scenario in ("record", "recorded", "stream", "verify",
                                                    "export", "reference", "scale"))
        url = cluster.url
    try:
        scenarios = {"jobs": scenario_jobs, "ledger": scenario_ledger,
                     "revocation": scenario_revocation, "record": scenario_record,
                     "stream": scenario_stream,
                     "recorded": scenario_recorded,
                     "verify": scenario_verify, "export": scenario_export,
                     "review": scenario_review, "reference": scenario_reference,
                     "scale": scenario_scale,
                     "instructions": scenario_instructions}
        scenarios[args.scenario](url, args)
    finally:
        if cluster:
            cluster.stop()


EXAMPLE = ROOT / "target" / "release" / "examples" / "bench_data"
SECRET = "bench-cursor-secret-of-at-least-32-bytes"
DEPTH = 1_000_000

OFFSET_SQL = """SELECT organization_id, id, access_time, account_id, ip_addresses, subject_type,
  subject_user_id, subject_candidate_id, bulk_count, query_type, query_ids, query_values,
  query_scope, access_data, access_menu, access_menu_path, activity_category
FROM privacy_audit_logs
WHERE organization_id = '{org}' AND access_time >= '{gte}' AND access_time < '{lt}'
ORDER BY access_time DESC, id DESC {tail};
"""


def load_generated(url, args, *extra):
    """Imports the privacy ledger the demo generator writes (--entries over --organizations,
    with the generator's `extra` flags), hence chained; returns how long the import took and
    how many entries are stored."""
    work = Path(tempfile.mkdtemp(prefix="recruitd-bench-data-"))
    try:
        subprocess.run([str(EXAMPLE), "generate", str(work), "--organizations",
                        str(args.organizations), "--entries", str(args.entries), *extra],
                       check=True, stdout=subprocess.DEVNULL)
        started = time.monotonic()
        subprocess.run([str(BIN), "--database-url", url, "import", str(work / "directory.json"),
                        str(work / "ledger.ndjson")], check=True, stdout=subprocess.DEVNULL,
                       env={**os.environ, "RUST_LOG": "warn"})
        imported = time.monotonic() - started
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # Every table the import wrote (the review's counts too), so that no autovacuum of them
    # runs during the measurement.
    psql(url, "VACUUM ANALYZE")
    return imported, int(psql(url, "SELECT count(*) FROM privacy_audit_logs"))


def copy_seconds(url, select):
    """How long PostgreSQL takes to write the rows of `select` with COPY (through psql,
    discarded): the reference the ledger scenarios compare against."""
    started = time.monotonic()
    subprocess.run([pg_bin("psql"), url, "-X", "-q", "-c", f"COPY ({select}) TO STDOUT"],
                   check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def http_export(base, token, gte, lt):
    """`GET /v1/audit-logs/privacy/export` of the window, read to its end in 1 MiB reads: the
    lines received and the count the server announced."""
    request = urllib.request.Request(
        f"{base}/v1/audit-logs/privacy/export?timestamp_gte={gte}&timestamp_lt={lt}",
        headers={"Authorization": f"Bearer {token}"})
    lines = 0
    with urllib.request.urlopen(request, timeout=3600) as response:
        announced = int(response.headers["Recruitd-Export-Count"])
        while chunk := response.read(1 << 20):
            lines += chunk.count(b"\n")
    return lines, announced


def scenario_export(url, args):
    """`recruitd audit export --ledger privacy -` (to /dev/null) of the generated ledger,
    against PostgreSQL writing the same rows in the same order (`COPY (SELECT …) TO STDOUT`,
    discarded): entries per second, their ratio, and the export's peak memory, which must not
    grow with the ledger. Then the same through the server: `GET
    /v1/audit-logs/privacy/export` of the largest organization's whole ledger, read to its
    end, against COPY of that organization's rows, with the server's peak memory before and
    after."""
    imported, entries = load_generated(url, args)
    rows = []
    for run in range(2):
        started = time.monotonic()
        child = subprocess.Popen([str(BIN), "--database-url", url, "audit", "export", "--ledger",
                                  "privacy", "-"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, env={**os.environ, "RUST_LOG": "warn"})
        _, status, usage = os.wait4(child.pid, 0)
        export = time.monotonic() - started
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"the export failed: {child.stderr.read()[-2000:]}")
        peak = usage.ru_maxrss / 1024
        read = copy_seconds(url, "SELECT * FROM privacy_audit_logs "
                                 "ORDER BY organization_id, access_time, id")
        rows.append((run + 1, f"{entries:,}", f"{entries / export:,.0f}", f"{entries / read:,.0f}",
                     f"{read / export:.2f}", f"{peak:.1f}"))
    table(("run", "entries", "export entries/s", "COPY entries/s", "ratio",
           "export peak RSS MiB"), rows)
    print(f"\n(import of the generated data, chained: {imported:.0f} s; --organizations "
          f"{args.organizations})")

    org, count = psql(url, "SELECT organization_id, count(*) FROM privacy_audit_logs "
                           "GROUP BY 1 ORDER BY 2 DESC LIMIT 1").split("|")
    count = int(count)
    owner = psql(url, f"SELECT id FROM users WHERE organization_id = '{org}' AND role = 'OWNER' "
                      "LIMIT 1")
    session = Session(url)
    _, secret = new_token(session, org, owner)
    session.close()
    now = time.time()
    gte = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 700 * 86400))
    lt = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 86400))
    server = Server(url)
    rows = []
    try:
        before = server.peak_rss_mib()
        for run in range(2):
            started = time.monotonic()
            lines, announced = http_export(server.base, secret, gte, lt)
            export = time.monotonic() - started
            if lines != announced or lines != count:
                sys.exit(f"the export sent {lines} lines of {announced} announced, {count} stored")
            read = copy_seconds(url, f"SELECT * FROM privacy_audit_logs WHERE organization_id = "
                                     f"'{org}' ORDER BY access_time, id")
            rows.append((run + 1, f"{lines:,}", f"{lines / export:,.0f}",
                         f"{lines / read:,.0f}", f"{read / export:.2f}", f"{before:.1f}",
                         f"{server.peak_rss_mib():.1f}"))
    finally:
        server.stop()
    print()
    table(("run", "entries", "HTTP export entries/s", "COPY entries/s", "ratio",
           "server peak RSS MiB before", "after"), rows)
    print("\n(GET /v1/audit-logs/privacy/export of one organization, read by urllib in 1 MiB "
          "reads)")


REVIEW_GOAL_S = 1.0


def scenario_review(url, args):
    """`GET /v1/audit-logs/privacy/reviews/{month}` of one organization whose privacy ledger
    holds --entries in that month (run with --entries 1000000 --organizations 1), against the
    goal of 1 s of server time. Reported per run: the request's wall time (the server's time, the client
    being on the same machine and the body small), the server's CPU, and PostgreSQL's: the
    review's statements are aggregates PostgreSQL runs, so most of the time is there. The same
    review through the CLI (`audit review --json`) for comparison."""
    # Last month in the demo organizations' time zone, the zone their review reads months in.
    zone = zoneinfo.ZoneInfo("Asia/Seoul")
    now = datetime.datetime.now(zone)
    first = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    start = (first - datetime.timedelta(days=1)).replace(day=1)
    month_name = start.strftime("%Y-%m")
    until = first.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    days = (first - start).days
    imported, entries = load_generated(url, args, "--days", str(days), "--until", until)
    org = psql(url, "SELECT organization_id FROM privacy_audit_logs "
                    "GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")
    in_month = int(psql(url, f"SELECT count(*) FROM privacy_audit_logs WHERE organization_id = "
                             f"'{org}' AND access_time >= '{start.isoformat()}' AND "
                             f"access_time < '{first.isoformat()}'"))
    owner = psql(url, f"SELECT id FROM users WHERE organization_id = '{org}' AND role = 'OWNER' "
                      "LIMIT 1")
    session = Session(url)
    _, secret = new_token(session, org, owner)
    session.close()
    server = Server(url)
    rows = []
    try:
        for run in range(3):
            cpu, db = server.cpu_seconds(), postgres_cpu_seconds(url)
            started = time.monotonic()
            request = urllib.request.Request(
                f"{server.base}/v1/audit-logs/privacy/reviews/{month_name}",
                headers={"Authorization": f"Bearer {secret}"})
            with urllib.request.urlopen(request, timeout=600) as response:
                review = json.load(response)
            wall = time.monotonic() - started
            cpu, db = server.cpu_seconds() - cpu, postgres_cpu_seconds(url) - db
            if review["accesses"] != in_month:
                sys.exit(f"the review counted {review['accesses']} accesses of {in_month}")
            rows.append((run + 1, f"{in_month:,}", len(review["accounts"]), f"{wall:.3f}",
                         f"{cpu:.3f}", f"{db:.3f}", f"{wall / REVIEW_GOAL_S:.2f}",
                         "met" if wall <= REVIEW_GOAL_S else "missed"))
    finally:
        server.stop()
    table(("run", "entries in the month", "accounts", "wall s", "server CPU s",
           "PostgreSQL CPU s", "wall / goal", "goal 1 s"), rows)
    started = time.monotonic()
    subprocess.run([str(BIN), "--database-url", url, "audit", "review", "--month", month_name,
                    "--org", org, "--json"], check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, "RUST_LOG": "warn"})
    print(f"\n(audit review --json: {time.monotonic() - started:.3f} s with the process's start; "
          f"import of the generated data, chained: {imported:.0f} s, {entries:,} entries in "
          f"{args.organizations} organization(s))")


SCALE_PART = 5_000_000


def grow(url, args, have, target, part):
    """Imports parts of the generated ledger from `part` on (at most SCALE_PART entries each,
    the directory with part 0) until it holds `target` entries; returns the seconds the
    imports took and the next part."""
    took = 0.0
    while have < target:
        entries = min(SCALE_PART, target - have)
        work = Path(tempfile.mkdtemp(prefix="recruitd-bench-scale-"))
        try:
            subprocess.run([str(EXAMPLE), "generate", str(work), "--organizations",
                            str(args.organizations), "--entries", str(entries), "--part",
                            str(part)], check=True, stdout=subprocess.DEVNULL)
            files = [work / "ledger.ndjson"] if have else [work / "directory.json",
                                                           work / "ledger.ndjson"]
            started = time.monotonic()
            # Batches of 20 000 take about 2.7 s past 7 M entries here: a checkpoint's I/O
            # took one past the default 5 s statement limit. The load is not what is measured.
            subprocess.run([str(BIN), "--database-url", url, "--db-statement-timeout", "60s",
                            "import", *map(str, files)], check=True, stdout=subprocess.DEVNULL,
                           env={**os.environ, "RUST_LOG": "warn"})
            took += time.monotonic() - started
        finally:
            shutil.rmtree(work, ignore_errors=True)
        have, part = have + entries, part + 1
    psql(url, "VACUUM ANALYZE")
    return took, part


def plot_scale(rows, columns, path):
    """A PNG of each measured cost (relative to its value at the smallest size) against the
    ledger's size; matplotlib installed when missing."""
    try:
        import matplotlib
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "matplotlib"], check=True)
        import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    sizes = [r["size"] / 1e6 for r in rows]
    figure, axes = plt.subplots(figsize=(9, 5.5))
    colours = plt.get_cmap("tab20").colors
    for n, (key, label) in enumerate(columns):
        base = rows[0][key]
        if not base:
            continue
        axes.plot(sizes, [r[key] / base for r in rows], marker="os^D"[n % 4],
                  color=colours[n % len(colours)], label=label)
    axes.axhline(1.2, color="grey", linestyle=":", linewidth=1)
    axes.set_xscale("log")
    axes.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    axes.set_xticks(sizes)
    axes.set_xlabel("entries in the ledger (millions)")
    axes.set_ylabel("cost relative to the smallest ledger")
    axes.set_title("recruitd: each cost against the ledger's size")
    axes.legend(fontsize=7, ncol=2)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def scenario_scale(url, args):
    """How each cost grows with the ledger. One PostgreSQL ledger grown by imports of the
    generator's parts to each of --sizes entries over --organizations (the first holding two
    thirds); at each size, for that largest organization: the p50 and p99 of the first page
    of its list over the whole year, of a page halfway down, and of the first page under each
    filter alone (wrk, the first of --connections, --duration s each); its export through the
    server (entries/s, against COPY of its rows); the review of its busiest month, first and
    again; and `audit verify` of the whole ledger (entries/s, against a COPY read). The same
    queries at every size. A table, and a plot (--plot) of each cost against the size.
    A DATABASE_URL whose ledger is loaded already is measured as it is, at its one size."""
    have, part, rows = 0, 0, []
    # A fresh database has no ledger yet (a query naming it would fail to parse).
    held = psql(url, "SELECT to_regclass('privacy_audit_logs') IS NOT NULL") == "t" and \
        psql(url, "SELECT count(*) FROM privacy_audit_logs")
    if int(held or 0):
        have = int(held)
        print(f"measuring the ledger loaded already: {have:,} entries (--sizes ignored)")
        args.sizes = [have]
    org = picks = token = None
    now = time.time()
    gte = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 365 * 86400))
    lt = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 86400))
    connections = args.connections[0]
    for size in args.sizes:
        imported, part = grow(url, args, have, size, part)
        have = size
        if org is None:
            org = psql(url, "SELECT organization_id FROM privacy_audit_logs "
                            "GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")
            owner = psql(url, f"SELECT id FROM users WHERE organization_id = '{org}' AND "
                              "role = 'OWNER' LIMIT 1")
            session = Session(url)
            _, token = new_token(session, org, owner)
            session.close()
            # The filters' values, chosen once: an account and a data subject of middling
            # volume, an address, the rarest category and area, and values no entry has.
            middling = lambda column: psql(url, f"""SELECT {column} FROM (SELECT {column},
                row_number() OVER (ORDER BY count(*)) AS n, count(*) OVER () AS k
                FROM privacy_audit_logs WHERE organization_id = '{org}' AND {column} IS NOT NULL
                GROUP BY 1) t WHERE n = (k + 1) / 2""")
            rarest = lambda column: psql(url, f"""SELECT {column} FROM privacy_audit_logs
                WHERE organization_id = '{org}' GROUP BY 1 ORDER BY count(*) LIMIT 1""")
            addresses = lambda order: psql(url, f"""SELECT a FROM privacy_audit_logs,
                unnest(ip_addresses) a WHERE organization_id = '{org}' GROUP BY 1
                ORDER BY count(*) {order} LIMIT 1""")
            picks = [
                ("account", "account_id=usr_" + middling("account_id").replace("-", "")),
                ("data subject", "data_subject_id=can_" +
                 middling("subject_candidate_id").replace("-", "")),
                ("IP address", "ip_address=" + urllib.parse.quote(addresses("DESC"))),
                # The one an investigation starts from: seen a few times in the year.
                ("IP address, rare", "ip_address=" + urllib.parse.quote(addresses("ASC"))),
                ("category", "activity_category=" + rarest("activity_category")),
                ("product area", "access_menu=" + urllib.parse.quote(rarest("access_menu"))),
                ("outside work hours", "outside_work_hours=true"),
                # Values no entry has: a page that must say so without reading the year.
                ("account, none", "account_id=usr_" + os.urandom(16).hex()),
                ("data subject, none", "data_subject_id=can_" + os.urandom(16).hex()),
                ("IP address, none", "ip_address=192.0.2.254"),
            ]
        in_org = int(psql(url, f"SELECT count(*) FROM privacy_audit_logs "
                               f"WHERE organization_id = '{org}'"))
        org_id = "org_" + org.replace("-", "")
        at, entry = psql(url, f"""SELECT to_char(access_time AT TIME ZONE 'UTC',
            'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), id FROM privacy_audit_logs
            WHERE organization_id = '{org}' AND access_time >= '{gte}' AND access_time < '{lt}'
            ORDER BY access_time DESC, id DESC OFFSET {in_org // 2} LIMIT 1""").split("|")
        cursor = subprocess.run([str(EXAMPLE), "cursor", "--secret", SECRET, "--org", org_id,
                                 "--gte", gte, "--lt", lt, "--at", at, "--id",
                                 "pal_" + entry.replace("-", "")],
                                check=True, capture_output=True, text=True).stdout.strip()
        first = f"/v1/audit-logs/privacy?timestamp_gte={gte}&timestamp_lt={lt}&limit=100"
        zone = psql(url, f"SELECT time_zone FROM organizations WHERE id = '{org}'")
        month = psql(url, f"""SELECT to_char(access_time AT TIME ZONE '{zone}', 'YYYY-MM')
            FROM privacy_audit_logs WHERE organization_id = '{org}'
            GROUP BY 1 ORDER BY count(*) DESC LIMIT 1""")
        row = {"size": size, "organization": in_org, "imported": imported}
        server = Server(url, env={"RECRUITD_CURSOR_SECRET": SECRET})
        try:
            paths = [("first page", first), ("page halfway", f"{first}&cursor={cursor}")]
            paths += [(name, f"{first}&{query}") for name, query in picks]
            for name, path in paths:
                _, p50, p99, _ = wrk(server.base, [path], token, connections, args.duration)
                row[name] = p50
                row[name + " p99"] = p99
            # The peak of each phase apart: the pages, the reviews, the export.
            row["peak pages MiB"] = server.peak_rss_mib()
            # Kept if a later phase fails.
            print(f"{size:,} entries, pages: {json.dumps(row)}", flush=True)
            server.reset_peak()
            for attempt in ("review", "review again"):
                started = time.monotonic()
                request = urllib.request.Request(
                    f"{server.base}/v1/audit-logs/privacy/reviews/{month}",
                    headers={"Authorization": f"Bearer {token}"})
                with urllib.request.urlopen(request, timeout=600) as response:
                    json.load(response)
                row[attempt] = time.monotonic() - started
            row["peak review MiB"] = server.peak_rss_mib()
            server.reset_peak()
            started = time.monotonic()
            lines, _ = http_export(server.base, token, gte, lt)
            exported = time.monotonic() - started
            row["peak export MiB"] = server.peak_rss_mib()
            row["peak MiB"] = max(row["peak pages MiB"], row["peak review MiB"],
                                  row["peak export MiB"])
        finally:
            server.stop()
        read = copy_seconds(url, f"SELECT * FROM privacy_audit_logs WHERE organization_id = "
                                 f"'{org}' ORDER BY access_time, id")
        row["export s/M"], row["export ratio"] = exported / lines * 1e6, read / exported
        started = time.monotonic()
        subprocess.run([str(BIN), "--database-url", url, "audit", "verify", "--ledger", "privacy",
                        "--json"], check=True, stdout=subprocess.DEVNULL,
                       env={**os.environ, "RUST_LOG": "warn"})
        verified = time.monotonic() - started
        read = copy_seconds(url, "SELECT * FROM privacy_audit_logs "
                                 "ORDER BY organization_id, position")
        row["verify s/M"], row["verify ratio"] = verified / size * 1e6, read / verified
        row["month"] = month
        rows.append(row)
        print(f"{size:,} entries: {json.dumps(row)}", flush=True)
    names = ["first page", "page halfway"] + [name for name, _ in picks]
    table(("entries", "largest org", *[f"{n} p50 ms" for n in names], "review s (first, again)",
           "export s per M (× COPY)", "verify s per M (× COPY)",
           "server peak MiB (pages, review, export)", "import s"),
          [(f"{r['size']:,}", f"{r['organization']:,}", *[f"{r[n]:.2f}" for n in names],
            f"{r['review']:.2f}, {r['review again']:.2f}",
            f"{r['export s/M']:.1f} ({r['export ratio']:.2f})",
            f"{r['verify s/M']:.1f} ({r['verify ratio']:.2f})",
            f"{r['peak MiB']:.1f} ({r['peak pages MiB']:.1f}, {r['peak review MiB']:.1f}, "
            f"{r['peak export MiB']:.1f})",
            f"{r['imported']:.0f}") for r in rows])
    print("\np50 at the largest size ÷ at the smallest: " + ", ".join(
        f"{n} {rows[-1][n] / rows[0][n]:.2f}" for n in names))
    print(f"(--organizations {args.organizations}; {connections} connections, {args.duration} s "
          f"of wrk per page; the review of the busiest month, {rows[-1]['month']} at the end)")
    plot_scale(rows, [(n, n + " p50") for n in names] + [
        ("review", "review (first)"), ("export s/M", "export s per entry"),
        ("verify s/M", "verify s per entry")], args.plot)
    print(f"plot: {args.plot}")


def postgres_cpu_seconds(url):
    """User and system time of the machine's PostgreSQL processes so far: those alive, and the
    children they have reaped (a backend that exited counts in its postmaster's)."""
    del url
    total = 0.0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        if name not in ("postgres", "postmaster"):
            continue
        fields = stat.rsplit(")", 1)[1].split()
        total += sum(int(f) for f in fields[11:15]) / TICK
    return total


def scenario_verify(url, args):
    """`recruitd audit verify --ledger privacy` over the privacy ledger the demo generator
    writes (--entries over --organizations, imported, hence chained), against PostgreSQL reading
    the same rows in the same order (`COPY (SELECT …) TO STDOUT`, discarded): entries per
    second and their ratio. Peak memory of verify too."""
    imported, entries = load_generated(url, args)
    rows = []
    for run in range(2):
        started = time.monotonic()
        child = subprocess.Popen([str(BIN), "--database-url", url, "audit", "verify",
                                  "--ledger", "privacy", "--json"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, env={**os.environ, "RUST_LOG": "warn"})
        _, status, usage = os.wait4(child.pid, 0)
        verify = time.monotonic() - started
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"verify found something or failed: {child.stderr.read()[-2000:]}")
        peak = usage.ru_maxrss / 1024
        read = copy_seconds(url, "SELECT * FROM privacy_audit_logs "
                                 "ORDER BY organization_id, position")
        rows.append((run + 1, f"{entries:,}", f"{entries / verify:,.0f}", f"{entries / read:,.0f}",
                     f"{read / verify:.2f}", f"{peak:.1f}"))
    table(("run", "entries", "verify entries/s", "COPY read entries/s", "ratio",
           "verify peak RSS MiB"), rows)
    print(f"\n(import of the generated data, chained: {imported:.0f} s; --organizations "
          f"{args.organizations})")


def scenario_ledger(url, args):
    work = Path(tempfile.mkdtemp(prefix="recruitd-bench-data-"))
    try:
        started = time.monotonic()
        subprocess.run([str(EXAMPLE), "generate", str(work), "--organizations",
                        str(args.organizations), "--entries", str(args.entries)], check=True)
        generated = time.monotonic() - started
        subprocess.run([str(BIN), "--database-url", url, "import", str(work / "directory.json"),
                        str(work / "ledger.ndjson")], check=True, stdout=subprocess.DEVNULL,
                       env={**os.environ, "RUST_LOG": "warn"})
        imported = time.monotonic() - started - generated
    finally:
        shutil.rmtree(work, ignore_errors=True)
    psql(url, "VACUUM ANALYZE privacy_audit_logs")
    org, count = psql(url, "SELECT organization_id, count(*) FROM privacy_audit_logs "
                           "GROUP BY 1 ORDER BY 2 DESC LIMIT 1").split("|")
    count = int(count)
    if count <= DEPTH + 100:
        sys.exit(f"the largest organization has {count} entries: too few for a page {DEPTH} deep")
    gte = psql(url, "SELECT to_char(min(access_time) AT TIME ZONE 'UTC', "
                    "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM privacy_audit_logs")
    lt = psql(url, "SELECT to_char((max(access_time) + interval '1 second') AT TIME ZONE 'UTC', "
                   "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM privacy_audit_logs")
    at, entry = psql(url, f"""SELECT to_char(access_time AT TIME ZONE 'UTC',
        'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), id FROM privacy_audit_logs
        WHERE organization_id = '{org}' AND access_time >= '{gte}' AND access_time < '{lt}'
        ORDER BY access_time DESC, id DESC OFFSET {DEPTH - 1} LIMIT 1""").split("|")
    org_id = "org_" + org.replace("-", "")
    entry_id = "pal_" + entry.replace("-", "")
    cursor = subprocess.run([str(EXAMPLE), "cursor", "--secret", SECRET, "--org", org_id,
                             "--gte", gte, "--lt", lt, "--at", at, "--id", entry_id],
                            check=True, capture_output=True, text=True).stdout.strip()
    owner = psql(url, f"SELECT id FROM users WHERE organization_id = '{org}' AND role = 'OWNER' "
                      "LIMIT 1")
    token = json.loads(subprocess.run(
        [str(BIN), "--database-url", url, "token", "create", "--user",
         "usr_" + owner.replace("-", ""), "--scopes", "audit_logs:read", "--json"],
        check=True, capture_output=True, text=True, env={**os.environ, "RUST_LOG": "warn"},
    ).stdout)["token"]

    server = Server(url, env={"RECRUITD_CURSOR_SECRET": SECRET})
    first = f"/v1/audit-logs/privacy?timestamp_gte={gte}&timestamp_lt={lt}&limit=100"
    deep = f"{first}&cursor={cursor}"
    with urllib.request.urlopen(urllib.request.Request(
            server.base + deep, headers={"Authorization": f"Bearer {token}"})) as response:
        page = json.load(response)
    if page["data"][0]["id"] == entry_id or len(page["data"]) != 100:
        sys.exit("the deep page is not the page after the chosen entry")
    connections = args.connections[0]
    rows = []
    results = {}
    for name, path in [("first page", first), (f"{DEPTH:,} deep", deep)]:
        rate, p50, p99, _ = wrk(server.base, [path], token, connections, args.duration)
        results[name] = p50
        rows.append(("HTTP keyset", name, f"{rate:.0f}", f"{p50:.2f}", f"{p99:.2f}"))
    peak = server.peak_rss_mib()
    server.stop()
    for name, tail in [("first page", "LIMIT 101"), (f"{DEPTH:,} deep", f"OFFSET {DEPTH} LIMIT 101")]:
        sql = OFFSET_SQL.format(org=org, gte=gte, lt=lt, tail=tail)
        tps, p50, p99 = pgbench(url, sql, connections, args.duration)
        rows.append(("SQL OFFSET", name, f"{tps:.0f}", f"{p50:.2f}", f"{p99:.2f}"))
    table(("path", "page", "per second", "p50 ms", "p99 ms"), rows)
    ratio = results[f"{DEPTH:,} deep"] / results["first page"]
    print(f"\nDeep page p50 / first page p50 (HTTP, keyset): {ratio:.2f}")
    print(f"Peak resident memory of the server over both runs: {peak:.1f} MiB")
    print(f"({args.entries:,} entries over {args.organizations} organizations, {count:,} in the "
          f"listed one; generated in {generated:.0f} s, imported in {imported:.0f} s; "
          f"{connections} connections, {args.duration} s per run)")
    for name, extra in [("first page", []), (f"{DEPTH:,} deep", ["--at", at, "--id", entry_id])]:
        plan = subprocess.run([str(EXAMPLE), "explain", "--url", url, "--org", org_id, "--gte",
                               gte, "--lt", lt, *extra], check=True, capture_output=True,
                              text=True).stdout
        print(f"\nEXPLAIN (ANALYZE, BUFFERS), {name}:\n{plan}")


class Session:
    """One psql session kept open, so that a statement's commit is timed without a process
    start: `run` returns once psql has executed the statement (autocommit) and said so."""

    def __init__(self, url):
        self.process = subprocess.Popen([pg_bin("psql"), url, "-X", "-q", "-At", "-v",
                                         "ON_ERROR_STOP=1"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, bufsize=1)

    def run(self, sql):
        self.process.stdin.write(sql.rstrip(";") + ";\n\\echo committed\n")
        self.process.stdin.flush()
        lines = []
        for line in self.process.stdout:
            if line.strip() == "committed":
                return lines
            lines.append(line.strip())
        sys.exit("psql ended")

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


def new_token(session, org, user):
    """A token made directly in the database; returns its id and secret."""
    import base64
    import hashlib
    secret = "rtk_" + base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")
    digest = hashlib.sha256(secret.encode()).hexdigest()
    token_id = session.run(
        "INSERT INTO api_tokens (organization_id, id, user_id, name, scopes, secret_hash, "
        f"created_at) VALUES ('{org}', gen_random_uuid(), '{user}', 'bench', "
        f"'{{organization:read,audit_logs:read}}', '\\x{digest}', now()) RETURNING id")[0]
    return token_id, secret


def scenario_revocation(url, args):
    """Under load, how long after the database committed a revocation (or a demotion) the
    server stops honouring the token (or the role): the propagation of credential changes."""
    import http.client
    token = demo(url)
    org = psql(url, "SELECT organization_id FROM api_tokens LIMIT 1")
    owner = psql(url, f"SELECT id FROM users WHERE organization_id = '{org}' AND role = 'OWNER' "
                      "ORDER BY id LIMIT 1")
    server = Server(url)
    session = Session(url)
    script = wrk_script(["/v1/organization", f"/v1/jobs/{DEMO_JOB}"], token)
    connections = args.connections[0]
    load = subprocess.Popen(["wrk", "-t1", f"-c{connections}", "-d3600s", "-s", script.name,
                             server.base], stdout=subprocess.DEVNULL)
    client = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    ledger = "/v1/audit-logs/privacy?timestamp_gte=2020-01-01T00:00:00Z&timestamp_lt=" \
             "2020-01-02T00:00:00Z&limit=1"

    def status(path, secret):
        client.request("GET", path, headers={"Authorization": f"Bearer {secret}"})
        response = client.getresponse()
        response.read()
        return response.status

    results = {"revocation (401)": [], "demotion (403)": []}
    try:
        time.sleep(2)
        for _ in range(args.trials):
            token_id, secret = new_token(session, org, owner)
            while status("/v1/organization", secret) != 200:
                time.sleep(0.01)
            for _ in range(3):
                status("/v1/organization", secret)
            started = time.perf_counter()
            session.run(f"UPDATE api_tokens SET revoked_at = now() WHERE id = '{token_id}'")
            committed = time.perf_counter()
            stale = 0
            while status("/v1/organization", secret) == 200:
                stale += 1
            seen = time.perf_counter()
            results["revocation (401)"].append((seen - committed, seen - started, stale))

            _, secret = new_token(session, org, owner)
            while status(ledger, secret) != 200:
                time.sleep(0.01)
            status(ledger, secret)
            started = time.perf_counter()
            session.run(f"UPDATE users SET role = 'MEMBER' WHERE organization_id = '{org}' "
                        f"AND id = '{owner}'")
            committed = time.perf_counter()
            stale = 0
            while status(ledger, secret) == 200:
                stale += 1
            seen = time.perf_counter()
            results["demotion (403)"].append((seen - committed, seen - started, stale))
            session.run(f"UPDATE users SET role = 'OWNER' WHERE organization_id = '{org}' "
                        f"AND id = '{owner}'")
    finally:
        load.send_signal(signal.SIGINT)
        load.wait(timeout=30)
        os.unlink(script.name)
        client.close()
        session.close()
        server.stop()
    rows = []
    for kind, trials in results.items():
        after = sorted(t[0] * 1000 for t in trials)
        since = sorted(t[1] * 1000 for t in trials)
        q = lambda xs, p: xs[min(len(xs) - 1, int(p * len(xs)))]
        stale = [t[2] for t in trials]
        rows.append((kind, len(trials), f"{q(after, 0.5):.2f}", f"{q(after, 0.99):.2f}",
                     f"{after[-1]:.2f}", f"{q(since, 0.99):.2f}",
                     sum(1 for n in stale if n), max(stale)))
    table(("change", "trials", "p50 ms after commit", "p99 ms after commit", "max ms",
           "p99 ms from before the statement", "trials with a stale answer", "most stale answers"),
          rows)
    print(f"\n(PostgreSQL, credential cache on (60 s), wrk -t1 -c{connections} reading the "
          "organization and a job with another token throughout; each trial commits the change "
          "through an open psql session, then one client polls with the changed credential "
          "over a keep-alive connection until it is refused)")


RECORD_LUA = """
local body = %s
local token = "%s"
local counter = 0
local created = 0
function setup(thread)
  created = created + 1
  thread:set("id", created)
end
function init(args)
  -- One key per request: the thread's number, the run's start and a counter.
  prefix = tostring(id) .. "-" .. tostring(os.time())
end
request = function()
  counter = counter + 1
  local headers = {["Authorization"] = "Bearer " .. token,
                   ["Content-Type"] = "application/json",
                   ["Idempotency-Key"] = prefix .. "-" .. counter}
  return wrk.format("POST", "/v1/audit-logs/privacy", headers, body)
end
"""

COPY_COLUMNS = ("organization_id, id, access_time, account_id, ip_addresses, subject_type, "
                "subject_user_id, subject_candidate_id, bulk_count, query_type, query_ids, "
                "query_values, query_scope, access_data, access_menu, access_menu_path, "
                "activity_category")


def scenario_record(url, args):
    """Recording accesses: entries per second through POST /v1/audit-logs/privacy in batches
    of 1 000 (each a transaction with its audit record and idempotency key) against
    PostgreSQL's own COPY of the same rows, 1 000 to a transaction, with as many clients, on a
    cluster at the default durability (fsync and synchronous_commit on)."""
    import uuid
    token, org, user, now, entry, body = record_load(url)
    rows = []
    for connections in args.connections:
        server = Server(url)
        script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
        script.write(RECORD_LUA % (json.dumps(body), token))
        script.close()
        before = int(psql(url, "SELECT count(*) FROM privacy_audit_logs"))
        out = subprocess.run(["wrk", f"-t{min(2, connections)}", f"-c{connections}", f"-d{args.duration}s",
                              "--timeout", "10s", "--latency", "-s", script.name, server.base],
                             check=True, capture_output=True, text=True).stdout
        os.unlink(script.name)
        peak = server.peak_rss_mib()
        server.stop()
        if "Non-2xx" in out or "Socket errors" in out:
            sys.exit(f"recording failed under load:\n{out}")
        written = int(psql(url, "SELECT count(*) FROM privacy_audit_logs")) - before
        http_rate = written / args.duration
        p99 = millis(re.search(r"99%\s+(\S+)", out).group(1))

        # The reference: the same rows by COPY, 1 000 to a transaction, `connections` clients,
        # each with as many batches as recruitd wrote per connection (at least 5).
        batches = max(5, written // 1000 // connections)
        work = Path(tempfile.mkdtemp(prefix="recruitd-copy-"))
        line = "\t".join([org, "{id}", now, entry["account_id"], "{203.0.113.7,2001:db8::1}",
                           "EMPLOYEE", user, "\\N", "\\N", "\\N", "\\N", "\\N", "\\N",
                           "{NAME,EMAIL_ADDRESS}", "Candidates", "/candidates/list", "READ"])
        scripts = []
        for c in range(connections):
            commands = []
            for b in range(batches):
                data = work / f"{c}-{b}.tsv"
                data.write_text("".join(line.replace("{id}", str(uuid.uuid4())) + "\n"
                                        for _ in range(1000)))
                commands.append(f"\\copy privacy_audit_logs ({COPY_COLUMNS}) FROM '{data}'")
            script_path = work / f"{c}.sql"
            script_path.write_text("\n".join(commands) + "\n")
            scripts.append(script_path)
        started = time.perf_counter()
        clients = [subprocess.Popen([pg_bin("psql"), url, "-X", "-q", "-v", "ON_ERROR_STOP=1",
                                     "-f", str(p)], stdout=subprocess.DEVNULL)
                   for p in scripts]
        if any(c.wait() != 0 for c in clients):
            sys.exit("the COPY reference failed")
        copy_rate = connections * batches * 1000 / (time.perf_counter() - started)
        shutil.rmtree(work, ignore_errors=True)
        rows.append((connections, f"{http_rate:,.0f}", f"{p99:.1f}", f"{copy_rate:,.0f}",
                     f"{http_rate / copy_rate:.2f}", f"{peak:.1f}"))
    table(("connections", "recruitd entries/s", "recruitd p99 ms per batch",
           "COPY entries/s", "ratio", "server peak RSS MiB"), rows)
    print(f"\n(1 000-entry batches, {args.duration} s of wrk -t2 per run; PostgreSQL with fsync "
          "and synchronous_commit on; COPY through psql, one transaction per 1 000 rows)")


def record_load(url):
    """The demo loaded; its owner token, organization and first user, the time written, one
    entry of theirs and the body of a batch of 1 000 of it."""
    import uuid
    token = demo(url)
    org = psql(url, "SELECT organization_id FROM api_tokens LIMIT 1")
    user = psql(url, f"SELECT id FROM users WHERE organization_id = '{org}' ORDER BY id LIMIT 1")
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    entry = {"access_time": now, "account_id": uuid.uuid4().hex,
             "ip_addresses": ["203.0.113.7", "2001:db8::1"],
             "data_subject": {"type": "EMPLOYEE", "user": "usr_" + user.replace("-", "")},
             "access_data": ["NAME", "EMAIL_ADDRESS"], "access_menu": "Candidates",
             "access_menu_path": "/candidates/list", "activity_category": "READ"}
    return token, org, user, now, entry, json.dumps({"entries": [entry] * 1000})


# A log destination that takes every batch at once: what the streams deliver to, so that the
# server's side is what is measured.
def cpu_seconds(pid):
    """The CPU time process `pid` has used, in seconds (user and system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


STREAM_SINK = r"""
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class Sink(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()
server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def api(base, token, method, path, body=None):
    """One call of the API: its JSON answer (none for 204)."""
    request = urllib.request.Request(
        base + path, method=method, data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        text = answer.read()
    return json.loads(text) if text else None


def database_flushes(url):
    """Transactions committed in the database and WAL flushes, so far: what a run adds to them is
    what it made PostgreSQL wait for the disk."""
    commits = psql(url, "SELECT xact_commit FROM pg_stat_database "
                        "WHERE datname = current_database()")
    return int(commits), int(psql(url, "SELECT wal_sync FROM pg_stat_wal"))


def scenario_stream(url, args):
    """Log streams beside recording: entries per second recorded through POST
    /v1/audit-logs/privacy (batches of 1 000, as `record`) with no stream, then with three HTTPS
    streams of the same organization delivering to a local receiver that takes every batch at
    once; the entries the streams delivered per entry recorded over the run, the lag they ended
    with and how long they took to catch up; the server's CPU per recorded entry both ways. The
    two sides alternate for --rounds, and each figure is their median. PostgreSQL at its default
    durability."""
    token, *_, body = record_load(url)
    sink = subprocess.Popen([sys.executable, "-c", STREAM_SINK], stdout=subprocess.PIPE,
                            text=True)
    sink_port = int(sink.stdout.readline())
    rows = []
    try:
        for connections in args.connections:
            # Rounds interleave the two sides: the machine's drift moves both alike.
            measured = {n: [] for n in args.sides}
            for streams in args.sides * args.rounds:
                server = Server(url, "--outbound-allow", "127.0.0.1")
                made = [api(server.base, token, "POST", "/v1/log-streams",
                            {"name": f"bench {n}", "destination": {
                                "type": "https", "url": f"http://127.0.0.1:{sink_port}/in/{n}"}})
                        for n in range(streams)]
                def positions():
                    return [api(server.base, token, "GET", f"/v1/log-streams/{s['id']}")
                            for s in made]
                # A replica claims new streams every sixth of a lease: wait until it holds
                # them all (it then reports their lag), so that the load meets them delivering.
                waited = time.perf_counter()
                while made:
                    metrics = urllib.request.urlopen(server.base + "/metrics").read().decode()
                    if all(f'stream_lag_entries{{stream="{s["id"]}"}}' in metrics for s in made):
                        break
                    if time.perf_counter() - waited > 60:
                        sys.exit("the streams were not claimed within a minute")
                    time.sleep(0.2)
                start = positions()
                script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
                script.write(RECORD_LUA % (json.dumps(body), token))
                script.close()
                before = int(psql(url, "SELECT count(*) FROM privacy_audit_logs"))
                cpu, sink_cpu = server.cpu_seconds(), cpu_seconds(sink.pid)
                flushes = database_flushes(url)
                out = subprocess.run(["wrk", f"-t{min(2, connections)}", f"-c{connections}",
                                      f"-d{args.duration}s", "--timeout", "10s", "-s",
                                      script.name, server.base],
                                     check=True, capture_output=True, text=True).stdout
                os.unlink(script.name)
                cpu, sink_cpu = server.cpu_seconds() - cpu, cpu_seconds(sink.pid) - sink_cpu
                time.sleep(1.5)  # backends report their counts at most once a second
                flushes = [b - a for a, b in zip(flushes, database_flushes(url))]
                recorded = int(psql(url, "SELECT count(*) FROM privacy_audit_logs")) - before
                end = positions()
                if "Non-2xx" in out or "Socket errors" in out:
                    sys.exit(f"recording failed under load:\n{out}")
                ratio = min((e["delivered_position"] - s["delivered_position"]) / recorded
                            for s, e in zip(start, end)) if made else float("nan")
                lag = max((e["lag_entries"] for e in end), default=0)
                started = time.perf_counter()
                while made and any(s["lag_entries"] for s in positions()):
                    if time.perf_counter() - started > 600:
                        sys.exit("the streams did not catch up within 10 minutes")
                    time.sleep(0.2)
                drained = time.perf_counter() - started
                for s in made:
                    api(server.base, token, "DELETE", f"/v1/log-streams/{s['id']}")
                server.stop()
                measured[streams].append((recorded / args.duration, cpu / recorded * 1e6, ratio,
                                          lag, drained, sink_cpu / recorded * 1e6,
                                          *(n / recorded * 1000 for n in flushes)))
            # Each figure's median over the rounds; the ratio of the medians of the rates. A side
            # not run (--sides) shows as "-".
            median = lambda side: [statistics.median(c) for c in zip(*measured[side])] \
                if measured.get(side) else [float("nan")] * 8
            (bare, bare_cpu, _, _, _, _, bare_commits, bare_syncs), \
                (rate, rate_cpu, ratio, lag, drained, sink_cpu, commits, syncs) = \
                median(0), median(3)
            print("rounds (entries/s without, with three streams): " + ", ".join(
                f"{a[0]:,.0f} / {b[0]:,.0f}" for a, b in zip(measured.get(0, []),
                                                              measured.get(3, []))))
            shown = lambda x, f: "-" if math.isnan(x) else format(x, f)
            rows.append((connections, shown(bare, ",.0f"), shown(rate, ",.0f"),
                         shown(rate / bare, ".2f"), shown(ratio, ".3f"),
                         shown(lag, ",.0f"), shown(drained, ".1f"), shown(bare_cpu, ".1f"),
                         shown(rate_cpu, ".1f"), shown(sink_cpu, ".1f"),
                         f"{shown(bare_commits, '.1f')} / {shown(commits, '.1f')}",
                         f"{shown(bare_syncs, '.1f')} / {shown(syncs, '.1f')}"))
    finally:
        sink.kill()
    table(("connections", "entries/s, no stream", "entries/s, 3 streams", "ratio",
           "delivered / recorded (slowest stream)", "lag at the end", "caught up in s",
           "server CPU µs/entry, no stream", "server CPU µs/entry, 3 streams",
           "receiver CPU µs/entry", "commits per 1 000 entries, no stream / 3",
           "WAL flushes per 1 000 entries, no stream / 3"), rows)
    print(f"\n(medians of {args.rounds} interleaved rounds; 1 000-entry batches, {args.duration} s "
          "of wrk per run; three HTTPS streams to a local receiver; PostgreSQL with fsync and "
          "synchronous_commit on)")


# The demo's job of the OpenAPI example: the demo data is deterministic.
DEMO_JOB = "job_706ab51d1f9c4c3ea25e07e0d1f262a0"

SOAK_LUA = """
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) s2, s4, s5, other = 0, 0, 0, 0 end
local paths = {%s}
local headers = {["Authorization"] = "Bearer %s"}
request = function()
  return wrk.format('GET', paths[math.random(#paths)], headers)
end
response = function(status, hdrs, body)
  if status >= 500 then s5 = s5 + 1
  elseif status >= 400 then s4 = s4 + 1
  elseif status >= 200 and status < 300 then s2 = s2 + 1
  else other = other + 1 end
end
done = function(summary, latency, requests)
  local t = {0, 0, 0, 0}
  for _, thread in ipairs(threads) do
    t[1] = t[1] + thread:get("s2"); t[2] = t[2] + thread:get("s4")
    t[3] = t[3] + thread:get("s5"); t[4] = t[4] + thread:get("other")
  end
  io.write(string.format("STATUS %%d %%d %%d %%d\\n", t[1], t[2], t[3], t[4]))
end
"""


def memory_kib(pid):
    """VmRSS, RssAnon and RssFile of a process, in KiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile"):
            fields[key] = int(value.split()[0])
    return fields


def slope(points):
    """Least-squares slope of (x, y) points."""
    n = len(points)
    if n < 2:
        return float("nan")
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    den = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / den if den else float("nan")


def soak(url, args, store):
    """Mixed load against one store for --minutes; RSS sampled every 10 s."""
    token = demo(url)
    server = Server(url)
    now = time.time()
    window = (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 30 * 86400)),
              time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 86400)))
    ledger = f"/v1/audit-logs/privacy?timestamp_gte={window[0]}&timestamp_lt={window[1]}"
    paths = [
        "/v1/organization", f"/v1/jobs/{DEMO_JOB}", f"/v1/jobs/{DEMO_JOB.upper()}",
        f"{ledger}&limit=25", f"{ledger}&limit=100",
        # The client's mistakes, about a tenth of the load: 400, 404, 404, 400.
        "/v1/jobs/job_nope", "/v1/jobs/00000000-0000-7000-8000-000000000000", "/v1/nowhere",
        f"{ledger}&limit=0",
    ]
    weights = [9, 9, 3, 9, 3, 1, 1, 1, 1]
    weighted = [p for p, w in zip(paths, weights) for _ in range(w)]
    script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
    script.write(SOAK_LUA % (",".join(json.dumps(p) for p in weighted), token))
    script.close()
    seconds = int(args.minutes * 60)
    connections = args.connections[0]
    load = subprocess.Popen(["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency",
                             "-s", script.name, server.base], stdout=subprocess.PIPE, text=True)
    started = time.monotonic()
    samples = []
    while load.poll() is None:
        samples.append((time.monotonic() - started, memory_kib(server.process.pid)))
        time.sleep(10)
    out = load.stdout.read()
    os.unlink(script.name)
    samples.append((time.monotonic() - started, memory_kib(server.process.pid)))
    server.stop()
    counts = re.search(r"STATUS (\d+) (\d+) (\d+) (\d+)", out)
    ok, client, server_errors, other = map(int, counts.groups())
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p99 = millis(re.search(r"\s99%\s+(\S+)", out).group(1))
    sockets = re.search(r"Socket errors: (.*)", out)
    # Warm-up: the first minute, or the first fifth of a shorter run.
    warm = min(60, seconds / 5)
    after = [(t / 60, m) for t, m in samples if t >= warm]
    mib = lambda kib: kib / 1024
    rows = []
    for t, m in samples[:: max(1, len(samples) // 12)] + [samples[-1]]:
        rows.append((store, f"{t / 60:.1f}", f"{mib(m['VmRSS']):.1f}", f"{mib(m['RssAnon']):.1f}",
                     f"{mib(m['RssFile']):.1f}"))
    summary = {
        "store": store, "requests": ok + client + server_errors + other, "per_second": rate,
        "p99_ms": p99, "2xx": ok, "4xx": client, "5xx": server_errors, "other": other,
        "socket_errors": sockets.group(1) if sockets else "none",
        "rss_start": mib(after[0][1]["VmRSS"]) if after else float("nan"),
        "rss_end": mib(samples[-1][1]["VmRSS"]),
        "rss_slope": slope([(t, mib(m["VmRSS"])) for t, m in after]),
        "anon_slope": slope([(t, mib(m["RssAnon"])) for t, m in after]),
        "file_slope": slope([(t, mib(m["RssFile"])) for t, m in after]),
    }
    return rows, summary


def scenario_soak(args):
    rows, summaries = [], []
    for store in args.stores:
        if store == "postgres":
            cluster = None
            url = os.environ.get("DATABASE_URL")
            if not url:
                cluster = Cluster()
                url = cluster.url
            try:
                r, summary = soak(url, args, store)
            finally:
                if cluster:
                    cluster.stop()
        elif store == "sqlite":
            work = Path(tempfile.mkdtemp(prefix="recruitd-soak-"))
            try:
                r, summary = soak(f"sqlite://{work / 'soak.db'}", args, store)
            finally:
                shutil.rmtree(work, ignore_errors=True)
        else:
            sys.exit(f"unknown store {store}: postgres or sqlite")
        rows += r
        summaries.append(summary)
    table(("store", "minute", "RSS MiB", "anonymous MiB", "file-backed MiB"), rows)
    print()
    table(("store", "requests", "req/s", "p99 ms", "2xx", "4xx", "5xx", "socket errors",
           "RSS after warm-up MiB", "RSS at end MiB", "RSS MiB/min", "anon MiB/min",
           "file MiB/min"),
          [(s["store"], s["requests"], f"{s['per_second']:.0f}", f"{s['p99_ms']:.1f}", s["2xx"],
            s["4xx"], s["5xx"], s["socket_errors"], f"{s['rss_start']:.1f}",
            f"{s['rss_end']:.1f}", f"{s['rss_slope']:.2f}", f"{s['anon_slope']:.2f}",
            f"{s['file_slope']:.2f}") for s in summaries])
    print(f"\n({args.minutes:g} min per store, wrk -t2 -c{args.connections[0]}, mixed reads: "
          "organization, job, ledger pages of 25 and 100 (each recorded), about a tenth "
          "client errors; slopes by least squares after the first minute)")
    if any(s["5xx"] or s["other"] for s in summaries):
        sys.exit("the soak saw server errors")


if __name__ == "__main__":
    main()
