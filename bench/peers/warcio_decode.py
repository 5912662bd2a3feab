#!/usr/bin/env python3
"""The script a user writes instead of respdecode: decode every response in a WARC with warcio, orjson,
xml.etree, plistlib and Pillow, one JSON line per record on stdout.

    python3 bench/peers/warcio_decode.py FILE.warc[.gz] > out.ndjson     (pip install warcio orjson pillow brotli)

It does what respdecode does by default, as a Python user would do it: response and resource records (others
skipped and counted on stderr), WARC payload digests checked (warcio's check_digests), transfer- and
content-decoding through warcio's content_stream(), status 200-299 accepted, then by MIME type: JSON parsed with
orjson and nulls removed, XML parsed with ElementTree into {name, attributes, children}, property lists read with
plistlib, images opened with Pillow (header only, as Image.open is lazy), anything else returned as text or base64.
A failure becomes an error line carrying the first 4 KiB of the body in base64, and the loop goes on.

Two things had to be worked around, and a user would meet them too:
  * warcio 1.8.1 cannot undo `br` with the current brotli module ("'brotli.Decompressor' object has no attribute
    'unused_data'"), so br bodies are read raw (de-chunked by warcio) and decompressed with brotli.decompress;
  * warcio passes stacked or unknown Content-Encodings through raw, silently; they are left that way here.
"""
import base64
import io
import plistlib
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from datetime import datetime, timezone

import brotli
import orjson
from PIL import Image
from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import ChunkedDataReader

JSON_TYPES = {"application/json", "text/json", "text/javascript"}
XML_TYPES = {"application/xml", "text/xml"}
PLIST_TYPES = {"application/x-plist", "application/x-bplist", "application/plist"}
IMAGE_TYPES = {"image/tiff", "image/jpeg", "image/gif", "image/png", "image/ico", "image/x-icon", "image/bmp",
               "image/x-bmp", "image/x-xbitmap", "image/x-win-bitmap", "image/webp"}


def strip_nulls(value):
    if isinstance(value, dict):
        return {k: strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [strip_nulls(v) for v in value if v is not None]
    return value


def element(e):
    out = {"name": e.tag}
    if e.attrib:
        out["attributes"] = dict(e.attrib)
    children = []
    if e.text and e.text.strip():
        children.append(e.text)
    for child in e:
        children.append(element(child))
        if child.tail and child.tail.strip():
            children.append(child.tail)
    if children:
        out["children"] = children
    return out


def plist_json(v):
    if isinstance(v, dict):
        return {k: plist_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plist_json(x) for x in v]
    if isinstance(v, bytes):
        return {"base64": base64.b64encode(v).decode()}
    if isinstance(v, datetime):
        return v.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if v.tzinfo else v.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(v, plistlib.UID):
        return {"CF$UID": v.data}
    return v


def decode(mime, body):
    if mime in JSON_TYPES or (mime and mime.endswith("+json")):
        return "json", strip_nulls(orjson.loads(body))
    if mime in XML_TYPES or (mime and mime.endswith("+xml")):
        return "xml", element(ET.fromstring(body))
    if mime in PLIST_TYPES:
        return "plist", plist_json(plistlib.loads(body))
    if mime in IMAGE_TYPES:
        im = Image.open(io.BytesIO(body))
        return "image", {"format": im.format.lower(), "width": im.width, "height": im.height, "mode": im.mode}
    try:
        return "raw", {"text": body.decode("utf-8")}
    except UnicodeDecodeError:
        return "raw", {"base64": base64.b64encode(body).decode()}


def payload(record):
    headers = record.http_headers
    if headers is not None and (headers.get_header("Content-Encoding") or "").strip().lower() == "br":
        stream = record.raw_stream
        if (headers.get_header("Transfer-Encoding") or "").lower() == "chunked":
            stream = ChunkedDataReader(stream)
        return brotli.decompress(stream.read())
    return record.content_stream().read()


def main():
    out = sys.stdout.buffer
    skipped = Counter()
    with open(sys.argv[1], "rb") as f:
        records = ArchiveIterator(f, check_digests=True)
        for record in records:
            if record.rec_type not in ("response", "resource"):
                skipped[record.rec_type] += 1
                continue
            line = {"offset": 0, "url": record.rec_headers.get_header("WARC-Target-URI"),
                    "warcRecordId": record.rec_headers.get_header("WARC-Record-ID")}
            if record.rec_type == "response" and record.http_headers is not None:
                status = int(record.http_headers.get_statuscode() or 0)
                ctype = record.http_headers.get_header("Content-Type")
            else:
                status, ctype = 200, record.rec_headers.get_header("Content-Type")
            mime = ctype.split(";")[0].strip().lower() if ctype else None
            line["status"] = status
            line["contentType"] = mime
            body = b""
            try:
                body = payload(record)
                if not 200 <= status <= 299:
                    raise ValueError(f"Request failed: ({status})")
                line["decoder"], line["value"] = decode(mime, body)
                line["ok"] = True
            except Exception as error:  # noqa: BLE001 -- one record's failure must not stop the loop
                line["ok"] = False
                line["error"] = {"message": f"{type(error).__name__}: {error}"}
                line["body"] = {"bytes": len(body), "base64": base64.b64encode(body[:4096]).decode()}
            # warcio knows a record's offset once the record has been read (asking earlier consumes it).
            record.raw_stream.read()
            line["offset"] = records.get_record_offset()
            if record.digest_checker.passed is False:
                line["digest"] = "mismatch"
            elif record.digest_checker.passed:
                line["digest"] = "ok"
            out.write(orjson.dumps(line) + b"\n")
    print("skipped: " + ", ".join(f"{k} {v}" for k, v in sorted(skipped.items())), file=sys.stderr)


main()
