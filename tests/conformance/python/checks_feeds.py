"""Change feed, transactional batch, throughput and session checks for conformance.py.

feed_checks(...) returns (name, check) pairs; conformance.py runs them with the other checks while
the container "items" (partition key /pk) exists.
"""

import json
import os
import urllib.request
import uuid

from azure.cosmos import CosmosClient, PartitionKey, exceptions

LAGGING_MS = 3000


def _admin(endpoint, method, path, body=None):
    """Call the emulator's admin API with the account key as the admin credential."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": "Bearer " + os.environ["COSMOS_KEY"]}
    if data is not None:
        headers["content-type"] = "application/json"
    request = urllib.request.Request(endpoint.rstrip("/") + path, data=data, method=method,
                                     headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"null")


def _expect(condition, message):
    if not condition:
        raise AssertionError(message)


def feed_checks(endpoint, key, regions, db_name, client_options):
    client = CosmosClient(endpoint, credential=key, **client_options)
    database = client.get_database_client(db_name)
    state = {}

    def container():
        if "feed" not in state:
            state["feed"] = database.create_container("feed", partition_key=PartitionKey(path="/pk"))
        return state["feed"]

    def change_feed_from_the_beginning():
        c = container()
        for i in range(6):
            c.upsert_item({"id": f"f{i}", "pk": f"p{i % 3}", "v": 1})
        c.upsert_item({"id": "f0", "pk": "p0", "v": 2})
        items = list(c.query_items_change_feed(start_time="Beginning"))
        ids = sorted(item["id"] for item in items)
        _expect(ids == [f"f{i}" for i in range(6)], f"change feed ids {ids}")
        f0 = [item for item in items if item["id"] == "f0"]
        _expect(len(f0) == 1 and f0[0]["v"] == 2, f"f0 in the feed: {f0}")

    def change_feed_from_a_continuation():
        c = container()
        pager = c.query_items_change_feed(start_time="Beginning").by_page()
        for page in pager:
            list(page)
        token = pager.continuation_token
        _expect(token, "the change feed gave no continuation token")
        c.upsert_item({"id": "late", "pk": "p1", "v": 1})
        c.upsert_item({"id": "f1", "pk": "p1", "v": 2})
        items = list(c.query_items_change_feed(continuation=token))
        ids = sorted(item["id"] for item in items)
        _expect(ids == ["f1", "late"], f"changes after the continuation: {ids}")

    def change_feed_of_one_partition_key():
        c = container()
        items = list(c.query_items_change_feed(start_time="Beginning", partition_key="p2"))
        ids = sorted(item["id"] for item in items)
        _expect(ids == ["f2", "f5"], f"partition key p2's changes: {ids}")

    def change_feed_continues_across_a_split():
        c = container()
        pager = c.query_items_change_feed(start_time="Beginning").by_page()
        for page in pager:
            list(page)
        token = pager.continuation_token
        _admin(endpoint, "POST", "/_emulator/split", {"db": db_name, "container": "feed", "range": "0"})
        new_ids = [f"after-split-{i}" for i in range(8)]
        for i, item_id in enumerate(new_ids):
            c.upsert_item({"id": item_id, "pk": f"s{i}"})
        items = list(c.query_items_change_feed(continuation=token))
        ids = sorted(item["id"] for item in items)
        _expect(ids == sorted(new_ids), f"changes after the split: {ids}")
        _expect(c.read_item("f0", partition_key="p0")["v"] == 2, "f0 is not readable after the split")

    def change_feed_of_each_feed_range():
        c = container()
        everything = sorted(item["id"] for item in c.query_items_change_feed(start_time="Beginning"))
        ranges = list(c.read_feed_ranges())
        _expect(len(ranges) >= 2, f"feed ranges after the split: {ranges}")
        per_range = []
        for feed_range in ranges:
            per_range.extend(item["id"] for item in
                             c.query_items_change_feed(feed_range=feed_range, start_time="Beginning"))
        _expect(sorted(per_range) == everything,
                f"the feed ranges together read {len(per_range)} changes, the container {len(everything)}")

    def change_feed_of_a_partition_keys_feed_range():
        c = container()
        feed_range = c.feed_range_from_partition_key("p2")
        items = list(c.query_items_change_feed(feed_range=feed_range, start_time="Beginning"))
        ids = sorted(item["id"] for item in items)
        _expect(ids == ["f2", "f5"], f"partition key p2's feed range: {ids}")

    def change_feed_all_versions_and_deletes():
        c = container()
        # A poll that finds nothing yields no page, so the pager keeps no token: the continuation
        # is the last response's etag, as the SDK's own tests read it.
        list(c.query_items_change_feed(mode="AllVersionsAndDeletes"))
        token = c.client_connection.last_response_headers.get("etag")
        _expect(token, "the all-versions change feed gave no continuation")
        c.create_item({"id": "av", "pk": "av", "v": 1})
        c.replace_item("av", {"id": "av", "pk": "av", "v": 2})
        c.delete_item("av", partition_key="av")
        items = list(c.query_items_change_feed(continuation=token, mode="AllVersionsAndDeletes"))
        ops = [item["metadata"]["operationType"] for item in items]
        _expect(ops == ["create", "replace", "delete"], f"all versions and deletes: {items}")
        _expect(items[1]["current"]["v"] == 2, f"the replace's current image: {items[1]}")
        lsns = [item["metadata"]["lsn"] for item in items]
        _expect(lsns == sorted(lsns) and len(set(lsns)) == 3, f"change LSNs {lsns}")

    def batch_commits():
        c = container()
        c.upsert_item({"id": "r", "pk": "b", "v": 1})
        c.upsert_item({"id": "gone", "pk": "b"})
        results = c.execute_item_batch(batch_operations=[
            ("create", ({"id": "n1", "pk": "b", "v": 1},)),
            ("upsert", ({"id": "n2", "pk": "b", "v": 1},)),
            ("replace", ("r", {"id": "r", "pk": "b", "v": 2})),
            ("read", ("r",)),
            ("delete", ("gone",)),
            ("patch", ("n1", [{"op": "incr", "path": "/v", "value": 5}])),
        ], partition_key="b")
        codes = [r["statusCode"] for r in results]
        _expect(codes == [201, 201, 200, 200, 204, 200], f"batch status codes {codes}")
        _expect(results[3]["resourceBody"]["v"] == 2, f"the read saw {results[3]}")
        _expect(c.read_item("n1", partition_key="b")["v"] == 6, "the patch in the batch was not applied")
        try:
            c.read_item("gone", partition_key="b")
            raise AssertionError("the deleted item is still readable")
        except exceptions.CosmosResourceNotFoundError:
            pass

    def batch_rolls_back():
        c = container()
        try:
            c.execute_item_batch(batch_operations=[
                ("create", ({"id": "rb1", "pk": "b"},)),
                ("create", ({"id": "n1", "pk": "b"},)),  # exists: 409
                ("create", ({"id": "rb2", "pk": "b"},)),
            ], partition_key="b")
            raise AssertionError("a batch with a conflicting create committed")
        except exceptions.CosmosBatchOperationError as error:
            _expect(error.error_index == 1, f"failing index {error.error_index}")
            codes = [r["statusCode"] for r in error.operation_responses]
            _expect(codes == [424, 409, 424], f"operation status codes {codes}")
        for item_id in ("rb1", "rb2"):
            try:
                c.read_item(item_id, partition_key="b")
                raise AssertionError(f"{item_id} exists after the rollback")
            except exceptions.CosmosResourceNotFoundError:
                pass

    def throughput_read_and_replace():
        c = database.create_container(f"tp-{uuid.uuid4().hex[:6]}", partition_key=PartitionKey(path="/pk"),
                                      offer_throughput=500)
        _expect(c.get_throughput().offer_throughput == 500, "the container's throughput is not 500")
        c.replace_throughput(1200)
        _expect(c.get_throughput().offer_throughput == 1200, "the replaced throughput is not 1200")
        database.delete_container(c)

    def session_reads_its_own_write_from_a_lagging_region():
        lagging = regions[1]
        _admin(endpoint, "PUT", "/_emulator/replication-lag", {"region": lagging, "lag": str(LAGGING_MS)})
        try:
            regional = CosmosClient(endpoint, credential=key, preferred_locations=[lagging], **client_options)
            c = regional.get_database_client(db_name).get_container_client("feed")
            c.read()
            item_id = f"s-{uuid.uuid4().hex[:8]}"
            c.create_item({"id": item_id, "pk": "s"})
            # A client without the session token reads the lagging replica and does not find it.
            other = CosmosClient(endpoint, credential=key, preferred_locations=[lagging], **client_options)
            try:
                other.get_database_client(db_name).get_container_client("feed").read_item(item_id, partition_key="s")
                raise AssertionError(f"{lagging} is not lagging: a sessionless read found the item")
            except exceptions.CosmosResourceNotFoundError:
                pass
            # The writer's read carries its session token, so it is served with its write (the
            # gateway waits for the replica, as the service's does, or the SDK retries the 1002).
            read = c.read_item(item_id, partition_key="s")
            _expect(read["id"] == item_id, f"read {read}")
        finally:
            _admin(endpoint, "PUT", "/_emulator/replication-lag", {"region": lagging, "lag": "0"})

    return [
        ("query_items_change_feed from the beginning", change_feed_from_the_beginning),
        ("query_items_change_feed from a continuation", change_feed_from_a_continuation),
        ("query_items_change_feed of one partition key", change_feed_of_one_partition_key),
        ("query_items_change_feed continues across a partition split", change_feed_continues_across_a_split),
        ("query_items_change_feed of each feed range", change_feed_of_each_feed_range),
        ("query_items_change_feed of a partition key's feed range", change_feed_of_a_partition_keys_feed_range),
        ("query_items_change_feed in all-versions-and-deletes mode", change_feed_all_versions_and_deletes),
        ("execute_item_batch commits every operation", batch_commits),
        ("execute_item_batch rolls back on a conflict", batch_rolls_back),
        ("get_throughput and replace_throughput", throughput_read_and_replace),
        ("session: a lagging preferred region reads its own write", session_reads_its_own_write_from_a_lagging_region),
    ]
