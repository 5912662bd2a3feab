#!/usr/bin/env python3
# Usage: python3 samples/traffic.py      (writes samples/traffic.warc.gz, samples/traffic.har, samples/traffic.ndjson;
#                                          needs Pillow and brotli: pip install pillow brotli)
# Captured traffic as a crawler (WARC, one gzip member per record), a browser (HAR) and a line-oriented engine
# (ndjson) would hand it over, with the usual trouble: compressed bodies, chunked bodies, a wrong payload digest,
# a Content-Encoding that lies, a failed request. Everything is deterministic (fixed dates, ids, gzip mtime 0).
import base64, gzip, hashlib, io, json, os, plistlib, struct, zlib

import brotli
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))


def png(width, height):
    raw = b"".join(b"\x00" + b"".join(bytes((x * 40 % 256, y * 60 % 256, 128)) for x in range(width))
                   for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def jpeg(width, height):
    im = Image.new("RGB", (width, height))
    im.putdata([(x * 255 // (width - 1), y * 255 // (height - 1), 90) for y in range(height) for x in range(width)])
    out = io.BytesIO()
    im.save(out, "JPEG", quality=80, progressive=True)
    return out.getvalue()


def http(status, reason, fields, body):
    head = f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields) + "\r\n"
    return head.encode() + body


def chunked(body, size):
    out = b"".join(b"%x\r\n" % len(body[i:i + size]) + body[i:i + size] + b"\r\n" for i in range(0, len(body), size))
    return out + b"0\r\n\r\n"


ORDER = json.dumps({"order": 7, "items": [{"sku": "A-1", "qty": 2, "note": None}], "total": 12.50}).encode()
FEED = (b'<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>'
        b"<item><title>First</title></item></channel></rss>")
SETTINGS = plistlib.dumps({"theme": "dark", "volume": 7, "beta": True}, fmt=plistlib.FMT_BINARY)
HTML = b"<!doctype html><html><body><h1>Not found</h1></body></html>"
PNG = png(4, 3)
JPEG = jpeg(16, 8)


# ---------------------------------------------------------------------------------------------------------------- WARC
def sha1_base32(data):
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def warc_record(kind, number, block, uri=None, content_type=None, digest=None, extra=()):
    fields = [("WARC-Type", kind),
              ("WARC-Record-ID", f"<urn:uuid:00000000-0000-4000-8000-{number:012d}>"),
              ("WARC-Date", f"2026-11-22T10:{number:02d}:00Z")]
    if uri:
        fields.append(("WARC-Target-URI", uri))
    if content_type:
        fields.append(("Content-Type", content_type))
    if digest:
        fields.append(("WARC-Payload-Digest", digest))
    fields += list(extra)
    fields.append(("Content-Length", str(len(block))))
    head = "WARC/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields) + "\r\n"
    return gzip.compress(head.encode() + block + b"\r\n\r\n", compresslevel=9, mtime=0)


def response_record(number, uri, status, reason, fields, payload, wire_body=None, digest=None):
    wire = payload if wire_body is None else wire_body
    block = http(status, reason, fields, wire)
    return warc_record("response", number, block, uri, "application/http; msgtype=response",
                       digest or sha1_base32(wire))


def write_warc():
    members = []
    members.append(warc_record("warcinfo", 1, b"software: samples/traffic.py\r\nformat: WARC File Format 1.1\r\n",
                               content_type="application/warc-fields"))
    # A gzip-encoded JSON order, as most APIs send it.
    body = gzip.compress(ORDER, mtime=0)
    members.append(response_record(2, "https://shop.example/api/orders/7", 200, "OK",
                                   [("Content-Type", "application/json"), ("Content-Encoding", "gzip"),
                                    ("Content-Length", len(body))], ORDER, body))
    # The request that went with it: skipped (counted) unless --warc-types asks for it.
    members.append(warc_record("request", 3, b"GET /api/orders/7 HTTP/1.1\r\nHost: shop.example\r\n\r\n",
                               "https://shop.example/api/orders/7", "application/http; msgtype=request"))
    # An RSS feed, brotli-compressed and sent chunked: de-chunked, then br undone.
    body = brotli.compress(FEED, quality=5)
    members.append(response_record(4, "https://news.example/feed.xml", 200, "OK",
                                   [("Content-Type", "application/rss+xml"), ("Content-Encoding", "br"),
                                    ("Transfer-Encoding", "chunked")], FEED, chunked(body, 16),
                                   digest=sha1_base32(chunked(body, 16))))
    # A binary property list.
    members.append(response_record(5, "https://app.example/settings.plist", 200, "OK",
                                   [("Content-Type", "application/x-plist"), ("Content-Length", len(SETTINGS))],
                                   SETTINGS))
    # A PNG whose WARC-Payload-Digest is wrong (hex form): decoded, "digest":"mismatch".
    members.append(response_record(6, "https://cdn.example/dot.png", 200, "OK",
                                   [("Content-Type", "image/png"), ("Content-Length", len(PNG))], PNG,
                                   digest="sha1:" + hashlib.sha1(b"something else").hexdigest()))
    # A progressive JPEG stored as a resource record (no HTTP head: status 200, the WARC Content-Type).
    members.append(warc_record("resource", 7, JPEG, "file:///photos/gradient.jpg", "image/jpeg",
                               sha1_base32(JPEG)))
    # A 404 page: the raw decoder, and the status error.
    members.append(response_record(8, "https://shop.example/missing", 404, "Not Found",
                                   [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", len(HTML))],
                                   HTML))
    # Content-Encoding: gzip on a body that is plainly not gzip (it happens): decoded as is, with a warning.
    members.append(response_record(9, "https://api.example/v1/ping", 200, "OK",
                                   [("Content-Type", "application/json"), ("Content-Encoding", "gzip"),
                                    ("Content-Length", 11)], b'{"pong":1}\n'))
    # A revisit record: skipped (its payload is in the record it refers to).
    members.append(warc_record("revisit", 10, http(200, "OK", [("Content-Type", "application/json")], b""),
                               "https://shop.example/api/orders/7", "application/http; msgtype=response",
                               extra=[("WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest")]))
    # A gzip body cut short by the crawler: contentDecodingFailed, the raw bytes in "body".
    body = gzip.compress(ORDER, mtime=0)[:30]
    members.append(response_record(11, "https://shop.example/api/orders/8", 200, "OK",
                                   [("Content-Type", "application/json"), ("Content-Encoding", "gzip"),
                                    ("Content-Length", len(body))], body))
    # The last record's gzip member is cut off: a truncatedRecord line, not a silent end.
    last = response_record(12, "https://shop.example/api/orders/9", 200, "OK",
                           [("Content-Type", "application/json"), ("Content-Length", len(ORDER))], ORDER)
    members.append(last[:len(last) // 2])
    with open(os.path.join(HERE, "traffic.warc.gz"), "wb") as f:
        f.write(b"".join(members))


# ----------------------------------------------------------------------------------------------------------------- HAR
def entry(method, url, status, text=None, mime="", headers=(), encoding=None, error=None):
    content = {"size": len(text) if text else 0, "mimeType": mime}
    if text is not None:
        content["text"] = text
    if encoding:
        content["encoding"] = encoding
    response = {"status": status, "statusText": "", "httpVersion": "HTTP/1.1",
                "headers": [{"name": k, "value": v} for k, v in headers], "cookies": [], "content": content,
                "redirectURL": "", "headersSize": -1, "bodySize": -1}
    e = {"startedDateTime": "2026-11-22T10:00:00.000Z", "time": 12,
         "request": {"method": method, "url": url, "httpVersion": "HTTP/1.1", "headers": [], "queryString": [],
                     "cookies": [], "headersSize": -1, "bodySize": 0},
         "response": response, "cache": {}, "timings": {"send": 0, "wait": 12, "receive": 0}}
    if error:
        e["response"]["_error"] = error
    return e


def write_har():
    entries = [
        # Already decoded by the browser: the Content-Encoding header is history, not applied again.
        entry("GET", "https://shop.example/api/orders/7", 200, ORDER.decode(), "application/json",
              [("Content-Type", "application/json"), ("Content-Encoding", "gzip")]),
        # A binary body, base64 as HAR 1.2 says.
        entry("GET", "https://cdn.example/dot.png", 200, base64.b64encode(PNG).decode(), "image/png",
              [("Content-Type", "image/png")], encoding="base64"),
        # No Content-Type header: content.mimeType stands in.
        entry("GET", "https://news.example/feed.xml", 200, FEED.decode(), "text/xml; charset=utf-8"),
        # A HEAD request: no body, whatever Content-Length says.
        entry("HEAD", "https://shop.example/api/orders/7", 200, "", "application/json",
              [("Content-Type", "application/json"), ("Content-Length", str(len(ORDER)))]),
        # A request that got no response.
        entry("GET", "https://down.example/", 0, None, "x-unknown", error="net::ERR_CONNECTION_REFUSED"),
        # JSON that is not: invalidJSON, with the body attached.
        entry("POST", "https://shop.example/api/orders", 201, '{"id": 8,}', "application/json",
              [("Content-Type", "application/json")]),
    ]
    har = {"log": {"version": "1.2", "creator": {"name": "samples/traffic.py", "version": "1"},
                   "pages": [], "entries": entries}}
    with open(os.path.join(HERE, "traffic.har"), "w") as f:
        json.dump(har, f, indent=2)
        f.write("\n")


# -------------------------------------------------------------------------------------------------------------- ndjson
def write_ndjson():
    lines = [
        {"id": "r1", "status": 200, "url": "https://shop.example/api/orders/7",
         "headers": [["Content-Type", "application/json"]], "body": ORDER.decode()},
        # Bodies as on the wire: base64 of gzip, and Content-Encoding is undone.
        {"id": "r2", "status": 200, "headers": {"Content-Type": "application/json", "Content-Encoding": "gzip"},
         "bodyBase64": base64.b64encode(gzip.compress(ORDER, mtime=0)).decode()},
        {"id": "r3", "status": 200, "headers": [["Content-Type", "image/png"]],
         "bodyBase64": base64.b64encode(PNG).decode()},
        # No Content-Type: with --sniff the body's first bytes choose the decoder.
        {"id": "r4", "status": 200, "headers": [], "body": FEED.decode()},
        {"id": "r5", "status": 503, "headers": [["Content-Type", "text/plain"]], "body": "try later"},
    ]
    text = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines[:3])
    # A line that is not a record: its own error line; the stream goes on.
    text += '{"id":"bad","status":"two hundred"}\n'
    text += "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines[3:])
    with open(os.path.join(HERE, "traffic.ndjson"), "w") as f:
        f.write(text)


write_warc()
write_har()
write_ndjson()
