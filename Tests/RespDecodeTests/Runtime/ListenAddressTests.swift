import Testing

@testable import RespDecode

/// The addresses of `serve --listen` and `health --listen`.
@Suite("Listen addresses")
struct ListenAddressTests {
    @Test(arguments: [
        ("unix:/run/respdecode.sock", ListenAddress.unix(path: "/run/respdecode.sock"), "unix:/run/respdecode.sock"),
        ("unix:relative.sock", .unix(path: "relative.sock"), "unix:relative.sock"),
        ("tcp:127.0.0.1:8080", .tcp(host: "127.0.0.1", port: 8080), "tcp:127.0.0.1:8080"),
        ("tcp:0.0.0.0:0", .tcp(host: "0.0.0.0", port: 0), "tcp:0.0.0.0:0"),
        ("tcp:localhost:65535", .tcp(host: "localhost", port: 65535), "tcp:localhost:65535"),
        ("tcp:[::1]:9000", .tcp(host: "::1", port: 9000), "tcp:[::1]:9000"),
        ("tcp:::1:9000", .tcp(host: "::1", port: 9000), "tcp:[::1]:9000"),
        ("tcp:[::]:1", .tcp(host: "::", port: 1), "tcp:[::]:1"),
    ])
    func addressesAreRead(_ text: String, _ expected: ListenAddress, _ written: String) throws {
        let address = try ListenAddress(parsing: text)
        #expect(address == expected)
        #expect(address.description == written)
    }

    @Test(arguments: [
        ("nowhere", "'nowhere' is not an address: expected unix:PATH or tcp:HOST:PORT"),
        ("unix:", "'unix:' names no path"),
        ("tcp:127.0.0.1", "'tcp:127.0.0.1' has no port: expected tcp:HOST:PORT"),
        ("tcp:127.0.0.1:", "'tcp:127.0.0.1:': '' is not a port from 0 to 65535"),
        ("tcp:127.0.0.1:65536", "'tcp:127.0.0.1:65536': '65536' is not a port from 0 to 65535"),
        ("tcp:127.0.0.1:+80", "'tcp:127.0.0.1:+80': '+80' is not a port from 0 to 65535"),
        (
            "tcp:host.example:80",
            "'tcp:host.example:80': 'host.example' is not an IPv4 or IPv6 address (or localhost); host names are not resolved"
        ),
        ("tcp::80", "'tcp::80': '' is not an IPv4 or IPv6 address (or localhost); host names are not resolved"),
    ])
    func badAddressesAreInvalidAddressErrors(_ text: String, _ message: String) {
        #expect(throws: ServeError(.invalidAddress, message)) { try ListenAddress(parsing: text) }
    }

    @Test func aUnixPathMustFitInASocketAddress() throws {
        let fits = "/" + String(repeating: "x", count: 106)
        #expect(try ListenAddress(parsing: "unix:" + fits) == .unix(path: fits))
        #expect(
            throws: ServeError(
                .invalidAddress,
                "'unix:\(fits)x' has a path of 108 bytes; at most 107 fit in a unix socket address")
        ) {
            try ListenAddress(parsing: "unix:\(fits)x")
        }
    }
}
