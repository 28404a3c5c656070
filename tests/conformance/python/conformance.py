"""Drive the official Azure Cosmos DB SDK for Python against a running cosmos-emulator.

Environment:
  COSMOS_ENDPOINT   global endpoint, e.g. http://127.0.0.1:8081/
  COSMOS_KEY        the emulator's master key (base64)
  COSMOS_REGIONS    the emulator's regions, comma separated, in account order (at least two)

Only documented SDK options are used. Each check prints PASS or FAIL with the reason; the last line
is "N passed, N failed" and the exit status is non-zero when anything failed.
"""

import base64
import json
import os
import sys
import time
import traceback
import urllib.request
import uuid

from azure.core import MatchConditions
from azure.cosmos import CosmosClient, PartitionKey, exceptions

from checks_feeds import feed_checks
from checks_hierarchical import hierarchical_checks
from checks_metadata import metadata_checks
from checks_query import query_checks
from checks_rules import rules_checks

ENDPOINT = os.environ["COSMOS_ENDPOINT"]
KEY = os.environ["COSMOS_KEY"]
REGIONS = [r.strip() for r in os.environ["COSMOS_REGIONS"].split(",") if r.strip()]

# Small retry budgets keep a broken emulator from stretching the run into minutes.
CLIENT_OPTIONS = {"connection_timeout": 10, "retry_total": 2, "retry_backoff_max": 1}


def admin(method, path):
    """Call the emulator's admin API (the account key as a bearer credential) and return the
    decoded JSON body."""
    request = urllib.request.Request(
        ENDPOINT.rstrip("/") + path,
        method=method,
        headers={"Authorization": "Bearer " + KEY},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"null")


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def run(self, name, check):
        try:
            check()
        except Exception as error:  # a failed check must not stop the others
            self.failed += 1
            print(f"FAIL {name}: {type(error).__name__}: {error}")
            traceback.print_exc(limit=3, file=sys.stdout)
        else:
            self.passed += 1
            print(f"PASS {name}")


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def expect_error(status, error_type, action):
    """Run action and require that it raises error_type with this HTTP status."""
    try:
        action()
    except error_type as error:
        expect(error.status_code == status, f"expected status {status}, got {error.status_code}: {error}")
        return error
    raise AssertionError(f"expected {error_type.__name__} ({status}), nothing was raised")


def main():
    expect(len(REGIONS) >= 2, "COSMOS_REGIONS must name at least two regions")
    checks = Checks()
    client = CosmosClient(ENDPOINT, credential=KEY, **CLIENT_OPTIONS)
    db_name = f"conformance-{uuid.uuid4().hex[:8]}"
    state = {}

    def create_database_and_container():
        database = client.create_database(db_name)
        container = database.create_container("items", partition_key=PartitionKey(path="/pk"))
        properties = container.read()
        expect(properties["partitionKey"]["paths"] == ["/pk"], f"partition key {properties['partitionKey']}")
        state["container"] = container

    def create_and_read_item():
        container = state["container"]
        created = container.create_item({"id": "a", "pk": "p1", "n": 1, "s": "one"})
        expect(created["id"] == "a" and created["n"] == 1, f"created {created}")
        expect(created.get("_etag"), "created item has no _etag")
        read = container.read_item("a", partition_key="p1")
        expect(read["n"] == 1 and read["_etag"] == created["_etag"], f"read {read}")
        expect_error(409, exceptions.CosmosResourceExistsError,
                     lambda: container.create_item({"id": "a", "pk": "p1"}))

    def replace_item():
        container = state["container"]
        read = container.read_item("a", partition_key="p1")
        replaced = container.replace_item("a", {"id": "a", "pk": "p1", "n": 2, "s": "two"},
                                          etag=read["_etag"], match_condition=MatchConditions.IfNotModified)
        expect(replaced["n"] == 2 and replaced["_etag"] != read["_etag"], f"replaced {replaced}")
        state["stale_etag"] = read["_etag"]

    def stale_etag_replace_raises_412():
        container = state["container"]
        expect_error(412, exceptions.CosmosAccessConditionFailedError,
                     lambda: container.replace_item("a", {"id": "a", "pk": "p1", "n": 99},
                                                    etag=state["stale_etag"],
                                                    match_condition=MatchConditions.IfNotModified))
        expect(container.read_item("a", partition_key="p1")["n"] == 2, "the stale replace changed the item")

    def upsert_item():
        container = state["container"]
        inserted = container.upsert_item({"id": "b", "pk": "p2", "n": 10})
        expect(inserted["n"] == 10, f"upsert (insert) {inserted}")
        updated = container.upsert_item({"id": "b", "pk": "p2", "n": 11})
        expect(updated["n"] == 11, f"upsert (update) {updated}")
        expect(container.read_item("b", partition_key="p2")["n"] == 11, "upserted value not read back")

    def patch_item_incr_and_set():
        container = state["container"]
        patched = container.patch_item("a", partition_key="p1", patch_operations=[
            {"op": "incr", "path": "/n", "value": 5},
            {"op": "set", "path": "/s", "value": "patched"},
            {"op": "set", "path": "/nested", "value": {"x": 1}},
        ])
        expect(patched["n"] == 7 and patched["s"] == "patched" and patched["nested"] == {"x": 1},
               f"patched {patched}")
        expect(container.read_item("a", partition_key="p1")["n"] == 7, "patch not read back")

    def delete_item_and_missing_item_raises_404():
        container = state["container"]
        container.delete_item("b", partition_key="p2")
        expect_error(404, exceptions.CosmosResourceNotFoundError,
                     lambda: container.read_item("b", partition_key="p2"))
        expect_error(404, exceptions.CosmosResourceNotFoundError,
                     lambda: container.read_item("never-written", partition_key="p1"))
        expect_error(404, exceptions.CosmosResourceNotFoundError,
                     lambda: container.delete_item("b", partition_key="p2"))

    def wrong_key_raises_401():
        wrong_key = base64.b64encode(b"this is not the emulator's key, 64 bytes long, padded out.....").decode()

        def use_wrong_key():
            other = CosmosClient(ENDPOINT, credential=wrong_key, **CLIENT_OPTIONS)
            other.get_database_client(db_name).read()

        expect_error(401, exceptions.CosmosHttpResponseError, use_wrong_key)

    def preferred_location_reads_from_that_region():
        preferred = REGIONS[1]
        regional = CosmosClient(ENDPOINT, credential=KEY, preferred_locations=[preferred], **CLIENT_OPTIONS)
        container = regional.get_database_client(db_name).get_container_client("items")
        container.read()  # metadata first, so only the item read below is counted as a read
        admin("DELETE", "/_emulator/counters")
        item = container.read_item("a", partition_key="p1")
        expect(item["n"] == 7, f"read {item}")
        counters = admin("GET", "/_emulator/counters")
        reads = {region: counts.get("read", 0) for region, counts in counters.items()}
        expect(reads.get(preferred) == 1, f"expected one read in {preferred}, counters say {reads}")
        others = {region: n for region, n in reads.items() if region != preferred and n}
        expect(not others, f"reads also reached {others}")

    def unique_key_policy_is_enforced():
        database = client.get_database_client(db_name)
        container = database.create_container(
            "unique", partition_key=PartitionKey(path="/pk"),
            unique_key_policy={"uniqueKeys": [{"paths": ["/email"]}]})
        expect(container.read()["uniqueKeyPolicy"]["uniqueKeys"][0]["paths"] == ["/email"],
               "the unique key policy is not read back")
        container.create_item({"id": "a", "pk": "p", "email": "x@y"})
        expect_error(409, exceptions.CosmosResourceExistsError,
                     lambda: container.create_item({"id": "b", "pk": "p", "email": "x@y"}))
        container.create_item({"id": "b", "pk": "q", "email": "x@y"})  # another logical partition
        container.create_item({"id": "c", "pk": "p", "email": "c@y"})
        expect_error(409, exceptions.CosmosResourceExistsError,
                     lambda: container.replace_item("c", {"id": "c", "pk": "p", "email": "x@y"}))
        expect(container.read_item("c", partition_key="p")["email"] == "c@y", "a refused replace changed the item")

    def expired_items_are_deleted():
        database = client.get_database_client(db_name)
        container = database.create_container("ttl", partition_key=PartitionKey(path="/pk"), default_ttl=1)
        container.create_item({"id": "short", "pk": "p"})
        container.create_item({"id": "kept", "pk": "p", "ttl": -1})
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                container.read_item("short", partition_key="p")
            except exceptions.CosmosResourceNotFoundError:
                break
            time.sleep(0.2)
        else:
            raise AssertionError("an item with a 1 s time to live was still there after 15 s")
        expect(container.read_item("kept", partition_key="p")["id"] == "kept", "ttl -1 expired")

    def delete_database():
        client.delete_database(db_name)
        expect_error(404, exceptions.CosmosResourceNotFoundError,
                     lambda: client.get_database_client(db_name).read())

    checks.run("create database and container /pk", create_database_and_container)
    if "container" in state:
        checks.run("create and read an item", create_and_read_item)
        checks.run("replace an item with its etag", replace_item)
        checks.run("replace with a stale etag raises 412", stale_etag_replace_raises_412)
        checks.run("upsert an item", upsert_item)
        checks.run("patch_item with incr and set", patch_item_incr_and_set)
        checks.run("delete an item; a missing item raises 404", delete_item_and_missing_item_raises_404)
        checks.run("a wrong key raises 401", wrong_key_raises_401)
        checks.run("preferred_locations reads from that region", preferred_location_reads_from_that_region)
        for name, check in feed_checks(ENDPOINT, KEY, REGIONS, db_name, CLIENT_OPTIONS):
            checks.run(name, check)
        for name, check in query_checks(ENDPOINT, KEY, REGIONS, db_name, CLIENT_OPTIONS):
            checks.run(name, check)
        for name, check in hierarchical_checks(ENDPOINT, KEY, REGIONS, db_name, CLIENT_OPTIONS):
            checks.run(name, check)
        for name, check in metadata_checks(ENDPOINT, KEY, REGIONS, db_name, CLIENT_OPTIONS):
            checks.run(name, check)
        for name, check in rules_checks(ENDPOINT, KEY, REGIONS, db_name, CLIENT_OPTIONS):
            checks.run(name, check)
        checks.run("a unique key policy is enforced", unique_key_policy_is_enforced)
        checks.run("items expire after their time to live", expired_items_are_deleted)
        checks.run("delete the database", delete_database)
    print(f"{checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
