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
"""

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


@schemathesis.hook
def map_case(ctx, case):
    operation = getattr(ctx, "operation", None)
    if operation is None or operation.definition.raw.get("operationId") != "listPrivacyAuditLogs":
        return case
    meta = case.meta
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
