"""Metadata checks for conformance.py: queries over databases and containers (query_databases,
query_containers, list with a filter, which the SDK sends as queries to /dbs and /dbs/{db}/colls),
and response headers the SDK parses (lsn, once).

metadata_checks(...) returns (name, check) pairs; conformance.py runs them with the other checks.
"""

import uuid

from azure.cosmos import CosmosClient, PartitionKey


def _expect(condition, message):
    if not condition:
        raise AssertionError(message)


def metadata_checks(endpoint, key, regions, db_name, client_options):
    client = CosmosClient(endpoint, credential=key, **client_options)
    database = client.get_database_client(db_name)
    suffix = uuid.uuid4().hex[:6]

    def query_databases_and_containers():
        other = f"meta-{suffix}"
        client.create_database(other)
        try:
            found = list(client.query_databases("SELECT * FROM root r WHERE r.id=@id",
                                                parameters=[{"name": "@id", "value": other}]))
            _expect([d["id"] for d in found] == [other], f"query_databases {found}")
            listed = [d["id"] for d in client.list_databases()]
            _expect(other in listed and db_name in listed, f"list_databases {listed}")
        finally:
            client.delete_database(other)
        names = [f"meta-a-{suffix}", f"meta-b-{suffix}"]
        for name in names:
            database.create_container(name, partition_key=PartitionKey(path="/pk"))
        found = list(database.query_containers("SELECT * FROM root r WHERE r.id=@id",
                                               parameters=[{"name": "@id", "value": names[1]}]))
        _expect([c["id"] for c in found] == [names[1]], f"query_containers {found}")
        _expect(found[0]["partitionKey"]["paths"] == ["/pk"], f"definition {found[0]}")
        listed = [c["id"] for c in database.list_containers()]
        _expect(all(n in listed for n in names), f"list_containers {listed}")
        for name in names:
            database.delete_container(name)

    def lsn_header_is_a_number():
        container = database.create_container(f"meta-l-{suffix}", partition_key=PartitionKey(path="/pk"))
        container.create_item({"id": "a", "pk": "p"})
        headers = container.client_connection.last_response_headers
        lsn = headers.get("lsn")
        _expect(lsn is not None and int(lsn) >= 1, f"lsn {lsn!r}")
        container.read_item("a", partition_key="p")
        lsn = container.client_connection.last_response_headers.get("lsn")
        _expect(lsn is not None and int(lsn) >= 1, f"lsn on read {lsn!r}")
        database.delete_container(container.id)

    return [
        ("query_databases and query_containers select, never create", query_databases_and_containers),
        ("the lsn header is one number", lsn_header_is_a_number),
    ]
