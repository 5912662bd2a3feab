import Glibc

/// Where `respdecode serve` listens and `respdecode health` connects: `unix:PATH` or `tcp:HOST:PORT`.
public enum ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// A unix stream socket at a path (at most 107 bytes, what `sockaddr_un` holds).
    case unix(path: String)
    /// A TCP address: an IPv4 or IPv6 literal (`localhost` is 127.0.0.1), and a port (0: the system picks one).
    case tcp(host: String, port: UInt16)

    /// Reads `unix:PATH`, `tcp:HOST:PORT`, `tcp:[IPv6]:PORT` (the brackets may be left out: the port follows the
    /// last colon).
    public init(parsing text: String) throws(ServeError) {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard !path.isEmpty else { throw ServeError(.invalidAddress, "'\(text)' names no path") }
            guard !path.utf8.contains(0) else {
                throw ServeError(.invalidAddress, "'\(text)' has a NUL byte in its path")
            }
            let room = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1
            guard path.utf8.count <= room else {
                throw ServeError(
                    .invalidAddress,
                    "'\(text)' has a path of \(path.utf8.count) bytes; at most \(room) fit in a unix socket address")
            }
            self = .unix(path: path)
        } else if text.hasPrefix("tcp:") {
            let rest = text.dropFirst(4)
            guard let colon = rest.lastIndex(of: ":") else {
                throw ServeError(.invalidAddress, "'\(text)' has no port: expected tcp:HOST:PORT")
            }
            var host = String(rest[..<colon])
            let portText = rest[rest.index(after: colon)...]
            if host.hasPrefix("[") && host.hasSuffix("]") && host.count >= 2 {
                host = String(host.dropFirst().dropLast())
            }
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCIIDigit), let port = Int(portText),
                port <= 65535
            else {
                throw ServeError(.invalidAddress, "'\(text)': '\(portText)' is not a port from 0 to 65535")
            }
            guard Self.family(of: host) != nil else {
                throw ServeError(
                    .invalidAddress,
                    "'\(text)': '\(host)' is not an IPv4 or IPv6 address (or localhost); host names are not resolved")
            }
            self = .tcp(host: host, port: UInt16(port))
        } else {
            throw ServeError(.invalidAddress, "'\(text)' is not an address: expected unix:PATH or tcp:HOST:PORT")
        }
    }

    public var description: String {
        switch self {
        case .unix(let path): "unix:\(path)"
        case .tcp(let host, let port): host.contains(":") ? "tcp:[\(host)]:\(port)" : "tcp:\(host):\(port)"
        }
    }

    /// AF_INET or AF_INET6 for a literal (or localhost), nil for anything else.
    private static func family(of host: String) -> Int32? {
        var scratch = in6_addr()
        if host == "localhost" || inet_pton(AF_INET, host, &scratch) == 1 { return AF_INET }
        if inet_pton(AF_INET6, host, &scratch) == 1 { return AF_INET6 }
        return nil
    }

    /// The address as the socket calls take it.
    func socketAddress() -> SocketAddress {
        var address = SocketAddress()
        switch self {
        case .unix(let path):
            var unix = sockaddr_un()
            unix.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &unix.sun_path) { room in
                for (index, byte) in path.utf8.enumerated() { room[index] = byte }
            }
            address.set(unix, family: AF_UNIX)
        case .tcp(let host, let port):
            if Self.family(of: host) == AF_INET {
                var inet = sockaddr_in()
                inet.sin_family = sa_family_t(AF_INET)
                inet.sin_port = port.bigEndian
                _ = inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &inet.sin_addr)
                address.set(inet, family: AF_INET)
            } else {
                var inet6 = sockaddr_in6()
                inet6.sin6_family = sa_family_t(AF_INET6)
                inet6.sin6_port = port.bigEndian
                _ = inet_pton(AF_INET6, host, &inet6.sin6_addr)
                address.set(inet6, family: AF_INET6)
            }
        }
        return address
    }

    /// A new stream socket for this address, closed on exec; nil with errno set when none could be made.
    func makeSocket() -> Int32? {
        let fd = socket(socketAddress().family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return fd
    }
}

/// A socket address of any family, with its length.
struct SocketAddress {
    var storage = sockaddr_storage()
    var length = socklen_t(0)
    var family: Int32 = AF_UNSPEC

    mutating func set<Address>(_ address: Address, family: Int32) {
        withUnsafeMutableBytes(of: &storage) { room in
            withUnsafeBytes(of: address) { room.copyMemory(from: $0) }
        }
        length = socklen_t(MemoryLayout<Address>.size)
        self.family = family
    }

    func withPointer<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafeBytes(of: storage) { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self), length) }
    }

    /// The port of an AF_INET or AF_INET6 address.
    var port: UInt16 {
        withUnsafeBytes(of: storage) { bytes in
            switch family {
            case AF_INET: UInt16(bigEndian: bytes.load(as: sockaddr_in.self).sin_port)
            case AF_INET6: UInt16(bigEndian: bytes.load(as: sockaddr_in6.self).sin6_port)
            default: 0
            }
        }
    }
}

/// Why `serve` could not start listening. The message names the address and, for a system call that failed, the
/// system's reason.
public struct ServeError: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: Code
    /// What is wrong, for people.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// The stable error codes.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Wrapped: String, Hashable, Sendable {
            case invalidAddress, pathInUse, alreadyListening, cannotListen
        }
        private let wrapped: Wrapped

        /// The address is not `unix:PATH` or `tcp:HOST:PORT`, or a part of it is out of range.
        public static let invalidAddress = Code(wrapped: .invalidAddress)
        /// Something other than a socket is at the unix socket's path: it is not replaced.
        public static let pathInUse = Code(wrapped: .pathInUse)
        /// A server answers on the unix socket's path already.
        public static let alreadyListening = Code(wrapped: .alreadyListening)
        /// Making, binding or listening on the socket failed (a port in use, a folder not writable, …).
        public static let cannotListen = Code(wrapped: .cannotListen)

        public var description: String { wrapped.rawValue }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

/// The system's message for `errno`.
func systemError(_ number: Int32 = errno) -> String { String(cString: strerror(number)) }
