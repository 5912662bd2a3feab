#!/usr/bin/env python3
"""What a Python user runs instead of respdecode's html decoder: each HTML response of a WARC or raw HTTP stream
parsed with Resiliparse or selectolax, one JSON line per page on stdout.

    python3 bench/peers/html_decode.py resiliparse|selectolax FILE > out.ndjson
    (pip install resiliparse selectolax orjson, and ada-url if available; not CI dependencies)

FILE is an uncompressed WARC (`response` records) or a raw HTTP/1.1 response stream, as bench/html/speed writes
them: every message framed by Content-Length, no chunking, no Content-Encoding (the reader here handles nothing
else; it is a few slices per record, so the time is the HTML work). The charset is the Content-Type's `charset`
parameter (UTF-8 when there is none, which is all the workload uses). Each line is
`{"url", "decoder": "html", "ok": true, "value": {"title", "lang", "text", "links": [{"url", "href"}]}}`:

  resiliparse  HTMLTree.parse_from_bytes(body, charset); title = tree.title; lang = the <html> element's lang;
               text = extract_plain_text(tree, main_content=False) (Resiliparse's defaults otherwise: list bullets
               and alt texts on); links = every a[href], in document order, from
               document.query_selector_all("a[href]") read as one slice. Resiliparse 2.0.1 iterates a node
               collection in quadratic time (each step walks from the start), so the slice is taken instead;
               it was also measured against a walk in Python over first_child/next (with a stack), which gives the
               same list and took 14x longer on the 43 readability pages (0.69 s against 0.048 s, three passes).
  selectolax   LexborHTMLParser(body) (lexbor); title = the first <title>'s text; lang = <html lang>;
               text = parser.text() (its defaults: the text of every node, script and style included, joined
               with no separator: less work than a visible-text extraction); links = parser.css("a[href]").

A link's "url" is its href (blanks stripped) resolved against the first <base href> (itself resolved against the
record's URL) or the record's URL, with ada-url's join_url when installed (the WHATWG parser, about twice as fast
as urllib.parse.urljoin, which is used otherwise); without a record URL (raw HTTP) there is no "url". bench/html/
quality imports resiliparse_value and selectolax_value from here.
"""
import sys
from urllib.parse import urljoin

from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import HTMLTree
from selectolax.lexbor import LexborHTMLParser

try:  # pip install ada-url
    from ada_url import join_url as _resolve
except ImportError:
    _resolve = urljoin


def _join(base, href):
    try:
        return _resolve(base, href.strip())
    except ValueError:  # a URL the parser rejects: the link keeps only its href
        return None


def _links(base_href, url, hrefs):
    base = url
    if url and base_href is not None:
        base = _join(url, base_href) or url
    out = []
    for href in hrefs:
        link = {"href": href}
        if base:
            resolved = _join(base, href)
            if resolved is not None:
                link["url"] = resolved
        out.append(link)
    return out


def resiliparse_value(body, charset="utf-8", url=None):
    tree = HTMLTree.parse_from_bytes(body, charset)
    doc = tree.document
    root = doc.document_element
    base = doc.query_selector("base[href]")
    anchors = doc.query_selector_all("a[href]")
    hrefs = [a.getattr("href") for a in anchors[0:len(anchors)]]  # a slice: iteration is quadratic (see above)
    return {"title": tree.title, "lang": root.getattr("lang") if root is not None else None,
            "text": extract_plain_text(tree, main_content=False),
            "links": _links(base.getattr("href") if base is not None else None, url, hrefs)}


def selectolax_value(body, charset="utf-8", url=None):
    if charset.lower().replace("-", "") != "utf8":
        body = body.decode(charset, "replace")
    parser = LexborHTMLParser(body)
    title = parser.css_first("title")
    root = parser.root
    base = parser.css_first("base[href]")
    hrefs = [a.attributes.get("href") or "" for a in parser.css("a[href]")]
    return {"title": title.text() if title is not None else None,
            "lang": root.attributes.get("lang") if root is not None else None,
            "text": parser.text(),
            "links": _links(base.attributes.get("href") if base is not None else None, url, hrefs)}


def _fields(head):
    """{lower-case name: value} of the header lines of `head` (bytes, no status line)."""
    out = {}
    for line in head.split(b"\r\n"):
        name, sep, value = line.partition(b":")
        if sep:
            out[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
    return out


def _charset(ctype):
    for param in ctype.split(";")[1:]:
        key, sep, value = param.partition("=")
        if sep and key.strip().lower() == "charset":
            return value.strip().strip("\"'") or "utf-8"
    return "utf-8"


def responses(data):
    """(url or None, Content-Type, body) of every response in `data` (a WARC or an HTTP stream, see above)."""
    pos, end, warc = 0, len(data), data.startswith(b"WARC/")
    while pos < end:
        url = None
        if warc:
            head_end = data.index(b"\r\n\r\n", pos)
            fields = _fields(data[data.index(b"\r\n", pos) + 2:head_end])
            start = head_end + 4
            pos = start + int(fields["content-length"]) + 4
            if fields.get("warc-type") != "response":
                continue
            url = fields.get("warc-target-uri")
            block = data[start:pos - 4]
            http_end = block.index(b"\r\n\r\n")
            fields = _fields(block[block.index(b"\r\n") + 2:http_end])
            body = block[http_end + 4:]
        else:
            head_end = data.index(b"\r\n\r\n", pos)
            fields = _fields(data[data.index(b"\r\n", pos) + 2:head_end])
            start = head_end + 4
            pos = start + int(fields["content-length"])
            body = data[start:pos]
        yield url, fields.get("content-type", ""), body


def main():
    import orjson
    if len(sys.argv) != 3 or sys.argv[1] not in ("resiliparse", "selectolax"):
        sys.exit(__doc__.split("\n\n")[1])
    value = resiliparse_value if sys.argv[1] == "resiliparse" else selectolax_value
    with open(sys.argv[2], "rb") as f:
        data = f.read()
    out = sys.stdout.buffer
    for url, ctype, body in responses(data):
        line = {"url": url, "decoder": "html", "ok": True, "value": value(body, _charset(ctype), url)}
        out.write(orjson.dumps(line) + b"\n")


if __name__ == "__main__":
    main()
