"""Distinct HTML pages made at run time from the 43 Mozilla Readability test pages
(../shared/corpora/html/readability/test-pages/*/source.html, read where they are, never copied), shared by
bench/html/speed and bench/crawl.

Page i is source page i mod 43 varied by a generator seeded with (seed, i): in every text node (outside script,
style and comments) about a third of the words are replaced by words drawn from the same page, and every href that
is not a fragment, javascript: or mailto: gets a query parameter `v=i`. A collision with a page already made is
varied again, and after three tries one word is followed by the word `v<i>`, which the few tiny synthetic pages need.
"""
import glob
import hashlib
import os
import random
import re

from benchlib import ROOT, die

CORPORA = os.environ.get("RESPDECODE_CORPORA") or os.path.join(os.path.dirname(ROOT), "shared", "corpora")
PAGES = os.path.join(CORPORA, "html", "readability", "test-pages")

# Markup kept as it is (script, style, comments, tags); the text between is varied.
MARKUP = re.compile(r"(<script\b.*?</script\s*>|<style\b.*?</style\s*>|<!--.*?-->|<[^>]*>)", re.S | re.I)
HREF = re.compile(r"""(\bhref\s*=\s*)(["'])(.*?)\2""", re.S | re.I)
WORD = re.compile(r"\S+")


def sources():
    """(name, text) of the 43 readability pages, in name order (all are stored as UTF-8)."""
    paths = sorted(glob.glob(os.path.join(PAGES, "*", "source.html")))
    if not paths:
        die(f"no pages under {os.path.normpath(PAGES)}: the corpora are missing (set RESPDECODE_CORPORA)")
    return [(os.path.basename(os.path.dirname(p)), open(p, "rb").read().decode("utf-8")) for p in paths]


def vary(text, rng, i, mark=False):
    """`text` with a third of the words of its text nodes replaced by words of the page, and hrefs given `v=i`;
    with `mark`, one word is also followed by the word `v<i>` (for pages with too few words to differ otherwise)."""
    parts = MARKUP.split(text)
    pool = [w for k in range(0, len(parts), 2) for w in WORD.findall(parts[k])] or ["word"]
    marked = rng.randrange(len(pool)) if mark else -1
    seen = 0

    def word(m):
        nonlocal seen
        seen += 1
        out = rng.choice(pool) if rng.random() < 0.33 else m.group(0)
        return f"{out} v{i}" if seen - 1 == marked else out

    def href(m):
        value = m.group(3)
        if not value or value.startswith("#") or value.lower().startswith(("javascript:", "mailto:")):
            return m.group(0)
        path, hash_, fragment = value.partition("#")
        joiner = "&amp;" if "?" in path else "?"
        return f"{m.group(1)}{m.group(2)}{path}{joiner}v={i}{hash_}{fragment}{m.group(2)}"

    for k in range(len(parts)):
        if k % 2 == 0:
            parts[k] = WORD.sub(word, parts[k])
        elif parts[k][:2] != "<!" and "href" in parts[k].lower() and not parts[k][:7].lower() == "<script":
            parts[k] = HREF.sub(href, parts[k])
    return "".join(parts)


def page(base, i, seed, seen, tag=None):
    """(source name, body bytes) of page i, distinct from the SHA-1 digests in `seen` (which it joins); `tag` (default
    i) is what the hrefs' `v=` and the marking word carry: a tag of its own per page keeps pages of several workloads
    distinct from one another."""
    name, text = base[i % len(base)]
    for attempt in range(20):
        body = vary(text, random.Random(f"{seed}:{i}:{attempt}"), i if tag is None else tag, mark=attempt >= 3).encode()
        digest = hashlib.sha1(body).digest()
        if digest not in seen:
            seen.add(digest)
            return name, body
    die(f"page {i} ({name}): no distinct variant in 20 attempts", 1)


def workload(count, seed):
    """[(url, body bytes)] of `count` distinct pages."""
    base = sources()
    seen, out = set(), []
    for i in range(count):
        name, body = page(base, i, seed, seen)
        out.append((f"https://www.{name}.example/articles/{i}/index.html", body))
    return out
