import Testing

@testable import RespDecode

@Suite("Sniffing (--sniff)")
struct SniffingTests {
    static func sniff(_ bytes: [UInt8]) -> String? { bytes.withUnsafeBufferPointer(Sniffing.mimeType) }
    static func sniff(_ text: String) -> String? { sniff(Array(text.utf8)) }

    @Test(arguments: [
        ("{\"a\":1}", "application/json"),
        ("  \n[1,2]", "application/json"),
        ("\u{FEFF}{}", "application/json"),
        ("<?xml version=\"1.0\"?><feed/>", "application/xml"),
        ("<rss version=\"2.0\"/>", "application/xml"),
        ("\n<_x/>", "application/xml"),
        (
            "<?xml version=\"1.0\"?>\n<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"x\">\n<plist>",
            "application/x-plist"
        ),
        ("<?xml version=\"1.0\"?><plist version=\"1.0\"><dict/></plist>", "application/x-plist"),
        ("<plist version=\"1.0\"><true/></plist>", "application/x-plist"),
        ("<!DOCTYPE html><html></html>", "text/html"),
        ("<!doctype HTML>", "text/html"),
        ("<HTML><body>", "text/html"),
        ("<!-- a comment -->\n<html><body>", "text/html"),
        ("<!-- generated --><feed/>", "application/xml"),
        ("<?xml version=\"1.0\"?><!DOCTYPE html><html/>", "text/html"),
        ("bplist00\u{D0}\u{08}", "application/x-bplist"),
        ("GIF89a\u{1}\u{0}\u{1}\u{0}", "image/gif"),
        ("GIF87a", "image/gif"),
        ("II*\u{0}\u{8}\u{0}\u{0}\u{0}", "image/tiff"),
        ("MM\u{0}*\u{0}\u{0}\u{0}\u{8}", "image/tiff"),
        ("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ", "image/webp"),
        ("{\"a\":1}\n{\"a\":2}\n", "application/x-ndjson"),
        ("[1,\"]\\\"\"]\r\n\n  [2]", "application/x-ndjson"),
        ("{\"a\":1}\n", "application/json"),
        ("[\n  {\"a\": 1},\n  {\"a\": 2}\n]", "application/json"),
        ("{\"a\":1} x\n{}", "application/json"),
        ("\u{1E}{\"a\":1}\n\u{1E}[2]\n", "application/json-seq"),
        ("\u{1E}42\n", "application/json-seq"),
        ("--abc'()+_,-./:=?\r\nContent-Type: text/plain\r\n\r\nx\r\n--abc'()+_,-./:=?--", "multipart/mixed"),
        ("--b  \nContent-Disposition: form-data; name=a\n\n1\n--b--\n", "multipart/mixed"),
        ("data: {\"choices\":[]}\n\n", "text/event-stream"),
        (": ping\r\n: ok\r\nevent: message_start\r\ndata: {}\r\n\r\n", "text/event-stream"),
        ("retry: 1000\ndata: x\r\rdata: y", "text/event-stream"),
    ])
    func signatures(_ body: String, _ type: String) {
        #expect(Self.sniff(body) == type, "\(body.debugDescription)")
    }

    @Test func binarySignatures() {
        #expect(Self.sniff([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]) == "image/png")
        #expect(Self.sniff([0xFF, 0xD8, 0xFF, 0xE0]) == "image/jpeg")
        #expect(Self.sniff([0xFF, 0xFE, 0x7B, 0x00, 0x7D, 0x00]) == "application/json", "UTF-16LE with BOM")
        #expect(Self.sniff([0xFE, 0xFF, 0x00, 0x5B, 0x00, 0x5D]) == "application/json", "UTF-16BE with BOM")
        var bmp = [UInt8](repeating: 0, count: 54)
        bmp[0] = UInt8(ascii: "B")
        bmp[1] = UInt8(ascii: "M")
        bmp[14] = 40
        #expect(Self.sniff(bmp) == "image/bmp")
        bmp[14] = 41 // not a DIB header size: "BM" alone is too weak a sign
        #expect(Self.sniff(bmp) == nil)
        var ico: [UInt8] = [0, 0, 1, 0, 1, 0, 16, 16, 0, 0, 1, 0, 32, 0]
        #expect(Self.sniff(ico) == "image/x-icon")
        ico[4] = 0 // no entries
        #expect(Self.sniff(ico) == nil)
        #expect(Self.sniff([0xD9, 0xD9, 0xF7, 0xA1, 0x61, 0x61, 0x01]) == "application/cbor", "self-described CBOR")
        #expect(Self.sniff([0xD9, 0xD9, 0xF6, 0xA0]) == nil)
    }

    /// The new formats' types are given only when a decoder of the chain takes them: AFNetworking's chain sees JSON
    /// Lines as JSON, and no event stream, multipart or CBOR type, as before those decoders existed.
    @Test func typesForTheirDecodersNeedThem() {
        let af: Set = ["application/json", "application/xml", "application/x-plist", "image/png"]
        #expect(Sniffing.type("application/x-ndjson", accepted: af.contains) == "application/json")
        #expect(Sniffing.type("application/x-ndjson", accepted: { _ in true }) == "application/x-ndjson")
        for type in ["text/event-stream", "multipart/mixed", "application/cbor", "application/json-seq"] {
            #expect(Sniffing.type(type, accepted: af.contains) == nil, "\(type)")
            #expect(Sniffing.type(type, accepted: { $0 == type }) == type)
        }
        #expect(Sniffing.type("text/html", accepted: af.contains) == "text/html", "the older signatures are kept")
        #expect(Sniffing.type("image/png", accepted: { _ in false }) == "image/png")
    }

    @Test func multipartBoundaryLength() {
        let seventy = String(repeating: "b", count: 70)
        #expect(Self.sniff("--\(seventy)\r\nContent-Type: a/b\r\n") == "multipart/mixed")
        #expect(Self.sniff("--\(seventy)b\r\nContent-Type: a/b\r\n") == nil, "71 characters are no boundary")
    }

    @Test(arguments: [
        "", "   ", "plain text", "<!-- never closed", "<!-- c --> text", "<", "< b", "<1>", "%PDF-1.7", "PK\u{3}\u{4}",
        "\u{0}\u{0}\u{0}\u{0}",
        "\u{1E}", "\u{1E}x", "--", "--b\r\n\r\n", "--b\r\nno colon", "-1", "dat: x",
        ": comment only", ":\u{0}\ndata: x", "events: x", "Data: x",
        // Not an event stream: a key other than the four fields, or no data line dispatched by a blank line.
        "id: 42\nname: widget\nprice: 9.99\n", "retry: 1000\n", "data: x\n", "data: x\nevent: y\n", "id: 1\n\n",
        "data: x\nfoo: y\n\n",
    ])
    func nothingWithConfidence(_ body: String) {
        #expect(Self.sniff(body) == nil, "\(body.debugDescription)")
    }

    @Test func sniffableTypes() {
        #expect(Sniffing.isSniffable(nil))
        #expect(Sniffing.isSniffable("application/octet-stream"))
        #expect(!Sniffing.isSniffable("text/plain"))
        #expect(!Sniffing.isSniffable("application/json"))
    }
}
