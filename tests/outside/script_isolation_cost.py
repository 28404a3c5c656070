"""Per-execution cost of running scripts in child processes (the binary's default) against
threads (`--scripts-in-process`): a trivial procedure, one that makes 10 collection calls, and a
query calling a UDF once per item over 110 items (100 written first, 10 by the procedure). Prints the median and 90th percentile of
wall time per request, from outside, for each mode.

    script_isolation_cost.py EMULATOR_BINARY [RUNS]
"""
import importlib.util, json, os, statistics, subprocess, sys, time
spec = importlib.util.spec_from_file_location("c", os.path.join(os.path.dirname(os.path.abspath(__file__)), "client.py")); c = importlib.util.module_from_spec(spec); spec.loader.exec_module(c)
emu = sys.argv[1]
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 50

def measure(flags, port):
    p = subprocess.Popen([emu, "--port", str(port), "--regions", "South Central US"] + flags, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(2)
        c.configure(f"http://127.0.0.1:{port}")
        c.req("POST", "/dbs", {"id": "db"}, rtype="dbs", link="")
        c.req("POST", "/dbs/db/colls", {"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}}, rtype="colls", link="dbs/db")
        scripts = {
            "trivial": "function () { getContext().getResponse().setBody(1); }",
            "ten_writes": "function () { var c = getContext().getCollection(); for (var i = 0; i < 10; i++) { c.upsertDocument(c.getSelfLink(), {id: 'w' + i, pk: 'a'}); } getContext().getResponse().setBody(1); }",
        }
        for sid, body in scripts.items():
            c.req("POST", "/dbs/db/colls/c/sprocs", {"id": sid, "body": body}, rtype="sprocs", link="dbs/db/colls/c")
        c.req("POST", "/dbs/db/colls/c/udfs", {"id": "twice", "body": "function (x) { return x * 2; }"}, rtype="udfs", link="dbs/db/colls/c")
        for i in range(100):
            c.req("POST", "/dbs/db/colls/c/docs", {"id": f"d{i}", "pk": "a", "n": i}, headers={"x-ms-documentdb-partitionkey": '["a"]'}, rtype="docs", link="dbs/db/colls/c")
        out = {}
        for sid in scripts:
            times = []
            for _ in range(runs):
                t = time.perf_counter()
                s, b, _ = c.req("POST", f"/dbs/db/colls/c/sprocs/{sid}", "[]", headers={"x-ms-documentdb-partitionkey": '["a"]'}, rtype="sprocs", link=f"dbs/db/colls/c/sprocs/{sid}")
                times.append(time.perf_counter() - t)
                assert s == 200, (s, b)
            out[sid] = times
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            s, b, _ = c.req("POST", "/dbs/db/colls/c/docs", {"query": "SELECT VALUE udf.twice(c.n) FROM c"}, headers={"x-ms-documentdb-partitionkey": '["a"]', "x-ms-documentdb-isquery": "True", "content-type": "application/query+json", "x-ms-max-item-count": "1000"}, rtype="docs", link="dbs/db/colls/c")
            times.append(time.perf_counter() - t)
            assert s == 200 and len(json.loads(b)["Documents"]) == 110, (s, b[:200])
        out["udf_query_110_items"] = times
        return out
    finally:
        p.terminate(); p.wait(20)

for name, flags, port in (("processes", [], 8592), ("threads", ["--scripts-in-process"], 8593)):
    for what, times in measure(flags, port).items():
        times.sort()
        print(f"{name:9} {what:20} median {statistics.median(times)*1000:7.2f} ms  p90 {times[int(len(times)*0.9)]*1000:7.2f} ms")
