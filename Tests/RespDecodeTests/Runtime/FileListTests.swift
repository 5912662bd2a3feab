import Testing

@testable import RespDecode

/// The names of a `--files-from` list.
@Suite("File list")
struct FileListTests {
    @Test(arguments: [
        ("a.warc.gz", FileList.Entry.path("a.warc.gz")),
        ("/data/my crawl/a.warc.gz\r", .path("/data/my crawl/a.warc.gz")),
        (" leading space", .path(" leading space")),
        ("-", .path("-")),
        ("", .none),
        (" \t\r", .none),
        ("file:/data/a.warc.gz", .path("/data/a.warc.gz")),
        ("file:///data/my%20crawl/%C3%A4.warc", .path("/data/my crawl/ä.warc")),
        ("file://localhost/data/a", .path("/data/a")),
        ("c:weird:name", .path("c:weird:name")),
        (
            "dir://not-a-scheme-after-all/../x",
            .invalid("not a local file name: respdecode reads files, it does not fetch dir URIs")
        ),
    ])
    func names(_ line: String, _ expected: FileList.Entry) {
        #expect(FileList.entry(Array(line.utf8)) == expected)
    }

    @Test(arguments: [
        "s3://commoncrawl/crawl-data/x.warc.gz", "https://data.commoncrawl.org/x.warc.gz", "file://otherhost/data/a",
        "file:relative/path", "file:///bad%2", "file:///nul%00", "a\u{0}b",
    ])
    func notLocalFileNames(_ line: String) {
        guard case .invalid = FileList.entry(Array(line.utf8)) else {
            Issue.record("\(line) was taken as a name")
            return
        }
    }

    @Test func nonUTF8NamesAreRefused() {
        #expect(
            FileList.entry([0x61, 0xFF, 0x62])
                == .invalid("not UTF-8: file names are taken as UTF-8 text (inputs are named on output lines)"))
    }
}
