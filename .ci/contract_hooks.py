"""Schemathesis hooks for recruitd's contract run.

OpenAPI cannot state the list operation's rules that tie parameters together: the window
`timestamp_gte < timestamp_lt` spans at most 366 days (the export's, at most the retention
period: two years), and a cursor is one the server signed for these filters. A request generated as "schema-valid" breaks them by chance and is rightly
refused with 400, which the positive-data check would count as a valid request rejected. So,
for positive cases of that operation only, a made-up cursor is dropped when the case is
generated (`map_case`; cursors the server issued are filled in later by the stateful phase from
the `nextPage` link), and the window is repaired to a valid one just before the request is sent
(`before_call`, after links have filled their parameters: the `listRecorded` link of a recording
sets only the start, to the recorded entry's time), keeping the start. Negative cases are left
as generated.

Recording accesses has rules of the same kind: an entry's `access_time` at most 5 minutes
ahead of the server's clock, an `id` not already in the ledger nor twice in the batch, and an
idempotency key used for one body only. For positive cases of that operation, each entry's
time is set to now, client ids are left out (the server assigns them), and each case gets a
fresh key; the key's other answers are tested directly (crates/http/tests/record.rs).

Changing a profile has them too: a manager must be a user of the organization (and not below
the user), and `If-Match` must name the current version. For positive cases of that operation,
a generated manager is replaced by none, a generated LinkedIn URL by one the server's URL parser
accepts, and a generated `If-Match` is dropped (the `updateUser` link of a read sets the real
one afterwards). Those answers are tested directly (bins/recruitd/tests/e2e.rs).
"""

import uuid
from datetime import datetime, timedelta, timezone

import schemathesis
from schemathesis import GenerationMode

# The longest window each operation takes (the export's: two years of at least 365 days).
MAX_WINDOW = {
    "listPrivacyAuditLogs": timedelta(days=366),
    "exportPrivacyAuditLogs": timedelta(days=730),
}


def _parse(value):
    try:
        parsed = datetime.fromisoformat(str(value).replace("z", "Z").replace("t", "T"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _record(case):
    """A positive case of recordPrivacyAccesses, repaired to the rules the schema cannot say."""
    body = case.body
    if isinstance(body, dict) and isinstance(body.get("entries"), list):
        now = datetime.now(timezone.utc).isoformat()
        for entry in body["entries"]:
            if isinstance(entry, dict):
                entry.pop("id", None)
                entry["access_time"] = now
    headers = dict(case.headers or {})
    headers["Idempotency-Key"] = f'"{uuid.uuid4()}"'
    case.headers = headers
    return case


def _update(case):
    """A positive case of updateUser, repaired to the rules the schema cannot say."""
    body = case.body
    if isinstance(body, dict):
        if "manager" in body:
            body["manager"] = None
        if isinstance(body.get("linkedin_url"), str):
            body["linkedin_url"] = "https://www.linkedin.com/in/contract-check"
    if case.headers:
        case.headers = {k: v for k, v in case.headers.items() if k.lower() != "if-match"}
    return case


def _positive(case):
    meta = case.meta
    return meta is not None and meta.generation.mode == GenerationMode.POSITIVE


def _operation_id(case):
    return case.operation.definition.raw.get("operationId")


@schemathesis.hook
def map_case(ctx, case):
    operation_id = _operation_id(case)
    if not _positive(case):
        return case
    if operation_id == "recordPrivacyAccesses":
        return _record(case)
    if operation_id == "updateUser":
        return _update(case)
    if operation_id == "listPrivacyAuditLogs" and case.query:
        # Runs on generated data, before a link fills in a cursor the server issued.
        case.query = {k: v for k, v in case.query.items() if k != "cursor"}
    return case


@schemathesis.hook
def before_call(ctx, case, kwargs):
    longest = MAX_WINDOW.get(_operation_id(case))
    if longest is None or not _positive(case) or not case.query:
        return
    query = dict(case.query)
    gte, lt = _parse(query.get("timestamp_gte")), _parse(query.get("timestamp_lt"))
    if gte is not None and lt is not None and not (gte < lt <= gte + longest):
        try:
            end = gte + timedelta(days=1)
        except OverflowError:
            end = None
        if end is None or end.year > 9999:
            query["timestamp_lt"] = query["timestamp_gte"]
            query["timestamp_gte"] = (gte - timedelta(days=1)).astimezone(timezone.utc).isoformat()
        else:
            query["timestamp_lt"] = end.astimezone(timezone.utc).isoformat()
    case.query = query
