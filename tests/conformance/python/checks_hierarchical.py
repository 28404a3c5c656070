"""Hierarchical partition key (MultiHash) checks for conformance.py: containers with two and three
key paths, point operations by the full key, queries by the full key and by a prefix of it (which
the SDK sends to each overlapping partition key range with x-ms-start-epk / x-ms-end-epk), before
and after splits that cut the prefix across ranges.

hierarchical_checks(...) returns (name, check) pairs; conformance.py runs them with the other checks.
"""

import uuid

from azure.cosmos import CosmosClient, PartitionKey, exceptions

from checks_feeds import _admin

TENANTS = [("t0", 30), ("t1", 3), ("t2", 3)]


def _expect(condition, message):
    if not condition:
        raise AssertionError(message)


def _docs():
    return [{"id": f"{t}-u{u}-s{s}", "tenant": t, "user": f"u{u}", "session": f"s{s}", "n": u}
            for t, users in TENANTS for u in range(users) for s in range(2)]


def hierarchical_checks(endpoint, key, regions, db_name, client_options):
    client = CosmosClient(endpoint, credential=key, **client_options)
    database = client.get_database_client(db_name)
    state = {}
    docs = _docs()

    def ids_of(items):
        return sorted(i["id"] for i in items)

    def want(pred):
        return sorted(d["id"] for d in docs if pred(d))

    def create_containers():
        for name, paths in [("two", ["/tenant", "/user"]), ("three", ["/tenant", "/user", "/session"])]:
            c = database.create_container(f"hpk-{name}-{uuid.uuid4().hex[:6]}",
                                          partition_key=PartitionKey(path=paths, kind="MultiHash"))
            definition = c.read()["partitionKey"]
            _expect(definition["paths"] == paths and definition["kind"] == "MultiHash"
                    and definition["version"] == 2, f"definition {definition}")
            state[name] = c
        for d in docs:
            state["three"].create_item(d)
            if d["session"] == "s0":
                state["two"].upsert_item(d)

    def point_operations_by_full_key():
        three, two = state["three"], state["two"]
        item = three.read_item("t0-u4-s1", partition_key=["t0", "u4", "s1"])
        _expect(item["n"] == 4, f"read {item}")
        _expect(two.read_item("t1-u2-s0", partition_key=["t1", "u2"])["user"] == "u2", "two-level read")
        replaced = two.replace_item("t1-u2-s0", {**item, "id": "t1-u2-s0", "tenant": "t1", "user": "u2",
                                                 "session": "s0", "n": 99})
        _expect(replaced["n"] == 99, f"replaced {replaced}")
        two.upsert_item({"id": "extra", "tenant": "t9", "user": "u0"})
        two.delete_item("extra", partition_key=["t9", "u0"])
        try:
            two.read_item("extra", partition_key=["t9", "u0"])
        except exceptions.CosmosResourceNotFoundError:
            pass
        else:
            raise AssertionError("a deleted item was still readable")
        try:
            three.read_item("t0-u4-s1", partition_key=["t0", "u4"])
        except exceptions.CosmosHttpResponseError as error:
            _expect(error.status_code == 400, f"a partial key for a point read: {error.status_code}")
        else:
            raise AssertionError("a point read with a partial key was served")

    def query_by_full_key():
        got = list(state["three"].query_items("SELECT * FROM c", partition_key=["t0", "u3", "s0"]))
        _expect(ids_of(got) == ["t0-u3-s0"], f"full key: {ids_of(got)}")

    def query_by_prefix():
        three, two = state["three"], state["two"]
        for container, prefix, pred in [
            (three, ["t0"], lambda d: d["tenant"] == "t0"),
            (three, ["t0", "u7"], lambda d: d["tenant"] == "t0" and d["user"] == "u7"),
            (three, ["t2"], lambda d: d["tenant"] == "t2"),
            (two, ["t0"], lambda d: d["tenant"] == "t0" and d["session"] == "s0"),
        ]:
            got = list(container.query_items("SELECT * FROM c", partition_key=prefix, max_item_count=5))
            _expect(ids_of(got) == want(pred), f"prefix {prefix}: {ids_of(got)}")
        ordered = list(three.query_items("SELECT c.id, c.n FROM c ORDER BY c.n DESC", partition_key=["t1"]))
        _expect([o["n"] for o in ordered] == sorted((d["n"] for d in docs if d["tenant"] == "t1"), reverse=True),
                f"ORDER BY within a prefix: {ordered}")

    def prefix_query_across_a_split():
        three = state["three"]
        for r in range(4):
            _admin(endpoint, "POST", "/_emulator/split",
                   {"db": db_name, "container": three.id, "range": str(r)})
        # The SDK still holds the old ranges: it meets 410/1002 and refreshes them.
        pages = three.query_items("SELECT * FROM c", partition_key=["t0"], max_item_count=4).by_page()
        got = [i for page in pages for i in page]
        _expect(ids_of(got) == want(lambda d: d["tenant"] == "t0"), f"after the splits: {ids_of(got)}")
        _expect(len(got) == len(set(i["id"] for i in got)), "an item was returned twice")
        ranges = [r["Range"] for r in three.read_feed_ranges(force_refresh=True)]
        _expect(len(ranges) == 8, f"four splits make eight ranges: {ranges}")
        prefix = three.feed_range_from_partition_key(["t0"])["Range"]
        spanning = [r for r in ranges if r["min"] < prefix["max"] and (r["max"] == "FF" or prefix["min"] < r["max"])]
        _expect(len(spanning) == 2, f"the prefix {prefix} spans {spanning}")
        cross = list(three.query_items("SELECT VALUE COUNT(1) FROM c WHERE c.tenant = 't0'",
                                       enable_cross_partition_query=True))
        _expect(sum(cross) == 60, f"cross-partition COUNT over the prefix: {cross}")

    return [
        ("MultiHash containers with two and three paths", create_containers),
        ("MultiHash point operations by the full key", point_operations_by_full_key),
        ("MultiHash query by the full key", query_by_full_key),
        ("MultiHash query by a key prefix", query_by_prefix),
        ("MultiHash prefix query across splits", prefix_query_across_a_split),
    ]
