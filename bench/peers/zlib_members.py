#!/usr/bin/env python3
"""The zlib inflate floor of bench/crawl: every gzip member of a file (a .warc.gz holds one per record) inflated one
after another with Python's zlib.decompressobj (zlib itself plus a few microseconds per member), the output dropped.

    python3 bench/peers/zlib_members.py FILE.gz      prints "members N bytes M" (M: the inflated bytes)

The file is read into memory first; each member is inflated by a new decompressobj(31) (gzip wrapper) fed 32 KiB
slices until it ends, and the next member starts where its unused_data does. (Fed the whole rest of the file at
once, decompressobj would copy that rest into unused_data at every member: quadratic.)
"""
import sys
import zlib

SLICE = 32 << 10


def main():
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    view, size = memoryview(data), len(data)
    members = inflated = at = 0
    while at < size:
        d = zlib.decompressobj(31)
        fed = at
        while not d.eof:
            if fed >= size:
                sys.exit(f"zlib_members: the member at byte {at} is cut short")
            piece = view[fed:fed + SLICE]
            inflated += len(d.decompress(piece))
            fed += len(piece)
        members += 1
        at = fed - len(d.unused_data)
    print(f"members {members} bytes {inflated}")


if __name__ == "__main__":
    main()
