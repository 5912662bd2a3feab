#!/usr/bin/env python3
# Usage: python3 samples/documents.py > samples/documents.http
# Builds samples/documents.http: XML and property-list responses as a capture would hold them.
import plistlib, datetime, struct, sys

def response(status, reason, ctype, body, extra=b""):
    head = f"HTTP/1.1 {status} {reason}\r\n".encode()
    if ctype is not None:
        head += f"Content-Type: {ctype}\r\n".encode()
    head += extra + f"Content-Length: {len(body)}\r\n\r\n".encode()
    return head + body

records = []
# 1. An Atom feed: namespaces, an entity, CDATA, a comment, whitespace between elements.
records.append(response(200, "OK", "application/atom+xml; charset=utf-8", b"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE feed [<!ENTITY co "Example &amp; Co.">]>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/">
  <title>News from &co;</title>
  <!-- one entry -->
  <entry xml:lang="en">
    <id>urn:uuid:1</id>
    <summary><![CDATA[5 < 6 & "quoted"]]> and more</summary>
    <media:thumbnail url="https://example.com/t.png" width="120"/>
  </entry>
</feed>
"""))
# 2. A SOAP fault with status 500: decoded, and the status error reported beside the value.
records.append(response(500, "Internal Server Error", "text/xml; charset=utf-8", b"""<?xml version="1.0"?>
<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><soap:Fault><faultcode>soap:Server</faultcode><faultstring>Timeout</faultstring></soap:Fault></soap:Body></soap:Envelope>"""))
# 3. ISO-8859-1 bytes, declared only by the charset parameter.
records.append(response(200, "OK", "application/xml; charset=ISO-8859-1", "<city>Z\u00fcrich</city>".encode("latin-1")))
# 4. Not well-formed XML.
records.append(response(200, "OK", "application/xml", b"<order><id>7</id></ordr>"))
# 5. Billion laughs: refused in milliseconds.
lol = '<!ENTITY l0 "lol">' + "".join(f'<!ENTITY l{i} "{("&l%d;" % (i - 1)) * 10}">' for i in range(1, 10))
records.append(response(200, "OK", "application/xml", f"<!DOCTYPE r [{lol}]><r>&l9;</r>".encode()))
# 6. AFNetworking's XML plist of {foo: bar}.
records.append(response(200, "OK", "application/x-plist", plistlib.dumps({"foo": "bar"})))
# 7. A binary plist with every common type.
value = {"name": "Ada", "age": 36, "ratio": 0.25, "admin": True,
         "born": datetime.datetime(1815, 12, 10, 12, 30, 0), "avatar": b"\x89PNG\r\n",
         "tags": ["math", "engines"], "ref": plistlib.UID(3), "big": 18446744073709551615}
records.append(response(200, "OK", "application/x-bplist", plistlib.dumps(value, fmt=plistlib.FMT_BINARY, sort_keys=False)))
# 8. A binary plist whose array refers to itself: a cycle.
body = b"bplist00" + bytes([0xA1, 0x00]) + bytes([8]) + b"\0" * 6 + bytes([1, 1]) + struct.pack(">QQQ", 1, 0, 10)
records.append(response(200, "OK", "application/x-plist", body))
# 9. A 204 with a plist type and no body: no value, no error.
records.append(b"HTTP/1.1 204 No Content\r\nContent-Type: application/x-plist\r\n\r\n")
# 10. An OpenStep text plist (docs/decoding.md#openstep-property-lists).
records.append(response(200, "OK", "application/x-plist", b'{ name = "Ada"; }'))
sys.stdout.buffer.write(b"".join(records))
