"""Signed raw HTTP requests for the scripts beside it (account key: the well-known emulator key)."""
import base64, datetime, hashlib, hmac, json, urllib.parse
import http.client

KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
u = None
def configure(b):
    global u
    u = urllib.parse.urlparse(b.rstrip("/"))

def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT")

def master(verb, rtype, link):
    date = now()
    text = f"{verb.lower()}\n{rtype.lower()}\n{link}\n{date.lower()}\n\n"
    sig = base64.b64encode(hmac.new(base64.b64decode(KEY), text.encode(), hashlib.sha256).digest()).decode()
    return urllib.parse.quote(f"type=master&ver=1.0&sig={sig}", safe=""), date

def req(method, path, body=None, headers=None, token=None, rtype="", link="", timeout=30):
    h = {"x-ms-version": "2020-07-15", "Content-Type": "application/json"}
    if token is None:
        auth, date = master(method, rtype, link)
    else:
        auth, date = urllib.parse.quote(token, safe=""), now()
    h["authorization"] = auth
    h["x-ms-date"] = date
    h.update(headers or {})
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    data = None if body is None else (body if isinstance(body, (bytes, str)) else json.dumps(body))
    try:
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        payload = r.read()
        return r.status, payload, dict(r.getheaders())
    except Exception as e:
        return "no answer (%s)" % type(e).__name__, b"", {}
    finally:
        c.close()

