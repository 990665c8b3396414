#!/usr/bin/env python3
"""recruitd against the database's own limit, side by side, in one run on one machine.

    bench/run.py jobs      # scenarios 1 and 6: job and organization reads vs pgbench, memory
    bench/run.py ledger    # scenario 2: ledger pages, first vs a cursor 1 000 000 entries deep
    bench/run.py adapter   # scenario 3: the adapter vs bare tokio-postgres, in one process
    bench/run.py ids       # scenario 4: identifier parsing and formatting vs uuid (divan)
    bench/run.py import    # scenario 5: NDJSON import into PostgreSQL and SQLite

Each scenario starts a throwaway PostgreSQL cluster (initdb into a temporary directory, a free
port; as the `postgres` user when run as root) unless DATABASE_URL names a database to use,
builds recruitd in release mode, loads the data, runs the HTTP load (wrk) and the database load
(pgbench) for the same duration and client counts, and prints a table. Nothing else may run on
the machine meanwhile; the ratios are what to compare between machines, not the absolute rates.

Options: --duration SECONDS (default 20), --connections 8,64, --entries N (ledger),
--organizations N (ledger). Needs wrk (Debian: apt-get install wrk), pgbench and psql.
"""

import argparse
import json
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
import urllib.request
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

    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="recruitd-bench-"))
        self.port = free_port()
        as_root = os.geteuid() == 0
        self.user = pwd.getpwnam("postgres") if as_root else None
        if self.user:
            os.chown(self.dir, self.user.pw_uid, self.user.pw_gid)
        self.run([pg_bin("initdb"), "-D", str(self.dir / "data"), "-A", "trust", "-U", "postgres",
                  "--no-sync"])
        options = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 "
                   "-c shared_buffers=1GB -c max_connections=300 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off")
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


class Server:
    """recruitd serving the database; its CPU time and peak memory read from /proc. Rate limits
    are off: the benchmarks measure the server's capacity, not its quotas (the cost of counting
    is measured by `bench/run.py limits`)."""

    def __init__(self, url, *extra, env=None):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [str(BIN), "--database-url", url, "--db-pool-size", "32", "serve", "--listen",
             f"127.0.0.1:{self.port}", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            env={**os.environ, "RUST_LOG": "warn", "RECRUITD_RATE_LIMIT_READS": "off",
                 "RECRUITD_RATE_LIMIT_LEDGER_READS": "off",
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
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK

    def peak_rss_mib(self):
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)


def millis(value):
    number, unit = re.match(r"([\d.]+)(us|ms|s)", value).groups()
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def wrk(base, paths, token, connections, duration):
    """req/s, p50 and p99 in ms, and the number of requests, of GETs of random `paths`."""
    script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
    script.write("local paths = {%s}\n" % ",".join(json.dumps(p) for p in paths))
    script.write('local headers = {["Authorization"] = "Bearer %s"}\n' % token)
    script.write("request = function()\n"
                 "  return wrk.format('GET', paths[math.random(#paths)], headers)\n"
                 "end\n")
    script.close()
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency",
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


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", choices=["jobs", "ledger", "adapter", "ids", "import"])
    parser.add_argument("--duration", type=int, default=20)
    parser.add_argument("--connections", default="8,64",
                        type=lambda s: [int(c) for c in s.split(",")])
    parser.add_argument("--entries", type=int, default=10_000_000)
    parser.add_argument("--organizations", type=int, default=20)
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
            cluster = Cluster()
            env["DATABASE_URL"] = cluster.url
        try:
            code = subprocess.run(delegated[args.scenario], cwd=ROOT, env=env).returncode
        finally:
            if cluster:
                cluster.stop()
        sys.exit(code)
    if not shutil.which("wrk"):
        sys.exit("wrk not found: apt-get install wrk")
    build(*(["bench_data"] if args.scenario == "ledger" else []))
    cluster = None
    url = os.environ.get("DATABASE_URL")
    if not url:
        cluster = Cluster()
        url = cluster.url
    try:
        {"jobs": scenario_jobs, "ledger": scenario_ledger}[args.scenario](url, args)
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
    server.stop()
    for name, tail in [("first page", "LIMIT 101"), (f"{DEPTH:,} deep", f"OFFSET {DEPTH} LIMIT 101")]:
        sql = OFFSET_SQL.format(org=org, gte=gte, lt=lt, tail=tail)
        tps, p50, p99 = pgbench(url, sql, connections, args.duration)
        rows.append(("SQL OFFSET", name, f"{tps:.0f}", f"{p50:.2f}", f"{p99:.2f}"))
    table(("path", "page", "per second", "p50 ms", "p99 ms"), rows)
    ratio = results[f"{DEPTH:,} deep"] / results["first page"]
    print(f"\nDeep page p50 / first page p50 (HTTP, keyset): {ratio:.2f}")
    print(f"({args.entries:,} entries over {args.organizations} organizations, {count:,} in the "
          f"listed one; generated in {generated:.0f} s, imported in {imported:.0f} s; "
          f"{connections} connections, {args.duration} s per run)")
    for name, extra in [("first page", []), (f"{DEPTH:,} deep", ["--at", at, "--id", entry_id])]:
        plan = subprocess.run([str(EXAMPLE), "explain", "--url", url, "--org", org_id, "--gte",
                               gte, "--lt", lt, *extra], check=True, capture_output=True,
                              text=True).stdout
        print(f"\nEXPLAIN (ANALYZE, BUFFERS), {name}:\n{plan}")


if __name__ == "__main__":
    main()
