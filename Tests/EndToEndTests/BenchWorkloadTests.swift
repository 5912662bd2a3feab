import Foundation
import Testing

/// Bodies shaped like bench/run's workloads, through the real binary, against a reference reader: the correctness
/// half of the benchmark (bench/run itself only checks that each timed stream gave one ok line per response).
///
/// - JSON: API records with nulls in objects and arrays, escapes, non-ASCII text (raw and `\u` escaped, surrogate
///   pairs included), integers up to ±2^63 and reals with exponents; single records, arrays of 25 records and one
///   larger search-style document, written compact, spaced and indented. The value must be Python's `json` reading
///   of the body with every null removed (as `jq 'del(..|nulls)'` does), members in the same order.
/// - Property lists written by Python's plistlib, XML and binary, small ones and one of 6000 items (over 65,536
///   objects, so the binary one has 4-byte references): every type plistlib writes, dates before and after 2001,
///   non-finite reals. The value must be plistlib's reading mapped to JSON as the plist decoder maps values (dates
///   ISO 8601 UTC, data `{"base64":…}`, non-finite reals as strings); members compared as sets, as bench/run did.
/// - PNGs of every variant bench/run times (RGB8, RGBA8, palette, 16-bit gray, 16-bit RGB, Adam7-interlaced RGB8),
///   written here with Sub and Up filters over several IDAT chunks, and baseline, progressive and grayscale JPEGs
///   made by Pillow (skipped without it): format, width and height as written, and with `--inflate`
///   `decoded.bytes` = width × height × 4.
/// - ~20 KB text/plain bodies: the raw decoder's `value.text` (AFNetworking's chain) is the body, and so is the text
///   decoder's (the default chain).
/// - Atom feeds (namespaces, entities, character references, CDATA): an ok `xml` result rooted at `feed`. Their
///   values are held to libxml2 by the XML conformance tests.
///
/// The bodies and the references come from one Python script (standard library; Pillow for JPEG), seeded, so every
/// run sees the same bytes.
@Suite("Bench workloads", .serialized, .enabled(if: BenchScript.hasPython, "python3 is needed"))
struct BenchWorkloadTests {

    /// One body with its Content-Type and what its line must say (canonical JSON text of the value, or for images and
    /// XML the fields to check).
    struct Case {
        var type: String
        var body: Data
        var expect: String
    }

    /// The cases of `kind` made by the script.
    static func cases(_ kind: String) throws -> [Case] {
        let run = BenchScript.run(["make", kind])
        try #require(run.status == 0, "python3 make \(kind): \(run.stderr)")
        return try run.stdout.split(separator: UInt8(ascii: "\n")).map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            let base64 = try #require(object["body"] as? String)
            return Case(
                type: try #require(object["type"] as? String), body: try #require(Data(base64Encoded: base64)),
                expect: try #require(object["expect"] as? String))
        }
    }

    /// One output line, as the script reads it: envelope fields and the value in canonical JSON text.
    struct Line {
        var ok: Bool
        var decoder: String?
        var value: String
        var object: [String: Any]
    }

    /// Runs respdecode on the cases as one HTTP stream (through a file: a big stream would fill the pipes both ways)
    /// and returns its lines, one per case, with the values in canonical text (object members sorted if `sortKeys`).
    static func decode(_ cases: [Case], arguments: [String] = [], sortKeys: Bool = false) throws -> [Line] {
        var stream = Data()
        for c in cases {
            stream += Data("HTTP/1.1 200 OK\r\nContent-Type: \(c.type)\r\nContent-Length: \(c.body.count)\r\n\r\n".utf8)
            stream += c.body
        }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent(
            "respdecode-bench-\(UUID().uuidString)")
        let file = base.appendingPathExtension("http")
        let lines = base.appendingPathExtension("ndjson")
        try stream.write(to: file)
        _ = FileManager.default.createFile(atPath: lines.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: file)
            try? FileManager.default.removeItem(at: lines)
        }
        let output = try FileHandle(forWritingTo: lines)
        let result = try EndToEndTests.run(arguments + [file.path], stdoutTo: output)
        try output.close()
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        let canon = BenchScript.run(["canon", sortKeys ? "sorted" : "ordered", lines.path])
        try #require(canon.status == 0, "python3 canon: \(canon.stderr)")
        let parsed = try canon.stdout.split(separator: UInt8(ascii: "\n")).map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            return Line(
                ok: object["ok"] as? Bool ?? false, decoder: object["decoder"] as? String,
                value: object["value"] as? String ?? "", object: object)
        }
        try #require(parsed.count == cases.count, "\(parsed.count) lines for \(cases.count) responses")
        return parsed
    }

    /// Compares every line's canonical value with the case's; returns the first few differences, each shown around
    /// its first differing byte.
    static func differences(_ cases: [Case], _ lines: [Line], decoder: String) -> [String] {
        var found: [String] = []
        for (index, (c, line)) in zip(cases, lines).enumerated() {
            // Bytes, not String ==, which would take NFC and NFD spellings as equal.
            let ours = Array(line.value.utf8)
            let want = Array(c.expect.utf8)
            if !line.ok || line.decoder != decoder || ours != want {
                let at = zip(ours, want).prefix { $0 == $1 }.count
                func around(_ text: [UInt8]) -> String {
                    String(decoding: text[max(0, at - 80)..<min(text.count, at + 120)], as: UTF8.self)
                }
                found.append(
                    "record \(index): ok \(line.ok), decoder \(line.decoder ?? "-"), from byte \(at):\n"
                        + "  ours …\(around(ours))…\n  want …\(around(want))…")
            }
        }
        return Array(found.prefix(5))
    }

    @Test func jsonValuesArePythonsReadingWithoutNulls() throws {
        let cases = try Self.cases("json")
        #expect(cases.count >= 150)
        let lines = try Self.decode(cases)
        let found = Self.differences(cases, lines, decoder: "json")
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }

    @Test func plistValuesArePlistlibsReading() throws {
        let cases = try Self.cases("plist")
        #expect(cases.count >= 100)
        let lines = try Self.decode(cases, sortKeys: true)
        let found = Self.differences(cases, lines, decoder: "plist")
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }

    @Test func rawTextComesBackUnchanged() throws {
        let cases = try Self.cases("raw")
        // In AFNetworking's chain no decoder takes text/plain: the raw decoder gives the body.
        let lines = try Self.decode(cases, arguments: ["--chain", "json,xml,plist,image"])
        let found = Self.differences(cases, lines, decoder: "raw")
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
        // In the default chain the text decoder does, with the same text and the charset the header declares.
        let texts = try Self.decode(cases)
        for (index, (raw, text)) in zip(lines, texts).enumerated() {
            // Canonical values in key order: raw's {"text":…} and text's {"text":…,"charset":…,"charsetSource":…}.
            #expect(text.ok && text.decoder == "text", "record \(index)")
            #expect(text.value == raw.value.dropLast() + #","charset":"UTF-8","charsetSource":"header"}"#)
        }
    }

    @Test func atomFeedsAreXMLTrees() throws {
        let cases = try Self.cases("xml")
        let lines = try Self.decode(cases)
        for (index, line) in lines.enumerated() {
            let value = line.object["tree"] as? [String: Any]
            #expect(line.ok && line.decoder == "xml" && value?["name"] as? String == "feed", "record \(index)")
        }
    }

    /// The image lines against the size the image was made with; `decoded.bytes` with `--inflate`.
    static func checkImages(_ cases: [Case], inflate: Bool) throws {
        let lines = try decode(cases, arguments: inflate ? ["--inflate"] : [])
        for (index, (c, line)) in zip(cases, lines).enumerated() {
            let want = try #require(try JSONSerialization.jsonObject(with: Data(c.expect.utf8)) as? [String: Any])
            let value = line.object["tree"] as? [String: Any] ?? [:]
            let (width, height) = (want["width"] as? Int ?? -1, want["height"] as? Int ?? -1)
            let label = "record \(index) (\(want["name"] as? String ?? "?"))"
            #expect(line.ok && line.decoder == "image", "\(label): \(line.value.prefix(300))")
            #expect(value["format"] as? String == want["format"] as? String, "\(label)")
            #expect(value["width"] as? Int == width && value["height"] as? Int == height, "\(label)")
            if let depth = want["bitDepth"] as? Int { #expect(value["bitDepth"] as? Int == depth, "\(label)") }
            if let interlaced = want["interlaced"] as? Bool {
                #expect(value["interlaced"] as? Bool == interlaced, "\(label)")
            }
            if inflate {
                let decoded = value["decoded"] as? [String: Any]
                #expect(decoded?["bytes"] as? Int == width * height * 4, "\(label)")
            }
        }
    }

    @Test(arguments: [false, true])
    func pngsOfEveryBenchVariantHaveTheirSize(inflate: Bool) throws {
        let cases = try Self.cases("png")
        #expect(cases.count == 18)
        try Self.checkImages(cases, inflate: inflate)
    }

    @Test(.enabled(if: BenchScript.hasPillow, "Pillow makes the JPEGs (pip install pillow)"), arguments: [false, true])
    func jpegsHaveTheirSize(inflate: Bool) throws {
        let cases = try Self.cases("jpeg")
        #expect(cases.count == 7)
        try Self.checkImages(cases, inflate: inflate)
    }
}

/// The script that makes the cases and reads respdecode's lines for ``BenchWorkloadTests``, and how to run it.
enum BenchScript {
    static let hasPython = python(["-c", "import plistlib"]).status == 0
    static let hasPillow = hasPython && python(["-c", "import PIL"]).status == 0

    /// Runs the script with `arguments`.
    static func run(_ arguments: [String]) -> Run { python(["-c", script] + arguments) }

    struct Run {
        var status: Int32
        var stdout: Data
        var stderr: String
    }

    /// Runs `python3` (from PATH) with `arguments` and no input; its errors go through a file, so that only one pipe
    /// is read here.
    static func python(_ arguments: [String]) -> Run {
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "respdecode-py-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: errorFile) }
        do {
            _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
            let errors = try FileHandle(forWritingTo: errorFile)
            defer { try? errors.close() }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3"] + arguments
            let output = Pipe()
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            let out = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let message = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
            return Run(status: process.terminationStatus, stdout: out, stderr: message)
        } catch {
            return Run(status: -1, stdout: Data(), stderr: "\(error)")
        }
    }

    /// `make KIND` prints one JSON line per case: {"type", "body" (base64), "expect"}. `canon sorted|ordered` reads
    /// respdecode's lines and prints {"ok", "decoder", "value" (canonical text), "tree" (the value itself)}.
    /// Canonical text: compact JSON, strings as Python writes them with ensure_ascii=False, integral reals below
    /// 2^53 as integers (a real may be written `2` or `2.0`), booleans never numbers.
    static let script = #"""
        import base64, datetime, io, json, math, plistlib, random, struct, sys, zlib

        class Pairs(list):
            pass  # a JSON object as its members, in order

        def canon(v, sort):
            if isinstance(v, Pairs):
                members = sorted(v, key=lambda m: m[0]) if sort else v
                return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canon(x, sort) for k, x in members) + "}"
            if isinstance(v, list):
                return "[" + ",".join(canon(x, sort) for x in v) + "]"
            if v is None or isinstance(v, bool):
                return json.dumps(v)
            if isinstance(v, int):
                return str(v)
            if isinstance(v, float):
                return str(int(v)) if math.isfinite(v) and v.is_integer() and abs(v) < 2**53 else repr(v)
            return json.dumps(v, ensure_ascii=False)

        def without_nulls(v):
            if isinstance(v, Pairs):
                return Pairs((k, without_nulls(x)) for k, x in v if x is not None)
            if isinstance(v, list):
                return [without_nulls(x) for x in v if x is not None]
            return v

        def from_plist(v):
            if isinstance(v, dict):
                return Pairs((k, from_plist(x)) for k, x in v.items())
            if isinstance(v, (list, tuple)):
                return [from_plist(x) for x in v]
            if isinstance(v, float) and not math.isfinite(v):
                return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
            if isinstance(v, datetime.datetime):
                text = f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}:{v.second:02d}"
                if v.microsecond:
                    text += f".{v.microsecond:06d}".rstrip("0")
                return text + "Z"
            if isinstance(v, bytes):
                return Pairs([("base64", base64.b64encode(v).decode())])
            if isinstance(v, plistlib.UID):
                return Pairs([("CF$UID", v.data)])
            return v

        WORDS = ["request", "response", "cache", "proxy", "stream", "überprüfung", "naïve", "café", "東京", "😀",
                 "línea", "a\"quote", "back\\slash", "slash/", "<tag>", "&amp;", "tab\there", "ctl\x01", "new\nline"]
        PLAIN = [w for w in WORDS if w.isprintable()]

        def words(r, n, pool=WORDS):
            return " ".join(r.choice(pool) for _ in range(n))

        def maybe(r, v, p=0.3):
            return None if r.random() < p else v

        def person(r, i):
            return {"login": f"user{i}", "id": 1000 + i, "name": maybe(r, words(r, 2)), "site_admin": r.random() < 0.1,
                    "company": maybe(r, words(r, 1), 0.6), "blog": maybe(r, f"https://u{i}.example", 0.7)}

        def record(r, i):
            return {"id": 700000000 + i, "number": i, "title": words(r, r.randint(3, 10)), "user": person(r, i),
                    "assignee": maybe(r, person(r, i + 1), 0.7), "milestone": None,
                    "labels": [{"id": r.randrange(10**9), "name": r.choice(["bug", "question"]),
                                "default": r.random() < 0.5, "description": maybe(r, words(r, 4))}
                               for _ in range(r.randint(0, 3))],
                    "comments": r.randint(0, 200), "score": round(r.random() * 100, 6),
                    "ratio": r.random() * 10.0 ** r.randint(-12, 12), "delta": r.randrange(-2**63, 2**63),
                    "reactions": {"total_count": r.randint(0, 50), "laugh": None, "+1": r.randint(0, 9)},
                    "tags": [maybe(r, r.choice(WORDS), 0.2) for _ in range(r.randint(0, 5))],
                    "nothing": [None, {"a": None}], "empty": {}, "list": [],
                    "body": words(r, r.randint(20, 120)) + ("\n\n```\nlet x = \"q\\tv\"\n```\n" if r.random() < 0.5 else "")}

        def json_text(r, v):
            style = r.randrange(4)
            if style == 0:
                return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
            if style == 1:
                return json.dumps(v, ensure_ascii=True)
            if style == 2:
                return json.dumps(v, ensure_ascii=False, indent=2)
            return json.dumps(v, ensure_ascii=False)

        def make_json(r):
            docs = [record(r, i) for i in range(150)]
            docs += [[record(r, 1000 + 25 * n + k) for k in range(25)] for n in range(6)]
            docs.append({"total_count": 400, "incomplete_results": False, "next": None,
                         "items": [record(r, 5000 + i) for i in range(400)]})
            for doc in docs:
                body = json_text(r, doc).encode()
                want = canon(without_nulls(json.loads(body, object_pairs_hook=Pairs)), False)
                yield "application/json", body, want

        def plist_item(r, k):
            return {"CFBundleIdentifier": f"com.example.app{k}", "CFBundleVersion": f"{r.randint(1, 9)}.{r.randint(0, 20)}",
                    "Enabled": r.random() < 0.5, "Count": r.randrange(-10**6, 10**12),
                    "Wide": r.choice([2**63 - 1, -2**63, 2**32, 255, 256, 65536, -1, 0]),
                    "Ratio": r.random() * 1000, "Scale": r.choice([0.5, 1e-300, 1e300, -0.0, 2.0, float("inf"), float("-inf")]),
                    "Modified": datetime.datetime(2001, 1, 1) + datetime.timedelta(seconds=r.randrange(-10**9, 10**9)),
                    "Blob": bytes(r.getrandbits(8) for _ in range(r.randint(0, 64))),
                    "Tags": [r.choice(PLAIN) for _ in range(r.randint(0, 5))], "Ünïcode <&> key": words(r, 3, PLAIN),
                    "Description": words(r, r.randint(0, 20), PLAIN),
                    "Nested": {"Deeper": {"List": [1, 2.5, "x", True, {}], "Empty": []}}}

        def make_plist(r):
            values = [{"Version": i, "Generated": datetime.datetime(2024, 5, 1, 12, 0, 0),
                       "Items": [plist_item(r, k) for k in range(r.randint(4, 16))]} for i in range(60)]
            values += [[1, "two", 3.5, False], "just a string", {"Items": [plist_item(r, k) for k in range(6000)]}]
            for value in values:
                for fmt in (plistlib.FMT_XML, plistlib.FMT_BINARY):
                    body = plistlib.dumps(value, fmt=fmt, sort_keys=False)
                    yield "application/x-plist", body, canon(from_plist(plistlib.loads(body)), True)

        def make_raw(r):
            vocabulary = "cache proxy worker stream record decode buffer latency request response header".split()
            for _ in range(40):
                lines = [" ".join(r.choice(vocabulary) for _ in range(r.randint(8, 12))) for _ in range(300)]
                body = "\n".join(lines) + "\n"
                yield "text/plain; charset=utf-8", body.encode(), canon(Pairs([("text", body)]), False)

        def make_xml(r):
            for n in range(30):
                entries = "".join(
                    f'<entry xml:lang="en"><id>urn:uuid:{n}-{i}</id><title type="text">{words(r, 4, PLAIN).replace("&", "&amp;").replace("<", "&lt;")}</title>'
                    f'<summary><![CDATA[{words(r, 12, PLAIN)} <b>bold</b> & more]]></summary>'
                    f'<content>caf&#233; &lt;5&gt; &quot;q&quot; &#x1F600;</content>'
                    f'<media:thumbnail url="https://example.com/{i}.png" width="{r.randint(16, 512)}"/></entry>'
                    for i in range(r.randint(1, 20)))
                body = ('<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom" '
                        'xmlns:media="http://search.yahoo.com/mrss/"><title>Feed &amp; more</title>' + entries + "</feed>")
                yield "application/xml", body.encode(), "feed"

        def chunk(kind, data):
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

        def filtered(rows, bpp):
            out, previous = bytearray(), None
            for y, row in enumerate(rows):
                kind = y % 3 if previous is not None else y % 2
                if kind == 1:
                    row_out = bytes((row[i] - (row[i - bpp] if i >= bpp else 0)) & 255 for i in range(len(row)))
                elif kind == 2:
                    row_out = bytes((row[i] - previous[i]) & 255 for i in range(len(row)))
                else:
                    row_out = row
                out += bytes([kind]) + row_out
                previous = row
            return bytes(out)

        ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]

        def png(width, height, color_type, depth, interlace):
            channels = {0: 1, 2: 3, 3: 1, 6: 4}[color_type]
            bpp = max(1, channels * depth // 8)

            def pixel(x, y):
                samples = [(x * 7 + y * 3 + c * 60 + (x * y) % 13) for c in range(channels)]
                if color_type == 3:
                    return bytes([(x + 2 * y) % 200])
                if depth == 16:
                    return b"".join(struct.pack(">H", (s * 97) & 0xFFFF) for s in samples)
                return bytes(s & 255 for s in samples)
            passes = ADAM7 if interlace else [(0, 0, 1, 1)]
            raw = b""
            for x0, y0, dx, dy in passes:
                xs, ys = range(x0, width, dx), range(y0, height, dy)
                if len(xs) and len(ys):
                    raw += filtered([b"".join(pixel(x, y) for x in xs) for y in ys], bpp)
            data = zlib.compress(raw, 6)
            chunks = [chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0, interlace))]
            if color_type == 3:
                chunks.append(chunk(b"PLTE", bytes((i * 5 + c * 70) & 255 for i in range(200) for c in range(3))))
            chunks += [chunk(b"IDAT", data[i:i + 8192]) for i in range(0, len(data), 8192)]
            return b"\x89PNG\r\n\x1a\n" + b"".join(chunks) + chunk(b"IEND", b"")

        def make_png(r):
            variants = [("rgb8", 2, 8, 0), ("rgba8", 6, 8, 0), ("pal8", 3, 8, 0), ("gray16", 0, 16, 0),
                        ("rgb16", 2, 16, 0), ("rgb8i", 2, 8, 1)]
            for name, color_type, depth, interlace in variants:
                for width, height in ((1, 1), (7, 5), (301, 203)):
                    want = {"name": f"{name} {width}x{height}", "format": "png", "width": width, "height": height,
                            "bitDepth": depth, "interlaced": bool(interlace)}
                    yield "image/png", png(width, height, color_type, depth, interlace), json.dumps(want)

        def make_jpeg(r):
            from PIL import Image
            for mode, width, height, progressive in (("RGB", 640, 480, False), ("RGB", 640, 480, True),
                                                     ("RGB", 1023, 767, False), ("RGB", 1023, 767, True),
                                                     ("RGB", 1, 1, False), ("L", 333, 211, False), ("L", 333, 211, True)):
                channels = len(mode)
                pixels = bytes((x * 5 + y * 3 + c * 80 + (x ^ y) % 17) & 255
                               for y in range(height) for x in range(width) for c in range(channels))
                out = io.BytesIO()
                Image.frombytes(mode, (width, height), pixels).save(out, "JPEG", quality=85, progressive=progressive)
                want = {"name": f"{mode} {width}x{height}{' progressive' if progressive else ''}", "format": "jpeg",
                        "width": width, "height": height}
                yield "image/jpeg", out.getvalue(), json.dumps(want)

        def main():
            if sys.argv[1] == "make":
                make = {"json": make_json, "plist": make_plist, "raw": make_raw, "xml": make_xml, "png": make_png,
                        "jpeg": make_jpeg}[sys.argv[2]]
                for content_type, body, want in make(random.Random(20261125)):
                    print(json.dumps({"type": content_type, "body": base64.b64encode(body).decode(), "expect": want}))
            else:
                sort = sys.argv[2] == "sorted"
                with open(sys.argv[3], "rb") as lines:
                    for line in lines:
                        record = dict(json.loads(line, object_pairs_hook=Pairs))
                        out = {"ok": record.get("ok"), "decoder": record.get("decoder"), "value": canon(record.get("value"), sort)}
                        if record.get("decoder") in ("image", "xml"):  # the fields these tests read
                            out["tree"] = json.loads(line).get("value")
                        print(json.dumps(out, ensure_ascii=False))

        main()
        """#
}
