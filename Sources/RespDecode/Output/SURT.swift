/*
 SURT keys (Sort-friendly URI Reordering Transform) as web archive indexes (CDX, CDXJ) write them, with the
 canonicalisation of the Internet Archive's wayback key maker, as the `surt` package (0.3.1) applies it by default
 (docs/output.md#cdxj-index):

     http://www.Example.com:80/a/./b/../C/?b=2&a=1#top  →  com,example)/a/c?a=1&b=2
     dns:www.archive.org                                →  dns:www.archive.org
     file:///photos/Gradient.jpg                        →  file:/photos/gradient.jpg

 The steps, in order:

 1. Parse. Leading and trailing white space go, and every CR, LF and TAB inside. A URL without a scheme gets `http://`;
    `http://http://…` is one scheme. The URL splits into scheme, `//authority`, path, `?query` and `#fragment` (RFC 3986
    appendix B). The host is the authority after any `user@`, before a `:port`, lower-cased (in `[…]` for IPv6); a
    port that is not a number up to 65535 makes the URL unkeyable. An http(s) URL with no authority takes its host from
    the path's first segment.
 2. Canonicalise (Google's rules). The fragment goes. The query is unescaped until stable, then escaped once. The host
    is unescaped until stable, `..` becomes `.`, dots at either end go; a host that is a number, or looks like a
    decimal or octal IPv4 address, becomes its dotted quad (as inet_aton reads it); otherwise it is lower-cased and
    escaped once. The path is unescaped until stable, dot segments are resolved and empty segments dropped (when there
    is a host; an empty path becomes `/`), and it is escaped once. Escaping once: `%XX` (upper-case hex) for bytes
    up to space, `#`, `%` and bytes from 0x7F.
 3. Canonicalise (the Internet Archive's rules). A leading `www.` (or `www2.`, …) goes from the host (not for dns:),
    user and password go, the default port (80 for http, 443 for https) goes. The path is lower-cased, loses ASP.NET
    session ids (`/(s(…24…))/x.aspx`) and a trailing `/` (unless it is all). The query loses session ids (jsessionid,
    phpsessid, sid with 32 letters or digits, ASPSESSIONIDxxxxxxxx, cfid & cftoken), is lower-cased, and its
    arguments are sorted (as byte strings, `name` before `name=`); an empty query goes with its `?`.
 4. Write. The host's labels reversed and joined by `,`, then `:port` when one is left, then `)`; then the path (or `/`
    when there is none but a query), then `?query`. Without a host: `scheme:` and the path. An empty URL is `-`; one
    that starts with `filedesc` is kept as it is.

 Limit: a host with non-ASCII characters is escaped byte by byte, not converted to IDNA (punycode) as the `surt`
 package does; its keys differ from cdxj-indexer's.
 */
import Glibc

/// Makes SURT keys of URLs. See the file comment for the rules.
public enum SURT {
    /// The SURT key of `url`, or nil when it cannot be keyed (an invalid port): an index then keys the record by its
    /// URL as it is.
    public static func key(_ url: String) -> String? {
        var bytes = Array(url.utf8)
        if bytes.isEmpty { return "-" }
        if bytes.starts(with: "filedesc".utf8) { return url }
        guard var parts = parse(&bytes) else { return nil }
        canonicalize(&parts)
        return String(decoding: write(parts), as: UTF8.self)
    }

    struct Parts {
        var scheme: [UInt8]
        var host: [UInt8]?
        var port: Int?
        var path: [UInt8]?
        var query: [UInt8]?
        /// The URL ended in `?` with nothing after it.
        var emptyQuery = false
    }

    // MARK: - Parsing

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    static func parse(_ url: inout [UInt8]) -> Parts? {
        while let last = url.last, isSpace(last) { url.removeLast() }
        url.removeFirst(url.prefix(while: isSpace).count)
        url.removeAll { $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        if schemeLength(url) == nil { url = Array("http://".utf8) + url }
        collapseRepeatedHTTP(&url)

        // ^(([a-zA-Z][a-zA-Z0-9+.-]*):)?((//([^/?#]*))?([^?#]*)(\?([^#]*))?)?(#(.*))?$
        var i = 0
        var scheme: [UInt8] = []
        if let length = schemeLength(url) {
            scheme = Array(url[0..<length])
            i = length + 1
        }
        var netloc: [UInt8] = []
        if url[i...].starts(with: "//".utf8) {
            i += 2
            let end = url[i...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == 0x23 }
            netloc = Array(url[i..<(end ?? url.count)])
            i = end ?? url.count
        }
        let pathEnd = url[i...].firstIndex { $0 == UInt8(ascii: "?") || $0 == 0x23 } ?? url.count
        let pathBytes = Array(url[i..<pathEnd])
        i = pathEnd
        var queryBytes: [UInt8] = []
        if i < url.count && url[i] == UInt8(ascii: "?") {
            let end = url[(i + 1)...].firstIndex(of: 0x23) ?? url.count
            queryBytes = Array(url[(i + 1)..<end])
        }

        while netloc.last == UInt8(ascii: ":") { netloc.removeLast() }
        // The host and port, as Python's urllib reads them.
        let hostInfo = netloc.lastIndex(of: UInt8(ascii: "@")).map { Array(netloc[($0 + 1)...]) } ?? netloc
        var hostname: [UInt8]
        var portText: [UInt8]
        if let open = hostInfo.firstIndex(of: UInt8(ascii: "[")) {
            let bracketed = hostInfo[(open + 1)...]
            let close = bracketed.firstIndex(of: UInt8(ascii: "]"))
            hostname = Array(bracketed[..<(close ?? bracketed.endIndex)])
            let after = close.map { bracketed[($0 + 1)...] } ?? []
            portText = after.firstIndex(of: UInt8(ascii: ":")).map { Array(after[($0 + 1)...]) } ?? []
        } else {
            let colon = hostInfo.firstIndex(of: UInt8(ascii: ":"))
            hostname = Array(hostInfo[..<(colon ?? hostInfo.count)])
            portText = colon.map { Array(hostInfo[($0 + 1)...]) } ?? []
        }
        var port: Int?
        if !portText.isEmpty {
            guard portText.count <= 5, portText.allSatisfy({ (0x30...0x39).contains($0) }),
                let value = Int(String(decoding: portText, as: UTF8.self)), value <= 65535
            else { return nil }
            port = value == 0 ? nil : value
        }
        hostname = hostname.map(lower)
        var parts = Parts(
            scheme: scheme, host: hostname.isEmpty ? nil : hostname, port: port,
            path: pathBytes.isEmpty ? nil : pathBytes, query: queryBytes.isEmpty ? nil : queryBytes)
        if scheme.starts(with: "http".utf8), parts.host == nil, let path = parts.path {
            let rest = path.drop { $0 == UInt8(ascii: "/") }
            let slash = rest.firstIndex(of: UInt8(ascii: "/"))
            parts.host = Array(rest[..<(slash ?? rest.endIndex)])
            parts.path = [UInt8(ascii: "/")] + (slash.map { Array(rest[($0 + 1)...]) } ?? [])
        }
        parts.emptyQuery = url.last == UInt8(ascii: "?") && parts.query == nil
        return parts
    }

    /// The length of `scheme` in `scheme:…`, if the URL starts with one.
    static func schemeLength(_ url: [UInt8]) -> Int? {
        guard let first = url.first, isLetter(first) else { return nil }
        var i = 1
        while i < url.count,
            isLetter(url[i]) || isDigit(url[i]) || url[i] == UInt8(ascii: "+") || url[i] == UInt8(ascii: "-")
                || url[i] == UInt8(ascii: ".")
        {
            i += 1
        }
        return i < url.count && url[i] == UInt8(ascii: ":") ? i : nil
    }

    /// `http://https://x` → `https://x`: a run of `http://` and `https://` at the start keeps its last one.
    static func collapseRepeatedHTTP(_ url: inout [UInt8]) {
        var i = 0
        var last: Range<Int>?
        while true {
            if url[i...].starts(with: "http://".utf8) {
                last = i..<i + 7
            } else if url[i...].starts(with: "https://".utf8) {
                last = i..<i + 8
            } else {
                break
            }
            i = last!.upperBound
        }
        if let last, last.lowerBound > 0 { url.removeFirst(last.lowerBound) }
    }

    // MARK: - Canonicalising

    static func canonicalize(_ parts: inout Parts) {
        // Google's rules.
        if let query = parts.query { parts.query = escapeOnce(unescapeRepeatedly(query)) }
        if var host = parts.host {
            host = unescapeRepeatedly(host)
            host = replaceDoubleDots(host)
            while host.first == UInt8(ascii: ".") { host.removeFirst() }
            while host.last == UInt8(ascii: ".") { host.removeLast() }
            parts.host = ipv4(host) ?? escapeOnce(host.map(lower))
        }
        var path = parts.path.map(unescapeRepeatedly)
        if parts.host != nil { path = normalizePath(path ?? []) }
        parts.path = path.map(escapeOnce)

        // The Internet Archive's rules.
        if var host = parts.host {
            host = host.map(lower)
            if parts.scheme != Array("dns".utf8) { host = stripWWW(host) }
            parts.host = host
        }
        let scheme = parts.scheme.map(lower)
        if parts.port == 80 && scheme == Array("http".utf8) || parts.port == 443 && scheme == Array("https".utf8) {
            parts.port = nil
        }
        if var path = parts.path, !path.isEmpty {
            path = path.map(lower)
            path = stripPathSessionID(path)
            if path.count > 1 && path.last == UInt8(ascii: "/") { path.removeLast() }
            parts.path = path
        }
        if var query = parts.query, !query.isEmpty {
            query = stripQuerySessionIDs(query)
            query = query.map(lower)
            query = sortArguments(query)
            parts.query = query.isEmpty ? nil : query
        } else {
            parts.emptyQuery = false
        }
    }

    static func unescapeRepeatedly(_ input: [UInt8]) -> [UInt8] {
        var current = input
        while true {
            var out: [UInt8] = []
            out.reserveCapacity(current.count)
            var i = 0
            var changed = false
            while i < current.count {
                if current[i] == UInt8(ascii: "%"), i + 2 < current.count, let high = hex(current[i + 1]),
                    let low = hex(current[i + 2])
                {
                    out.append(high << 4 | low)
                    i += 3
                    changed = true
                } else {
                    out.append(current[i])
                    i += 1
                }
            }
            if !changed { return current }
            current = out
        }
    }

    /// `%XX` for bytes up to space, `#`, `%`, and bytes from 0x7F; the rest as they are.
    static func escapeOnce(_ input: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(input.count)
        let digits = Array("0123456789ABCDEF".utf8)
        for byte in input {
            if byte <= 0x20 || byte >= 0x7F || byte == 0x23 || byte == UInt8(ascii: "%") {
                out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 15)]]
            } else {
                out.append(byte)
            }
        }
        return out
    }

    /// Each `..` (left to right, not overlapping) becomes `.`.
    static func replaceDoubleDots(_ host: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < host.count {
            if host[i] == UInt8(ascii: "."), i + 1 < host.count, host[i + 1] == UInt8(ascii: ".") {
                out.append(UInt8(ascii: "."))
                i += 2
            } else {
                out.append(host[i])
                i += 1
            }
        }
        return out
    }

    /// The dotted quad of a host that is a number (taken modulo 2^32), or that looks like a decimal or octal IPv4
    /// address (one to four parts) that inet_aton reads; nil otherwise.
    static func ipv4(_ host: [UInt8]) -> [UInt8]? {
        guard !host.isEmpty else { return nil }
        if host.allSatisfy(isDigit) {
            // The whole number modulo 2^32, as a running remainder.
            var value: UInt64 = 0
            for digit in host { value = (value * 10 + UInt64(digit - 0x30)) % (1 << 32) }
            return dottedQuad(UInt32(value))
        }
        let parts = host.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count <= 4, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(isDigit) }) else { return nil }
        let first = parts[0]
        let decimal = first.first != UInt8(ascii: "0")
        let octal =
            first.first == UInt8(ascii: "0")
            && parts.allSatisfy { $0.allSatisfy { (0x30...0x37).contains($0) } }
        guard decimal || octal else { return nil }
        var address = in_addr()
        let text = String(decoding: host, as: UTF8.self)
        guard inet_aton(text, &address) != 0 else { return nil }
        return dottedQuad(UInt32(bigEndian: address.s_addr))
    }

    static func dottedQuad(_ value: UInt32) -> [UInt8] {
        Array("\(value >> 24).\(value >> 16 & 255).\(value >> 8 & 255).\(value & 255)".utf8)
    }

    /// Resolves `.` and `..` segments and drops empty ones (but a trailing one); an empty path is `/`.
    static func normalizePath(_ path: [UInt8]) -> [UInt8] {
        guard !path.isEmpty else { return [UInt8(ascii: "/")] }
        var kept: [ArraySlice<UInt8>] = []
        for (index, segment) in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            .enumerated()
        where index > 0 {
            if segment.elementsEqual(".".utf8) { continue }
            if segment.elementsEqual("..".utf8) {
                if kept.isEmpty { kept.append(segment) } else { kept.removeLast() }
                continue
            }
            kept.append(segment)
        }
        var out: [UInt8] = [UInt8(ascii: "/")]
        for (index, segment) in kept.enumerated() {
            if index == kept.count - 1 {
                out += segment
            } else if !segment.isEmpty {
                out += segment
                out.append(UInt8(ascii: "/"))
            }
        }
        return out
    }

    /// Drops `www.`, `www2.`, … from the start of a host.
    static func stripWWW(_ host: [UInt8]) -> [UInt8] {
        guard host.starts(with: "www".utf8) else { return host }
        var i = 3
        while i < host.count && isDigit(host[i]) { i += 1 }
        return i < host.count && host[i] == UInt8(ascii: ".") ? Array(host[(i + 1)...]) : host
    }

    /// ASP.NET session ids in a (lower-cased) path: `…/(s(24))/x.aspx…` or `…/(24)/x.aspx…` lose the parenthesised
    /// segment.
    static func stripPathSessionID(_ path: [UInt8]) -> [UInt8] {
        var path = path
        for nested in [true, false] {
            // The last `/` after which the pattern holds (the greedy `.*/`).
            var slash = path.count - 1
            while slash >= 0 {
                if path[slash] == UInt8(ascii: "/"), let end = sessionSegmentEnd(path, from: slash + 1, nested: nested),
                    endsInASPX(path, from: end)
                {
                    path.removeSubrange((slash + 1)..<end)
                    break
                }
                slash -= 1
            }
        }
        return path
    }

    /// Where `(x(24))/` (nested) or `(24)/` ends, when it starts at `i`.
    static func sessionSegmentEnd(_ p: [UInt8], from start: Int, nested: Bool) -> Int? {
        var i = start
        func take(_ byte: UInt8) -> Bool {
            guard i < p.count, p[i] == byte else { return false }
            i += 1
            return true
        }
        func alnum24() -> Bool {
            guard i + 24 <= p.count, p[i..<i + 24].allSatisfy({ isDigit($0) || isLetter($0) }) else { return false }
            i += 24
            return true
        }
        guard take(UInt8(ascii: "(")) else { return nil }
        if nested {
            var groups = 0
            while i + 1 < p.count, isLetter(p[i]), p[i + 1] == UInt8(ascii: "(") {
                let save = i
                i += 2
                guard alnum24(), take(UInt8(ascii: ")")) else {
                    i = save
                    break
                }
                groups += 1
            }
            guard groups > 0 else { return nil }
        } else {
            guard alnum24() else { return nil }
        }
        guard take(UInt8(ascii: ")")), take(UInt8(ascii: "/")) else { return nil }
        return i
    }

    /// `[^?]+\.aspx.*` from `start`.
    static func endsInASPX(_ p: [UInt8], from start: Int) -> Bool {
        let limit = p[start...].firstIndex(of: UInt8(ascii: "?")) ?? p.count
        var j = start + 1
        while j + 5 <= limit {
            if p[j..<j + 5].elementsEqual(".aspx".utf8) { return true }
            j += 1
        }
        return false
    }

    /// A session id argument in a query: a prefix (matched case-insensitively) and what must follow it.
    enum SessionArgument: CaseIterable {
        case jsessionid, phpsessid, sid, aspsessionid, cfid

        /// Where the argument starting at `i` ends, if one does.
        func end(in q: [UInt8], at i: Int) -> Int? {
            func prefix(_ text: String) -> Int? {
                let bytes = Array(text.utf8)
                guard i + bytes.count <= q.count, zip(q[i...], bytes).allSatisfy({ lower($0) == $1 }) else {
                    return nil
                }
                return i + bytes.count
            }
            func run(_ from: Int, _ count: Int, _ allowed: (UInt8) -> Bool) -> Int? {
                guard from + count <= q.count, q[from..<from + count].allSatisfy(allowed) else { return nil }
                return from + count
            }
            let alnum: (UInt8) -> Bool = { isDigit($0) || isLetter($0) }
            switch self {
            case .jsessionid: return prefix("jsessionid=").flatMap { run($0, 32, alnum) }
            case .phpsessid: return prefix("phpsessid=").flatMap { run($0, 32, alnum) }
            case .sid: return prefix("sid=").flatMap { run($0, 32, alnum) }
            case .aspsessionid:
                guard let after = prefix("aspsessionid").flatMap({ run($0, 8, isLetter) }),
                    after < q.count, q[after] == UInt8(ascii: "=")
                else { return nil }
                return run(after + 1, 24, isLetter)
            case .cfid:
                guard let value = prefix("cfid=") else { return nil }
                let amp = q[value...].firstIndex(of: UInt8(ascii: "&")) ?? q.count
                guard amp > value, q[amp...].starts(with: "&cftoken=".utf8) else { return nil }
                let token = amp + 9
                let end = q[token...].firstIndex(of: UInt8(ascii: "&")) ?? q.count
                return end > token ? end : nil
            }
        }
    }

    /// Removes the last session id argument of each kind (`^(.*)ARG(?:&(.*))?$`): what came before it, then what
    /// came after its `&`.
    static func stripQuerySessionIDs(_ query: [UInt8]) -> [UInt8] {
        var q = query
        for kind in SessionArgument.allCases {
            var i = q.count
            while i >= 0 {
                if let end = kind.end(in: q, at: i), end == q.count || q[end] == UInt8(ascii: "&") {
                    let after = end < q.count ? Array(q[(end + 1)...]) : []
                    q = Array(q[..<i]) + after
                    break
                }
                i -= 1
            }
        }
        return q
    }

    /// The `&`-separated arguments sorted as (name, value) pairs, an argument without `=` before one with.
    static func sortArguments(_ query: [UInt8]) -> [UInt8] {
        guard query.count > 1 else { return query }
        let arguments = query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false).map {
            argument -> (name: ArraySlice<UInt8>, value: ArraySlice<UInt8>?) in
            guard let equals = argument.firstIndex(of: UInt8(ascii: "=")) else { return (argument, nil) }
            return (argument[..<equals], argument[(equals + 1)...])
        }
        let sorted = arguments.sorted { a, b in
            if !a.name.elementsEqual(b.name) { return a.name.lexicographicallyPrecedes(b.name) }
            switch (a.value, b.value) {
            case (nil, nil), (_?, nil): return false
            case (nil, _?): return true
            case (let x?, let y?): return x.lexicographicallyPrecedes(y)
            }
        }
        var out: [UInt8] = []
        for (index, argument) in sorted.enumerated() {
            if index > 0 { out.append(UInt8(ascii: "&")) }
            out += argument.name
            if let value = argument.value {
                out.append(UInt8(ascii: "="))
                out += value
            }
        }
        return out
    }

    // MARK: - Writing

    static func write(_ parts: Parts) -> [UInt8] {
        var out: [UInt8] = []
        if let host = parts.host, !host.isEmpty {
            let labels = host.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            out += Array(labels.reversed().joined(separator: [UInt8(ascii: ",")]))
            if let port = parts.port { out += Array(":\(port)".utf8) }
            out.append(UInt8(ascii: ")"))
        } else {
            out += parts.scheme
            out.append(UInt8(ascii: ":"))
        }
        if let path = parts.path, !path.isEmpty {
            out += path
        } else if parts.query != nil {
            out.append(UInt8(ascii: "/"))
        }
        if let query = parts.query {
            out.append(UInt8(ascii: "?"))
            out += query
        }
        if parts.emptyQuery { out.append(UInt8(ascii: "?")) }
        return out
    }

    // MARK: - Bytes

    static func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
    static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
    static func lower(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte + 32 : byte }
    static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x37
        case 0x61...0x66: byte - 0x57
        default: nil
        }
    }
}
