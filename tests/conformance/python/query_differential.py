"""The Python side of the driver-vs-SDK query differential test
(crates/cosmos-driver/tests/query_python_differential.rs): runs every query of a request file
through the official azure-cosmos SDK against the emulator the Rust test started, and prints one
JSON document with each query's rows or the status code it was refused with.

Usage: python query_differential.py REQUEST.json
REQUEST.json: {"endpoint", "key", "database", "queries": [{"container", "text", "partition_key"}]}
where "partition_key" is null for a cross-partition query.
"""
import json
import sys

from azure.cosmos import CosmosClient, exceptions


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        request = json.load(f)
    client = CosmosClient(request["endpoint"], credential=request["key"],
                          connection_timeout=10, retry_total=2, retry_backoff_max=1)
    database = client.get_database_client(request["database"])
    containers = {}
    answers = []
    for q in request["queries"]:
        name = q["container"]
        if name not in containers:
            containers[name] = database.get_container_client(name)
        container = containers[name]
        try:
            if q["partition_key"] is None:
                rows = container.query_items(q["text"], enable_cross_partition_query=True)
            else:
                rows = container.query_items(q["text"], partition_key=q["partition_key"])
            answers.append({"rows": list(rows)})
        except exceptions.CosmosHttpResponseError as e:
            answers.append({"refused": e.status_code or 0, "message": str(e.message)[:300]})
        except Exception as e:  # a failure inside the SDK itself, reported as such
            answers.append({"refused": -1, "message": f"{type(e).__name__}: {e}"[:300]})
    json.dump({"answers": answers}, sys.stdout)


if __name__ == "__main__":
    main()
