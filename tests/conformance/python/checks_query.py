"""Query checks for conformance.py: query_items single- and cross-partition (ORDER BY, TOP,
OFFSET LIMIT, DISTINCT, GROUP BY, aggregates, JOIN, functions, parameters, continuation) and
read_items, which the SDK carries out as queries.

query_checks(...) returns (name, check) pairs; conformance.py runs them with the other checks.
"""

import uuid

from azure.cosmos import CosmosClient, PartitionKey, exceptions

ITEMS = 40


def _expect(condition, message):
    if not condition:
        raise AssertionError(message)


def _doc(i):
    doc = {"id": f"q{i:02d}", "pk": f"p{i % 4}", "n": (i * 7) % 13, "tags": ["t%d" % (i % 3), "all"]}
    if i % 5 == 0:
        del doc["n"]
    if i % 6 == 0:
        doc["nested"] = {"deep": [i, {"x": i % 2 == 0}]}
    return doc


def query_checks(endpoint, key, regions, db_name, client_options):
    client = CosmosClient(endpoint, credential=key, **client_options)
    database = client.get_database_client(db_name)
    state = {}
    docs = [_doc(i) for i in range(ITEMS)]
    with_n = [d for d in docs if "n" in d]

    def container():
        if "queries" not in state:
            c = database.create_container(f"queries-{uuid.uuid4().hex[:6]}", partition_key=PartitionKey(path="/pk"))
            for d in docs:
                c.create_item(d)
            state["queries"] = c
        return state["queries"]

    def cross(query, parameters=None, **kwargs):
        return list(container().query_items(query, parameters=parameters, enable_cross_partition_query=True,
                                            **kwargs))

    def single_partition_with_parameters():
        got = list(container().query_items("SELECT VALUE c.id FROM c WHERE c.n >= @min ORDER BY c.id",
                                           parameters=[{"name": "@min", "value": 5}], partition_key="p1"))
        want = sorted(d["id"] for d in docs if d["pk"] == "p1" and d.get("n", -1) >= 5)
        _expect(got == want, f"{got} != {want}")

    def cross_partition_order_by():
        got = cross("SELECT c.id, c.n FROM c WHERE IS_DEFINED(c.n) ORDER BY c.n DESC, c.id ASC", max_item_count=3)
        want = sorted(with_n, key=lambda d: (-d["n"], d["id"]))
        _expect([g["id"] for g in got] == [d["id"] for d in want], f"order {[g['id'] for g in got]}")
        _expect(all(set(g) == {"id", "n"} for g in got), f"projection {got[:2]}")

    def order_by_over_missing_values():
        # One partition: the SDK merges ranges only when their heads have one type, so items
        # without the key are checked where the emulator orders them itself.
        got = list(container().query_items("SELECT VALUE c.id FROM c ORDER BY c.n", partition_key="p0",
                                           max_item_count=3))
        p0 = [d for d in docs if d["pk"] == "p0"]
        missing = sorted(d["id"] for d in p0 if "n" not in d)
        present = [d["id"] for d in sorted((d for d in p0 if "n" in d), key=lambda d: (d["n"], d["id"]))]
        _expect(sorted(got[:len(missing)]) == missing and got[len(missing):] == present, f"order {got}")

    def cross_partition_top():
        got = cross("SELECT TOP 5 VALUE c.id FROM c ORDER BY c.id")
        _expect(got == [f"q{i:02d}" for i in range(5)], f"top {got}")

    def cross_partition_offset_limit():
        got = cross("SELECT VALUE c.id FROM c ORDER BY c.id OFFSET 7 LIMIT 4", max_item_count=2)
        _expect(got == [f"q{i:02d}" for i in range(7, 11)], f"offset/limit {got}")

    def cross_partition_distinct():
        got = cross("SELECT DISTINCT VALUE c.pk FROM c")
        _expect(sorted(got) == ["p0", "p1", "p2", "p3"], f"distinct {got}")
        ordered = cross("SELECT DISTINCT VALUE c.n FROM c WHERE IS_DEFINED(c.n) ORDER BY c.n")
        _expect(ordered == sorted({d["n"] for d in with_n}), f"ordered distinct {ordered}")

    def cross_partition_distinct_order_by_offset_limit():
        # The SDK's own test: pk i, value i // 3; DISTINCT drops duplicates after the ranges merge.
        c = database.create_container(f"distinct-{uuid.uuid4().hex[:6]}", partition_key=PartitionKey(path="/pk"))
        for i in range(10):
            c.create_item({"id": f"d{i}", "pk": i, "value": i // 3})
        for query, want in [
            ('SELECT DISTINCT c["value"] from c ORDER BY c.pk OFFSET 0 LIMIT 2', [0, 1]),
            ('SELECT DISTINCT c["value"] from c ORDER BY c.pk OFFSET 2 LIMIT 2', [2, 3]),
            ('SELECT DISTINCT c["value"] from c ORDER BY c.pk OFFSET 4 LIMIT 3', []),
        ]:
            got = [g["value"] for g in c.query_items(query, enable_cross_partition_query=True)]
            _expect(got == want, f"{query}: {got} != {want}")
        got = cross("SELECT DISTINCT VALUE c.n FROM c WHERE IS_DEFINED(c.n) ORDER BY c.n OFFSET 1 LIMIT 3")
        want = sorted({d["n"] for d in with_n})[1:4]
        _expect(got == want, f"distinct values {got} != {want}")

    def cross_partition_aggregate_without_value_raises_400():
        # As against the service: the SDK does not declare NonValueAggregate, so the plan is refused.
        for query in ["SELECT COUNT(1) FROM c", "SELECT COUNT(1) + 5 FROM c", "SELECT COUNT(1) + SUM(c) FROM c"]:
            try:
                cross(query)
            except exceptions.CosmosHttpResponseError as e:
                _expect(e.status_code == 400, f"{query}: status {e.status_code}")
            else:
                raise AssertionError(f"{query} did not raise")
        # In one partition the gateway answers it: the aggregate under its generated name.
        got = list(container().query_items("SELECT COUNT(1) FROM c", partition_key="p1"))
        want = sum(1 for d in docs if d["pk"] == "p1")
        _expect(got == [{"$1": want}], f"{got} != {[{'$1': want}]}")

    def cross_partition_aggregates():
        ns = [d["n"] for d in with_n]
        for query, want in [
            ("SELECT VALUE COUNT(1) FROM c", ITEMS),
            ("SELECT VALUE SUM(c.n) FROM c", sum(ns)),
            ("SELECT VALUE MIN(c.n) FROM c", min(ns)),
            ("SELECT VALUE MAX(c.n) FROM c WHERE c.pk = 'p2'", max(d["n"] for d in with_n if d["pk"] == "p2")),
        ]:
            got = cross(query)
            _expect(got == [want], f"{query}: {got} != {[want]}")
        avg = cross("SELECT VALUE AVG(c.n) FROM c")
        _expect(len(avg) == 1 and abs(avg[0] - sum(ns) / len(ns)) < 1e-9, f"avg {avg}")

    def group_by_in_one_partition():
        got = list(container().query_items(
            "SELECT c.n % 2 AS parity, COUNT(1) AS count FROM c WHERE IS_DEFINED(c.n) GROUP BY c.n % 2",
            partition_key="p0"))
        want = {}
        for d in with_n:
            if d["pk"] == "p0":
                want[d["n"] % 2] = want.get(d["n"] % 2, 0) + 1
        _expect({g["parity"]: g["count"] for g in got} == want, f"group by {got} != {want}")

    def join_and_functions():
        got = cross("SELECT c.id, t AS tag FROM c JOIN t IN c.tags WHERE t = 't1' AND STARTSWITH(c.id, 'q1')")
        want = sorted(d["id"] for d in docs if "t1" in d["tags"] and d["id"].startswith("q1"))
        _expect(sorted(g["id"] for g in got) == want and all(g["tag"] == "t1" for g in got), f"join {got}")
        got = cross("SELECT VALUE {\"u\": UPPER(c.id), \"len\": ARRAY_LENGTH(c.tags), \"deep\": c.nested.deep[1].x}"
                    " FROM c WHERE ARRAY_CONTAINS(c.tags, 'all') AND c.id IN ('q06', 'q12')")
        _expect(sorted(got, key=lambda g: g["u"]) == [{"u": "Q06", "len": 2, "deep": True},
                                                      {"u": "Q12", "len": 2, "deep": True}], f"functions {got}")

    def continuation_resumes_exactly():
        pager = container().query_items("SELECT VALUE c.id FROM c", partition_key="p3", max_item_count=2).by_page()
        first = list(next(pager))
        token = pager.continuation_token
        _expect(len(first) == 2 and token, f"first page {first}, token {token!r}")
        rest = []
        for page in container().query_items("SELECT VALUE c.id FROM c", partition_key="p3",
                                             max_item_count=2).by_page(token):
            rest.extend(page)
        want = sorted(d["id"] for d in docs if d["pk"] == "p3")
        _expect(sorted(first + rest) == want and len(first + rest) == len(want), f"{first} + {rest} != {want}")

    def read_items_many():
        wanted = [("q03", "p3"), ("q10", "p2"), ("q39", "p3"), ("nope", "p1")]
        got = container().read_items(items=wanted)
        _expect(sorted(g["id"] for g in got) == ["q03", "q10", "q39"], f"read_items {[g['id'] for g in got]}")

    def bad_query_raises_400():
        try:
            list(container().query_items("SELECT * FROM c WHERE", partition_key="p1"))
        except exceptions.CosmosHttpResponseError as e:
            _expect(e.status_code == 400, f"status {e.status_code}")
            return
        raise AssertionError("a malformed query did not raise")

    return [
        ("query_items in one partition with parameters", single_partition_with_parameters),
        ("query_items cross-partition ORDER BY with two keys and small pages", cross_partition_order_by),
        ("query_items ORDER BY puts items without the key first", order_by_over_missing_values),
        ("query_items cross-partition TOP", cross_partition_top),
        ("query_items cross-partition OFFSET LIMIT", cross_partition_offset_limit),
        ("query_items cross-partition DISTINCT", cross_partition_distinct),
        ("query_items cross-partition DISTINCT with ORDER BY and OFFSET LIMIT",
         cross_partition_distinct_order_by_offset_limit),
        ("query_items cross-partition aggregates", cross_partition_aggregates),
        ("query_items cross-partition aggregate without VALUE raises 400",
         cross_partition_aggregate_without_value_raises_400),
        ("query_items GROUP BY in one partition", group_by_in_one_partition),
        ("query_items JOIN and built-in functions", join_and_functions),
        ("query_items continuation token resumes exactly", continuation_resumes_exactly),
        ("read_items", read_items_many),
        ("a malformed query raises 400", bad_query_raises_400),
    ]
