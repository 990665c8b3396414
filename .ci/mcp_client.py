"""The tool interface through the official MCP Python SDK, as an agent host would use it.

Against a running demo server: connect over streamable HTTP with each protocol revision
(2026-07-28 through `server/discover`, 2025-11-25 through `initialize`) and over stdio
(`recruitd mcp --token-file`), list the tools, call each with valid and invalid arguments, and
compare every structured result with the REST response for the same token and input. Also: a
request without a token is refused with 401 and the protected resource metadata, an unknown tool
is a JSON-RPC error, and every successful list call is in the tool-interface audit ledger.

Usage: python mcp_client.py BASE_URL OWNER_TOKEN MEMBER_TOKEN RECRUITD DATABASE_URL CHECKPOINT_KEY
Exits non-zero on the first difference.
"""

import json
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta, timezone

import anyio
import httpx2
from mcp import Client, MCPError
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

BASE, OWNER, MEMBER, RECRUITD, DATABASE_URL, CHECKPOINT_KEY = sys.argv[1:7]


def snake_case(name):
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


def declared_tools():
    """The tools the served OpenAPI document declares: every operation under /v1/ that has a
    tool description, by its operationId in snake case (the server's one rule for both); and
    those among them that read the audit ledger (a GET that needs READ_AUDIT_LOGS), whose
    successes the tool-interface ledger records."""
    document = httpx2.get(BASE + "/openapi.json", timeout=30).json()
    tools = {
        (snake_case(operation["operationId"]), method, operation.get("x-permission"))
        for path, item in document["paths"].items() if path.startswith("/v1/")
        for method, operation in item.items() if "x-tool-description" in operation
    }
    reads = tuple(sorted(t for t, method, permission in tools
                         if method == "get" and permission == "READ_AUDIT_LOGS"))
    return {t for t, _, _ in tools}, reads


TOOLS, RECORDED_READS = declared_tools()
CHECKPOINT = "/v1/audit-logs/privacy/checkpoints/latest"
# The demo's member, whose profile the owner may change (the OpenAPI document's example).
USER = "usr_5616645275f24ead8b29525ba5e380ae"
CLIENT = Implementation(name="recruitd-ci", version="1")

now = datetime.now(timezone.utc).replace(microsecond=0)
GTE = (now - timedelta(days=90)).isoformat().replace("+00:00", "Z")
LT = (now + timedelta(days=1)).isoformat().replace("+00:00", "Z")


checked = 0
list_calls = 0
write_calls = 0


def check(condition, what):
    global checked
    if not condition:
        print(f"FAIL: {what}", file=sys.stderr)
        sys.exit(1)
    checked += 1


def rest(path, token, params=None):
    response = httpx2.get(
        BASE + path, params=params, headers={"Authorization": f"Bearer {token}"}, timeout=30
    )
    return response.json()


def rest_patch(path, token, body, if_match=None):
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/merge-patch+json"}
    if if_match is not None:
        headers["If-Match"] = if_match
    return httpx2.patch(BASE + path, content=json.dumps(body), headers=headers, timeout=30).json()


def rest_put(path, token, body):
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    return httpx2.put(BASE + path, content=json.dumps(body), headers=headers, timeout=30).json()


def rest_list(token, **query):
    params = {"timestamp_gte": GTE, "timestamp_lt": LT}
    for key, value in query.items():
        params[key] = ",".join(value) if isinstance(value, list) else value
    return rest("/v1/audit-logs/privacy", token, params)


async def same(client, tool, arguments, expected, what, error=False):
    """Calls `tool` and checks its structured result is `expected` (the REST body)."""
    global list_calls
    result = await client.call_tool(tool, arguments)
    check(bool(result.is_error) == error,
          f"{what}: isError is {result.is_error}: {result.structured_content}")
    check(result.structured_content == expected, f"{what}: {result.structured_content} != {expected}")
    text = [c.text for c in result.content if c.type == "text"]
    check(text and json.loads(text[0]) == expected, f"{what}: the text content is not the body")
    # Reads of the ledger, its checkpoint included, are recorded in the tool-interface ledger.
    if tool in RECORDED_READS and not error:
        list_calls += 1
    return result


async def exercise(client, label, token):
    tools = (await client.list_tools()).tools
    check({t.name for t in tools} == TOOLS, f"{label}: tools are {[t.name for t in tools]}")
    for tool in tools:
        check(len(tool.description or "") > 80, f"{label}: {tool.name} has a description")
        check(tool.input_schema.get("type") == "object", f"{label}: {tool.name} input schema")
        check(tool.output_schema is not None, f"{label}: {tool.name} has an output schema")

    organization = rest("/v1/organization", token)
    await same(client, "get_organization", {}, organization, f"{label}: get_organization")
    check("get_me" in TOOLS, f"{label}: the document declares get_me")
    await same(client, "get_me", {}, rest("/v1/me", token), f"{label}: get_me")

    # The chain's checkpoint: nothing is recorded in the privacy ledger between the two calls,
    # so the tool returns the checkpoint REST just signed.
    checkpoint = rest(CHECKPOINT, token)
    check(checkpoint.get("algorithm") == "Ed25519" and checkpoint.get("ledger") == "privacy",
          f"{label}: a checkpoint of the privacy ledger: {checkpoint}")
    await same(client, "get_latest_privacy_audit_log_checkpoint", {}, checkpoint,
               f"{label}: get_latest_privacy_audit_log_checkpoint")

    page = rest_list(token, limit="5")
    check(len(page["data"]) == 5, f"{label}: the demo has ledger entries")
    await same(client, "list_privacy_audit_logs",
               {"timestamp_gte": GTE, "timestamp_lt": LT, "limit": 5}, page, f"{label}: first page")
    cursor = page["pagination"]["next_cursor"]
    await same(client, "list_privacy_audit_logs",
               {"timestamp_gte": GTE, "timestamp_lt": LT, "limit": 7, "cursor": cursor},
               rest_list(token, limit="7", cursor=cursor), f"{label}: next page")
    ids = [entry["id"] for entry in page["data"][:3]]
    await same(client, "list_privacy_audit_logs",
               {"timestamp_gte": GTE, "timestamp_lt": LT, "ids": ids},
               rest_list(token, ids=ids), f"{label}: by ids")

    job_id = "job_706ab51d1f9c4c3ea25e07e0d1f262a0"
    await same(client, "get_job", {"job_id": job_id}, rest(f"/v1/jobs/{job_id}", token),
               f"{label}: get_job")
    dashed = job_id[4:12] + "-" + job_id[12:16] + "-" + job_id[16:20] + "-" + job_id[20:24] + "-" + job_id[24:]
    await same(client, "get_job", {"job_id": dashed.upper()}, rest(f"/v1/jobs/{job_id}", token),
               f"{label}: get_job, dashed and upper case")

    # Domain failures: the REST envelope, same code, same details.
    await same(client, "get_job", {"job_id": "nope"}, rest_error_as_tool(
        rest("/v1/jobs/nope", token), "jobId", "job_id"), f"{label}: bad job id", error=True)
    await same(client, "get_job", {"job_id": "job_" + "0" * 32},
               rest("/v1/jobs/job_" + "0" * 32, token), f"{label}: no such job", error=True)
    await same(client, "list_privacy_audit_logs", {"timestamp_gte": GTE, "timestamp_lt": LT, "limit": 0},
               rest_list(token, limit="0"), f"{label}: limit 0", error=True)
    await same(client, "list_privacy_audit_logs",
               {"timestamp_gte": GTE, "timestamp_lt": LT, "cursor": "garbage"},
               rest_list(token, cursor="garbage"), f"{label}: a garbage cursor", error=True)
    await same(client, "list_privacy_audit_logs",
               {"timestamp_gte": LT, "timestamp_lt": GTE, "limit": 500},
               rest_list(token, timestamp_gte=LT, timestamp_lt=GTE, limit="500"),
               f"{label}: every problem at once", error=True)
    await same(client, "get_organization", {"expand": "all"},
               rest("/v1/organization", token, {"expand": "all"}), f"{label}: unknown argument",
               error=True)

    # Recording an access: the key is an argument; the same call again is the first result,
    # and the entry is in the ledger once, as REST lists it.
    global write_calls
    key = f"mcp-check-{label}"
    entry = {
        "access_time": datetime.now(timezone.utc).isoformat(),
        "account_id": "0b7c5d1e6f8a4b3c9d2e1f0a1b2c3d4e",
        "ip_addresses": ["198.51.100.7"],
        "data_subject": {"type": "EMPLOYEE", "user": "usr_0b7c5d1e6f8a4b3c9d2e1f0a1b2c3d4e"},
        "access_data": ["NAME"],
        "access_menu": "MCP check",
        "access_menu_path": f"/check/{label}",
        "activity_category": "READ",
    }
    first = await client.call_tool("record_privacy_accesses",
                                   {"idempotency_key": key, "entries": [entry]})
    check(not first.is_error, f"{label}: record_privacy_accesses: {first.structured_content}")
    write_calls += 1
    recorded = first.structured_content["entries"]
    await same(client, "record_privacy_accesses", {"idempotency_key": key, "entries": [entry]},
               first.structured_content, f"{label}: the same write again")
    write_calls += 1
    listed = rest_list(token, ids=[recorded[0]["id"]])
    check(listed["data"] == recorded, f"{label}: the recorded entry, as REST lists it")

    # Profiles: a read is the REST body with its etag; a change with that etag is made and
    # reads back as REST shows it; a stale etag is CONFLICT; the same refusals as REST.
    profile = rest(f"/v1/users/{USER}", token)
    await same(client, "get_user", {"user_id": USER}, profile, f"{label}: get_user")
    title = f"Checked over {label}"
    changed = await client.call_tool("update_user",
                                     {"user_id": USER, "if_match": profile["etag"], "title": title})
    check(not changed.is_error, f"{label}: update_user: {changed.structured_content}")
    check(changed.structured_content["title"] == title, f"{label}: the title changed")
    check(changed.structured_content == rest(f"/v1/users/{USER}", token),
          f"{label}: the change, as REST reads it")
    stale = await client.call_tool("update_user",
                                   {"user_id": USER, "if_match": profile["etag"], "title": "x"})
    check(stale.is_error and stale.structured_content["error"]["code"] == "CONFLICT",
          f"{label}: a stale etag: {stale.structured_content}")
    await same(client, "update_user", {"user_id": USER, "email": "x@example.com", "title": ""},
               rest_patch(f"/v1/users/{USER}", token, {"email": "x@example.com", "title": ""}),
               f"{label}: fields that cannot be changed", error=True)

    # The month's review: the REST body; a decision on an entry that is no download of the
    # month is the REST refusal.
    month = datetime.now(timezone.utc).strftime("%Y-%m")
    await same(client, "get_privacy_access_review", {"month": month},
               rest(f"/v1/audit-logs/privacy/reviews/{month}", token),
               f"{label}: get_privacy_access_review")
    nowhere = "pal_" + "0" * 32
    decision = {"status": "CONFIRMED", "reason": "Checked over MCP."}
    await same(client, "review_privacy_access_download",
               {"month": month, "entry_id": nowhere, **decision},
               rest_put(f"/v1/audit-logs/privacy/reviews/{month}/downloads/{nowhere}", token, decision),
               f"{label}: a decision on no download", error=True)

    # A protocol failure: a JSON-RPC error, not a tool result.
    try:
        await client.call_tool("delete_everything", {})
        check(False, f"{label}: an unknown tool is a JSON-RPC error")
    except MCPError as e:
        check(e.code == -32602, f"{label}: unknown tool error code {e.code}")


def rest_error_as_tool(envelope, rest_name, tool_name):
    """The REST envelope with the parameter named as the tool names it."""
    for detail in envelope["error"].get("details", []):
        if detail.get("field") == rest_name:
            detail["field"] = tool_name
    return envelope


async def over_http(mode, expected_revision):
    label = f"HTTP {expected_revision}"
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {OWNER}"}, timeout=30) as http:
        async with Client(streamable_http_client(BASE + "/mcp", http_client=http), mode=mode,
                          client_info=CLIENT, cache=None) as client:
            check(client.protocol_version == expected_revision,
                  f"{label}: negotiated {client.protocol_version}")
            await exercise(client, label, OWNER)
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {MEMBER}"}, timeout=30) as http:
        async with Client(streamable_http_client(BASE + "/mcp", http_client=http), mode=mode,
                          client_info=CLIENT, cache=None) as client:
            await same(client, "list_privacy_audit_logs", {"timestamp_gte": GTE, "timestamp_lt": LT},
                       rest_list(MEMBER), f"{label}: a member may not read the ledger", error=True)
            await same(client, "get_latest_privacy_audit_log_checkpoint", {},
                       rest(CHECKPOINT, MEMBER), f"{label}: nor its checkpoint", error=True)


async def over_stdio():
    with tempfile.NamedTemporaryFile("w", suffix=".token") as token_file:
        token_file.write(OWNER + "\n")
        token_file.flush()
        server = StdioServerParameters(
            command=RECRUITD,
            args=["--database-url", DATABASE_URL, "--checkpoint-key", CHECKPOINT_KEY, "mcp",
                  "--token-file", token_file.name, "--public-base-url", BASE],
            env={"RUST_LOG": "warn"},
        )
        async with Client(server, client_info=CLIENT, cache=None) as client:
            await exercise(client, f"stdio {client.protocol_version}", OWNER)


def without_a_token():
    response = httpx2.post(BASE + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                           headers={"Accept": "application/json, text/event-stream"})
    check(response.status_code == 401, f"no token: status {response.status_code}")
    challenge = response.headers.get("www-authenticate", "")
    check(challenge.startswith("Bearer ") and "resource_metadata=" in challenge,
          f"no token: WWW-Authenticate is {challenge!r}")
    check(response.json()["error"]["code"] == "UNAUTHENTICATED", "no token: the envelope")
    metadata_url = challenge.split('resource_metadata="')[1].split('"')[0]
    metadata = httpx2.get(metadata_url).json()
    check(metadata["resource"] == BASE + "/mcp", f"metadata names the resource: {metadata}")
    check(set(metadata["scopes_supported"])
          == {"audit_logs:read", "jobs:read", "organization:read", "audit_logs:write",
              "users:read", "users:write", "audit_logs:review", "organization:admin",
              "log_streams:admin"},
          f"metadata names the scopes: {metadata}")


def tool_ledger_entries():
    output = subprocess.run(
        [RECRUITD, "--database-url", DATABASE_URL, "audit", "list", "--ledger", "tool",
         "--limit", "10000", "--json"],
        check=True, capture_output=True, text=True, env={"RUST_LOG": "warn"},
    ).stdout
    return [json.loads(line) for line in output.splitlines() if line.strip()]


async def main():
    without_a_token()
    before = len(tool_ledger_entries())
    await over_http("auto", "2026-07-28")
    await over_http("legacy", "2025-11-25")
    await over_stdio()
    entries = tool_ledger_entries()
    written = sum(1 for e in entries[: len(entries) - before] if e["tool_name"] == "record_privacy_accesses")
    check(len(entries) - before == list_calls + written,
          f"{list_calls} list calls and {written} writes, {len(entries) - before} tool ledger entries")
    # A replayed write records nothing again: one entry per first call.
    check(written * 2 == write_calls, f"{write_calls} write calls, {written} recorded")
    check(all(e["tool_name"] in RECORDED_READS + ("record_privacy_accesses",) for e in entries),
          "the tool ledger names the tool")
    print(f"MCP client check: {checked} checks passed ({list_calls} recorded list calls, "
          f"{write_calls} write calls; "
          "revisions 2026-07-28 and 2025-11-25 over HTTP, stdio)")


anyio.run(main)
