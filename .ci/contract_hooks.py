"""Schemathesis hooks for recruitd's contract run.

OpenAPI cannot state the list operation's rules that tie parameters together: the window
`timestamp_gte < timestamp_lt` spans at most 366 days, and a cursor is one the server signed for
these filters. A request generated as "schema-valid" breaks them by chance and is rightly
refused with 400, which the positive-data check would count as a valid request rejected. So,
for positive cases of that operation only, the window is repaired to a valid one (still
schema-valid, with the generated start kept) and a made-up cursor is dropped; cursors the server
issued are exercised by the stateful phase, which fills them in from the `nextPage` link after
this hook has run. Negative cases are left
as generated.

Recording accesses has rules of the same kind: an entry's `access_time` at most 5 minutes
ahead of the server's clock, an `id` not already in the ledger nor twice in the batch, and an
idempotency key used for one body only. For positive cases of that operation, each entry's
time is set to now, client ids are left out (the server assigns them), and each case gets a
fresh key; the key's other answers are tested directly (crates/http/tests/record.rs).
"""

import uuid
from datetime import datetime, timedelta, timezone

import schemathesis
from schemathesis import GenerationMode

MAX_WINDOW = timedelta(days=366)


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


@schemathesis.hook
def map_case(ctx, case):
    operation = getattr(ctx, "operation", None)
    operation_id = None if operation is None else operation.definition.raw.get("operationId")
    meta = case.meta
    if operation_id == "recordPrivacyAccesses":
        positive = meta is not None and meta.generation.mode == GenerationMode.POSITIVE
        return _record(case) if positive else case
    if operation_id != "listPrivacyAuditLogs":
        return case
    if meta is None or meta.generation.mode != GenerationMode.POSITIVE or not case.query:
        return case
    query = dict(case.query)
    # Runs on generated data, before a link fills in a cursor the server issued.
    query.pop("cursor", None)
    gte, lt = _parse(query.get("timestamp_gte")), _parse(query.get("timestamp_lt"))
    if gte is not None and lt is not None and not (gte < lt <= gte + MAX_WINDOW):
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
    return case
