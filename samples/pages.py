#!/usr/bin/env python3
# Usage: python3 samples/pages.py > samples/pages.http
# Builds samples/pages.http: HTML pages and text in several charsets, as a crawl or a proxy capture holds them.
import sys

def response(status, reason, ctype, body, extra=b""):
    head = f"HTTP/1.1 {status} {reason}\r\n".encode()
    if ctype is not None:
        head += f"Content-Type: {ctype}\r\n".encode()
    head += extra + f"Content-Length: {len(body)}\r\n\r\n".encode()
    return head + body

records = []
# 1. An article page: title, lang, <base>, canonical, description and Open Graph meta, links of every element kind,
#    headings, and what a browser does not show (script, style, a hidden block, a noscript fallback).
records.append(response(200, "OK", "text/html; charset=utf-8", """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Caf\u00e9 guide &amp; map</title>
  <base href="https://news.example/city/">
  <link rel="canonical" href="/city/cafes">
  <link rel="stylesheet" href="style.css">
  <meta name="description" content="Where to drink coffee.">
  <meta property="og:title" content="Caf\u00e9 guide">
  <meta name="robots" content="index, follow">
  <script src="app.js"></script>
  <style>body { color: #333 }</style>
</head>
<body>
  <h1>Caf\u00e9s in town</h1>
  <p>Three places we like. See <a href="map.html" rel="nofollow">the map</a> or
     <a href="https://other.example/list">another list</a>.</p>
  <h2>Opening hours</h2>
  <ul><li>Mon&ndash;Fri: 7&ndash;18</li><li>Sat: 8&ndash;14</li></ul>
  <img src="/img/cup.jpg" alt="A cup">
  <div hidden>Not shown</div>
  <noscript>Enable JavaScript</noscript>
  <script>var tracking = true;</script>
  <form action="search"><input name="q"></form>
</body>
</html>
""".encode()))
# 2. A page in windows-1252, declared only by the Content-Type charset.
records.append(response(200, "OK", "text/html; charset=windows-1252",
                        "<title>Men\u00fc</title><p>Cr\u00e8me br\u00fbl\u00e9e \u2013 4 \u20ac</p>".encode("cp1252")))
# 3. A Shift_JIS page that declares its charset in a <meta> tag only.
records.append(response(200, "OK", "text/html",
                        '<html lang="ja"><head><meta charset="Shift_JIS"><title>\u5929\u6c17</title></head>'
                        '<body><p>\u6771\u4eac\u306f\u6674\u308c\u3002</p></body></html>'.encode("shift_jis")))
# 4. Plain text in KOI8-R, declared.
records.append(response(200, "OK", "text/plain; charset=koi8-r", "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440!\n".encode("koi8_r")))
# 5. A stylesheet with no charset: UTF-8 bytes, detected.
records.append(response(200, "OK", "text/css", "/* \u00a9 2026 */\nbody { font-family: \"Fira\"; }\n".encode()))
# 6. A 404 page: decoded, and the status error beside the value.
records.append(response(404, "Not Found", "text/html", b"<title>Not found</title><h1>404</h1><p>No such page.</p>"))
sys.stdout.buffer.write(b"".join(records))
