"""scim2-tester against a SCIM 2.0 base URL, every result printed, the run failed unless each is SUCCESS.

Usage: python scim_check.py BASE_URL TOKEN   (BASE_URL such as http://127.0.0.1:8080/scim/v2)

check_server runs the discovery checks (/ServiceProviderConfig, /ResourceTypes, /Schemas, their 405s
and 404s), a 404 on an unknown URL, then for each resource type the server publishes: POST, GET,
list, attributes/excludedAttributes on GET, list and POST /.search, PUT, DELETE, and a PATCH add,
remove and replace on each top-level attribute. The models it builds its requests from come from
what /Schemas publishes, so a schema left incomplete there is tested as published.

A result is accepted when its status is SUCCESS, or SKIPPED for a check named in ALLOWED_SKIPS.
Every other status, COMPLIANT, ACCEPTABLE and DEVIATION included, fails the run: the SCIM endpoint
is held to the strict reading. The CLI (`scim --url … test`) fails on any SKIPPED, hence this file.
"""

import sys
from importlib.metadata import version

from httpx2 import Client
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_tester import Status, check_server

# The checks that may be SKIPPED, by title (the checker's function name), with the reason. Each
# entry is a decision: say why the server does not do what the check needs. Empty: none may be.
ALLOWED_SKIPS: dict[str, str] = {
    # "search_with_attributes": "POST /.search at the root: the server answers 501 ...",
}


def printable(text: object) -> str:
    """The text with its control characters escaped (what the server sent is echoed), indented."""
    escaped = "".join(
        c if c == "\n" or c.isprintable() else f"\\x{ord(c):02x}" for c in str(text)
    )
    return escaped.replace("\n", "\n    ")


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: scim_check.py BASE_URL TOKEN", file=sys.stderr)
        return 2
    base_url, token = sys.argv[1], sys.argv[2]
    print(
        f"scim2-tester {version('scim2-tester')}, scim2-client {version('scim2-client')}, "
        f"scim2-models {version('scim2-models')} against {base_url}",
        flush=True,
    )

    http = Client(
        base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30.0
    )
    with http:
        # A client that knows nothing of the server: check_server reads the three discovery
        # endpoints itself and reports their failures as results rather than raising.
        results = check_server(SyncSCIMClient(http))

    counts = {"success": 0, "allowed skip": 0, "failed": 0}
    for result in results:
        status = result.status
        if status == Status.SUCCESS:
            verdict = "success"
        elif status == Status.SKIPPED and result.title in ALLOWED_SKIPS:
            verdict = "allowed skip"
        else:
            verdict = "failed"
        counts[verdict] += 1

        where = f"[{result.resource_type}] " if result.resource_type else ""
        mark = "  " if verdict != "failed" else "!!"
        print(f"{mark} {status.name:<8} {where}{result.title}: {printable(result.reason or '')}")
        if verdict == "allowed skip":
            print(f"    allowed: {ALLOWED_SKIPS[result.title]}")
        if verdict == "failed" and result.data is not None:
            data = printable(result.data)
            print(f"    data: {data[:2000]}{' …' if len(data) > 2000 else ''}")

    exercised = sorted({r.resource_type for r in results if r.resource_type})
    print(
        f"scim2-tester: {len(results)} results, {counts['success']} SUCCESS, "
        f"{counts['allowed skip']} SKIPPED as allowed, {counts['failed']} not accepted; "
        f"resource types exercised: {', '.join(exercised) or 'none'}"
    )
    if counts["failed"]:
        return 1
    # A discovery that went wrong ends check_server before any resource check, with the reason
    # among the results above; should nothing have failed, still refuse a run that tested nothing.
    if not exercised:
        print("no resource type was exercised")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
