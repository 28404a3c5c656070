"""A stored procedure that walks a 140,000-object prototype chain in a loop (QuickJS's interrupt
handler, which stops scripts, is reached only rarely by a missed lookup over such a chain).
Prints when it was answered, how long a script thread (in the emulator's process) or a script
worker process (its child) outlived the request, and how fast SIGTERM stops the binary.

    deep_prototype_chain.py EMULATOR_BINARY LOOKUPS_PER_STEP
"""
import importlib.util, json, os, subprocess, sys, time
spec = importlib.util.spec_from_file_location("c", os.path.join(os.path.dirname(os.path.abspath(__file__)), "client.py")); c = importlib.util.module_from_spec(spec); spec.loader.exec_module(c)
emu, per_iter = sys.argv[1], int(sys.argv[2])
p = subprocess.Popen([emu, "--port", "8591", "--regions", "South Central US"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(2)
c.configure("http://127.0.0.1:8591")
c.req("POST", "/dbs", {"id": "db"}, rtype="dbs", link="")
c.req("POST", "/dbs/db/colls", {"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}}, rtype="colls", link="dbs/db")
looks = "".join("if (p.m%d !== undefined) n++; " % i for i in range(per_iter))
body = "function(){ var p = {}; for (var i = 0; i < 140000; i++) { p = Object.create(p); } var n = 0; while (true) { %s } }" % looks
s, b, _ = c.req("POST", "/dbs/db/colls/c/sprocs", {"id": "chain", "body": body}, rtype="sprocs", link="dbs/db/colls/c")
t = time.time()
s, b, _ = c.req("POST", "/dbs/db/colls/c/sprocs/chain", "[]", headers={"x-ms-documentdb-partitionkey": '["a"]'}, rtype="sprocs", link="dbs/db/colls/c/sprocs/chain", timeout=60)
print("answered", s, b[:150], f"in {time.time()-t:.1f}s")
def threads():
    n = 0
    for t in os.listdir(f"/proc/{p.pid}/task"):
        try:
            if open(f"/proc/{p.pid}/task/{t}/comm").read().strip().startswith("cosmos-script"): n += 1
        except OSError: pass
    return n + len(children())
def children():
    found = []
    for t in os.listdir(f"/proc/{p.pid}/task"):
        try:
            found += open(f"/proc/{p.pid}/task/{t}/children").read().split()
        except OSError: pass
    return found
while threads() > 0 and time.time() - t < 240:
    time.sleep(1)
print("script thread alive until", f"{time.time()-t:.0f}s" , "still alive" if threads() else "ended")
t2 = time.time(); p.terminate()
try:
    p.wait(20); print("SIGTERM exit", p.returncode, f"in {time.time()-t2:.1f}s")
except subprocess.TimeoutExpired:
    print("SIGTERM: still running after 20 s"); p.kill()
