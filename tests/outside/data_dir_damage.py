"""Damage classes against a data directory, from outside: writes N items (each acknowledged),
SIGKILLs, damages the files as asked, restarts, counts what is served and what is on disk.

    durability.py EMULATOR_BINARY CASE   (CASE: flip-log-middle | half-snapshot | flip-log-end | truncate-log-end)
"""
import json, os, signal, subprocess, sys, time, glob, shutil
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import importlib.util

emu, case = sys.argv[1], sys.argv[2]
port = 8491
d = f"/tmp/dur-{case}"
shutil.rmtree(d, ignore_errors=True)

def start(extra=()):
    p = subprocess.Popen([emu, "--port", str(port), "--regions", "South Central US", "--data-dir", d, *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for _ in range(100):
        if p.poll() is not None:
            return p
        try:
            import socket; socket.create_connection(("127.0.0.1", port), 0.2).close(); return p
        except OSError:
            time.sleep(0.1)
    return p

os.environ["ATTACK_NO_MAIN"] = "1"
spec = importlib.util.spec_from_file_location("a", os.path.join(os.path.dirname(os.path.abspath(__file__)), "client.py"))
c = importlib.util.module_from_spec(spec); spec.loader.exec_module(c)
c.configure(f"http://127.0.0.1:{port}")

p = start()
c.req("POST", "/dbs", {"id": "db"}, rtype="dbs", link="")
c.req("POST", "/dbs/db/colls", {"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}}, rtype="colls", link="dbs/db")
acked = 0
n = 1600
for i in range(n):
    s, b, _ = c.req("POST", "/dbs/db/colls/c/docs", {"id": str(i), "pk": str(i % 10), "pad": "x" * 100},
                    headers={"x-ms-documentdb-partitionkey": json.dumps([str(i % 10)])}, rtype="docs", link="dbs/db/colls/c")
    acked += s == 201
p.send_signal(signal.SIGKILL); p.wait()
if case.endswith("snapshot"):
    p = start(); time.sleep(1); p.send_signal(signal.SIGTERM); p.wait()
files = sorted(os.listdir(d))
print("acknowledged", acked, "files", files)
logs = sorted(glob.glob(f"{d}/log-*"), key=os.path.getsize)
snaps = sorted(glob.glob(f"{d}/snapshot-*"), key=os.path.getsize)
if case == "flip-log-middle":
    f = logs[-1]; size = os.path.getsize(f); off = size // 2
    with open(f, "r+b") as h: h.seek(off); b = h.read(1); h.seek(off); h.write(bytes([b[0] ^ 0xFF]))
    print(f"flipped byte {off} of {size} in {os.path.basename(f)}")
elif case == "flip-log-end":
    f = logs[-1]; size = os.path.getsize(f); off = size - 3
    with open(f, "r+b") as h: h.seek(off); b = h.read(1); h.seek(off); h.write(bytes([b[0] ^ 0xFF]))
    print(f"flipped byte {off} of {size} in {os.path.basename(f)}")
elif case == "truncate-log-end":
    f = logs[-1]; size = os.path.getsize(f)
    os.truncate(f, size - 5); print(f"cut 5 bytes off {os.path.basename(f)}")
elif case == "half-snapshot":
    f = snaps[-1]; size = os.path.getsize(f)
    os.truncate(f, size // 2); print(f"cut {os.path.basename(f)} to {size//2} of {size} bytes")
before = {x: os.path.getsize(os.path.join(d, x)) for x in os.listdir(d)}
p = start()
time.sleep(1)
if p.poll() is not None:
    out = p.stdout.read()
    print("refused to start, exit", p.returncode, "|", " ".join(out.split())[:600])
    served = None
else:
    s, b, h = c.req("POST", "/dbs/db/colls/c/docs", {"query": "SELECT VALUE COUNT(1) FROM c", "parameters": []},
                    headers={"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "True", "x-ms-documentdb-query-enablecrosspartition": "True"},
                    rtype="docs", link="dbs/db/colls/c")
    try:
        served = sum(json.loads(b)["Documents"]) if s == 200 else f"status {s} {b[:200]}"
    except Exception:
        served = f"status {s} {b[:200]}"
    p.send_signal(signal.SIGTERM); out = p.communicate(timeout=20)[0]
    print("served", served, "of", acked, "| output:", " ".join(out.split())[:600])
after = set(os.listdir(d))
gone = [x for x in before if x not in after and not os.path.exists(os.path.join(d, x))]
print("files before restart", sorted(before), "after", sorted(after), "removed", gone)
