import Testing

@testable import RespDecode

/// SURT keys (Output/SURT.swift), each case checked against what the `surt` package (0.3.1, `surt.surt(url)`, the
/// function cdxj-indexer keys its lines with) gives for the same URL; nil where it raises (an invalid port), so that
/// cdxj-indexer keys the line by its URL.
@Suite("SURT keys")
struct SURTTests {
    @Test(
        arguments: [
            ("http://www.Example.com:80/a/./b/../C/?b=2&a=1#top", "com,example)/a/c?a=1&b=2"),
            ("dns:www.archive.org", "dns:www.archive.org"),
            ("file:///photos/Gradient.jpg", "file:/photos/gradient.jpg"),
            ("https://www2.example.com:443/", "com,example)/"),
            ("https://example.com:8443/x/", "com,example:8443)/x"),
            ("http://example.com", "com,example)/"),
            ("example.com/path", "com,example)/path"),
            ("http://http://example.com/x", "com,example)/x"),
            ("http://example.com/a%2541b", "com,example)/aab"),
            ("http://example.com/a b", "com,example)/a%20b"),
            ("http://user:pass@Example.COM/", "com,example)/"),
            ("http://3232235777/", "1,1,168,192)/"),
            ("http://0300.0250.01.01/", "1,1,168,192)/"),
            ("http://192.168.1.1/x", "1,1,168,192)/x"),
            ("http://example.com/?", "com,example)/"),
            ("http://example.com/?a&a=&b=1&A=2", "com,example)/?a&a=&a=2&b=1"),
            ("http://example.com/x?jsessionid=0123456789abcdef0123456789abcdef&b=1", "com,example)/x?b=1"),
            ("http://example.com/x?a=1&phpsessid=0123456789abcdef0123456789abcdef", "com,example)/x?&a=1"),
            ("http://example.com/x?cfid=12&cftoken=34&z=1", "com,example)/x?z=1"),
            ("http://example.com/x?aspsessionidabcdefgh=abcdefghijklmnopqrstuvwx&q=1", "com,example)/x?q=1"),
            ("http://example.com/app/(s(abcdefghijklmnopqrstuvwx))/page.aspx?x=1", "com,example)/app/page.aspx?x=1"),
            ("http://example.com/app/(abcdefghijklmnopqrstuvwx)/page.aspx", "com,example)/app/page.aspx"),
            ("http://example.com//a//b/", "com,example)/a/b"),
            ("http://example.com/../a", "com,example)/../a"),
            ("http://ex..ample.com./", "com,ample,ex)/"),
            ("metadata://gnu.org/software/wget/warc/MANIFEST.txt", "org,gnu)/software/wget/warc/manifest.txt"),
            ("mailto:someone@example.com", "mailto:someone@example.com"),
            ("http://example.com:/x", "com,example)/x"),
            ("http://example.com/%7Euser/", "com,example)/~user"),
            ("http://example.com/é", "com,example)/%c3%a9"),
            ("HTTP://EXAMPLE.COM/Index.HTML", "com,example)/index.html"),
            ("http://[::1]:8080/x", "::1:8080)/x"),
            ("urn:uuid:1234", "urn:uuid:1234"),
            ("", "-"),
            ("filedesc://x.arc", "filedesc://x.arc"),
            ("  http://example.com/\tx\n ", "com,example)/x"),
            ("http://example.com/a?b=%20c#frag", "com,example)/a?b=%20c"),
            ("http://www.example.com/?q=%2541", "com,example)/?q=a"),
            ("http://example.com:99999/", nil),
            ("http://example.com:8o/", nil),
        ] as [(String, String?)])
    func keyAsTheSurtPackageGivesIt(_ url: String, _ expected: String?) {
        #expect(SURT.key(url) == expected, "\(url)")
    }
}
