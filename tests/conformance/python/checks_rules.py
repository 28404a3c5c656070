"""Service rules checks for conformance.py: what the SDK's own tests expect of items and
containers (a replace that changes the id renames the item, an item's ttl must be -1 or a positive
number of seconds, no_response answers writes without the item, an object at the partition key
path is undefined, the default indexing policy, the conflicts feed, deleting all items of a
partition key, quoted partition key paths).

rules_checks(...) returns (name, check) pairs; conformance.py runs them with the other checks.
"""

import uuid

from azure.cosmos import CosmosClient, PartitionKey, exceptions


def _expect(condition, message):
    if not condition:
        raise AssertionError(message)


def _expect_status(status, action, what):
    try:
        action()
    except exceptions.CosmosHttpResponseError as e:
        _expect(e.status_code == status, f"{what}: status {e.status_code}: {e}")
        return
    raise AssertionError(f"{what}: nothing was raised")


def rules_checks(endpoint, key, regions, db_name, client_options):
    client = CosmosClient(endpoint, credential=key, **client_options)
    database = client.get_database_client(db_name)
    state = {}

    def container():
        if "rules" not in state:
            state["rules"] = database.create_container(f"rules-{uuid.uuid4().hex[:6]}",
                                                       partition_key=PartitionKey(path="/pk"))
        return state["rules"]

    def replace_with_a_new_id_renames():
        c = container()
        created = c.create_item({"id": "before", "pk": "p", "n": 1})
        renamed = c.replace_item("before", {"id": "after", "pk": "p", "n": 2})
        _expect(renamed["id"] == "after" and renamed["_rid"] == created["_rid"], f"renamed {renamed}")
        _expect(c.read_item("after", partition_key="p")["n"] == 2, "the new id does not read")
        _expect_status(404, lambda: c.read_item("before", partition_key="p"), "the old id")

    def item_ttl_must_be_valid():
        c = container()
        for i, ttl in enumerate([0, None, -5]):
            _expect_status(400, lambda: c.create_item({"id": f"ttl{i}", "pk": "p", "ttl": ttl}), f"ttl {ttl}")
        _expect(c.create_item({"id": "ttl-ok", "pk": "p", "ttl": -1})["ttl"] == -1, "ttl -1 refused")

    def no_response_writes_answer_without_the_item():
        c = container()
        created = c.create_item({"id": "quiet", "pk": "p", "n": 1}, no_response=True)
        _expect(not created, f"create answered {created}")
        replaced = c.replace_item("quiet", {"id": "quiet", "pk": "p", "n": 2}, no_response=True)
        _expect(not replaced, f"replace answered {replaced}")
        _expect(c.read_item("quiet", partition_key="p")["n"] == 2, "the write did not happen")

    def object_partition_key_value_is_undefined():
        c = container()
        c.create_item({"id": "obj", "pk": {"a": 1}})
        got = list(c.query_items("SELECT VALUE c.id FROM c WHERE c.id = 'obj'", partition_key={}))
        _expect(got == ["obj"], f"in the undefined partition: {got}")

    def default_indexing_policy_is_filled_in():
        c = database.create_container(f"rules-ix-{uuid.uuid4().hex[:6]}", partition_key=PartitionKey(path="/pk"),
                                      indexing_policy={"indexingMode": "consistent", "automatic": True})
        policy = c.read()["indexingPolicy"]
        _expect(policy["includedPaths"] == [{"path": "/*"}], f"included {policy}")
        _expect(policy["excludedPaths"] == [{"path": '/"_etag"/?'}], f"excluded {policy}")
        database.delete_container(c.id)

    def conflicts_feed_is_empty():
        c = container()
        _expect(list(c.list_conflicts()) == [], "conflicts listed")
        # Like a query over items, a conflicts query over every partition must ask for it.
        _expect(
            list(c.query_conflicts("SELECT * FROM c", enable_cross_partition_query=True)) == [],
            "conflicts queried",
        )
        _expect(
            list(c.query_conflicts("SELECT * FROM c", partition_key="any")) == [],
            "conflicts queried in one partition",
        )

    def delete_all_items_by_partition_key():
        c = container()
        for i in range(4):
            c.create_item({"id": f"del{i}", "pk": "doomed" if i % 2 else "spared"})
        c.delete_all_items_by_partition_key("doomed")
        left = sorted(c.query_items("SELECT VALUE c.id FROM c WHERE STARTSWITH(c.id, 'del')",
                                    enable_cross_partition_query=True))
        _expect(left == ["del0", "del2"], f"left {left}")

    def quoted_partition_key_paths():
        c = database.create_container(f"rules-q-{uuid.uuid4().hex[:6]}",
                                      partition_key=PartitionKey(path="/\"level' 1*()\"/\"le/vel2\""))
        c.create_item({"id": "d1", "level' 1*()": {"le/vel2": "val1"}})
        _expect(c.read_item("d1", partition_key="val1")["id"] == "d1", "not found under its key")
        database.delete_container(c.id)

    return [
        ("replace_item with a new id renames the item", replace_with_a_new_id_renames),
        ("an item ttl of 0, None or -5 raises 400", item_ttl_must_be_valid),
        ("no_response writes answer without the item", no_response_writes_answer_without_the_item),
        ("an object at the partition key path is undefined", object_partition_key_value_is_undefined),
        ("the default indexing policy is filled in", default_indexing_policy_is_filled_in),
        ("the conflicts feed is empty", conflicts_feed_is_empty),
        ("delete_all_items_by_partition_key removes that key's items", delete_all_items_by_partition_key),
        ("a quoted partition key path names a property with any character", quoted_partition_key_paths),
    ]
