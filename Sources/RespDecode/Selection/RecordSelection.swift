import Glibc

/// Which framed records are decoded (`--select-status`, `--select-type`, `--select-url`, `--select-url-regex`,
/// `--select-min-body-bytes`, `--select-max-body-bytes`; docs/output.md#selecting-records). Checked by the worker
/// before Content-Encoding is undone, before the payload digest is checked and before any decoder runs, on what the
/// framer read: the status, the `Content-Type` field, the URL and the body's size as framed. A record must pass every
/// filter that is set; a framing failure is never filtered out (it always gets its error line).
public struct RecordSelection: Sendable {
    /// Status codes a record must have; nil: any.
    public var statuses: StatusCodeSet?
    /// MIME type patterns (fnmatch(3) globs on the Content-Type's essence, both lowercase, so case-insensitive; `none` stands for a
    /// record without one), one of which must match; nil: any type.
    public var types: [String]?
    /// A glob (fnmatch(3), `*` matches `/` too) the whole URL must match; nil: any URL.
    public var urlGlob: String?
    /// A POSIX extended regular expression (regcomp(3)) that must match somewhere in the URL; nil: any URL.
    public var urlRegex: URLRegex?
    /// Least body size as framed (after de-chunking, before Content-Encoding is undone); nil: no least.
    public var minBodyBytes: Int?
    /// Largest body size as framed; nil: no largest (`--max-body-bytes` still bounds what is framed).
    public var maxBodyBytes: Int?

    public init() {}

    /// The filters, each named as its option is (without `--`): what the statistics and a skipped stub say.
    public enum Filter: String, Sendable, CaseIterable {
        case status = "select-status"
        case type = "select-type"
        case url = "select-url"
        case urlRegex = "select-url-regex"
        case minBodyBytes = "select-min-body-bytes"
        case maxBodyBytes = "select-max-body-bytes"
    }

    /// No filter is set: every record is decoded.
    public var selectsAll: Bool {
        statuses == nil && types == nil && urlGlob == nil && urlRegex == nil && minBodyBytes == nil
            && maxBodyBytes == nil
    }

    /// The first filter `record` fails, checked cheapest first (sizes, status, type, URL glob, URL regex), or nil
    /// when it passes them all (docs/output.md#selecting-records).
    public func rejection(of record: ResponseRecord) -> Filter? {
        if let minBodyBytes, record.body.count < minBodyBytes { return .minBodyBytes }
        if let maxBodyBytes, record.body.count > maxBodyBytes { return .maxBodyBytes }
        if let statuses, !statuses.contains(record.status) { return .status }
        if let types {
            // The last Content-Type field counts, as for decoding (docs/decoding.md#mime-type).
            let mimeType = record.headers.values("Content-Type").last.flatMap(MediaType.mimeType(ofContentType:))
            if !types.contains(where: { Self.typeMatches($0, mimeType) }) { return .type }
        }
        if urlGlob != nil || urlRegex != nil {
            // A record without a URL (raw HTTP streams) matches no URL filter.
            guard let url = record.url, !url.utf8.contains(0) else { return urlGlob != nil ? .url : .urlRegex }
            if let urlGlob, !Self.urlGlobMatches(urlGlob, url) { return .url }
            if let urlRegex, !urlRegex.matches(url) { return .urlRegex }
        }
        return nil
    }

    /// Whether the glob `pattern` matches the whole of `url` (fnmatch(3) without flags: `*` matches `/` too).
    static func urlGlobMatches(_ pattern: String, _ url: String) -> Bool {
        fnmatch(pattern, url, 0) == 0
    }

    /// Whether the MIME type pattern `pattern` matches `mimeType` (`none`: a record without a MIME type).
    static func typeMatches(_ pattern: String, _ mimeType: String?) -> Bool {
        guard let mimeType else { return pattern == "none" }
        // Both are lowercase (MediaType.mimeType lowercases the essence; the patterns are lowercased when parsed).
        return fnmatch(pattern, mimeType, 0) == 0
    }

    /// Parses `--select-type`'s comma-separated list of MIME type patterns (`image/*`, `text/html`, `none`).
    /// - Returns: the patterns, lowercased, or a message saying what is wrong.
    public static func typePatterns(parsing text: String) -> Result<[String], SelectionError> {
        var patterns: [String] = []
        for part in text.split(separator: ",") {
            let pattern = String(part.trimmingOWS()).lowercased()
            guard pattern == "none" || pattern.contains("/") else {
                return .failure(
                    SelectionError(
                        "--select-type: '\(pattern)' is not a MIME type pattern (type/subtype, globs allowed, "
                            + "or none)"))
            }
            patterns.append(pattern)
        }
        guard !patterns.isEmpty else { return .failure(SelectionError("--select-type names no MIME type")) }
        return .success(patterns)
    }
}

/// Why a selection option's value was refused.
public struct SelectionError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A compiled POSIX extended regular expression for `--select-url-regex` (glibc's regcomp(3)/regexec(3), not Swift
/// Regex: a URL is matched on every record, and glibc's automaton is the fast one).
///
/// glibc's regexec locks the compiled expression for the whole match, so one `regex_t` shared by every worker would
/// serialize them: each match takes a compiled copy from a small pool (at most one per thread matching at once) and
/// puts it back.
///
/// glibc's search for a match anywhere starts the matcher at every position, which costs the square of the URL's
/// length for expressions such as `[a-z]+\.png$` (4.8 s for a 64 KiB URL of letters, measured): the expression is
/// compiled as `^.*(EXPRESSION)` instead, one pass from the start, which matches the same URLs (`REG_NOSUB`: only
/// whether it matches counts) in linear time (2 ms for 1 MiB). Wrapping it needs balanced parentheses, and
/// backreferences (a GNU extension that makes matching exponential) would be renumbered: both are refused.
public final class URLRegex: @unchecked Sendable {
    /// The expression as written.
    public let pattern: String
    /// What is compiled: `^.*(pattern)`.
    private let anchored: String
    /// Guards `pool` (Records/Lock.swift).
    private let lock = Lock()
    private var pool: [UnsafeMutablePointer<regex_t>] = []

    /// Compiles `pattern`; throws regerror(3)'s message when it is not a valid extended regular expression.
    public init(_ pattern: String) throws(SelectionError) {
        self.pattern = pattern
        anchored = "^.*(" + pattern + ")"
        guard !pattern.utf8.contains(0) else { throw SelectionError("--select-url-regex holds a NUL byte") }
        // The expression as written must compile (regerror's message is about it), then its anchored form.
        switch Self.compile(pattern) {
        case .success(let regex):
            regfree(regex)
            regex.deallocate()
        case .failure(let error): throw error
        }
        if let problem = Self.wrappingProblem(pattern) {
            throw SelectionError("--select-url-regex '\(pattern)': \(problem)")
        }
        switch Self.compile(anchored) {
        case .success(let regex): pool.append(regex)
        case .failure(let error): throw error
        }
    }

    /// Why `pattern` cannot be wrapped in a group unchanged: a `)` that closes no group (ERE takes it literally), or a
    /// backreference. Bracket expressions (`[…]`, where `)` and `\` are plain) and escapes are skipped.
    static func wrappingProblem(_ pattern: String) -> String? {
        let bytes = Array(pattern.utf8)
        var depth = 0
        var i = 0
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "\\"):
                if i + 1 < bytes.count, (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[i + 1]) {
                    return "backreferences are not supported"
                }
                i += 2
                continue
            case UInt8(ascii: "["):
                // `[`, an optional `^`, a `]` taken literally when first, then up to the closing `]` (skipping
                // `[:class:]`, `[=e=]` and `[.c.]`).
                i += 1
                if i < bytes.count && bytes[i] == UInt8(ascii: "^") { i += 1 }
                if i < bytes.count && bytes[i] == UInt8(ascii: "]") { i += 1 }
                while i < bytes.count && bytes[i] != UInt8(ascii: "]") {
                    if bytes[i] == UInt8(ascii: "["), i + 1 < bytes.count,
                        [UInt8(ascii: ":"), UInt8(ascii: "="), UInt8(ascii: ".")].contains(bytes[i + 1])
                    {
                        let close = bytes[i + 1]
                        i += 2
                        while i + 1 < bytes.count && !(bytes[i] == close && bytes[i + 1] == UInt8(ascii: "]")) {
                            i += 1
                        }
                        i += 2
                        continue
                    }
                    i += 1
                }
            case UInt8(ascii: "("): depth += 1
            case UInt8(ascii: ")"):
                depth -= 1
                if depth < 0 { return "a ')' closes no group (write \\) for a parenthesis)" }
            default: break
            }
            i += 1
        }
        return nil
    }

    deinit {
        for regex in pool {
            regfree(regex)
            regex.deallocate()
        }
    }

    private static func compile(_ pattern: String) -> Result<UnsafeMutablePointer<regex_t>, SelectionError> {
        let regex = UnsafeMutablePointer<regex_t>.allocate(capacity: 1)
        let status = regcomp(regex, pattern, REG_EXTENDED | REG_NOSUB)
        guard status == 0 else {
            var message = [CChar](repeating: 0, count: 256)
            regerror(status, regex, &message, message.count)
            regex.deallocate()
            let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .failure(
                SelectionError(
                    "--select-url-regex '\(pattern)' is not a POSIX extended regular "
                        + "expression: \(text)"))
        }
        return .success(regex)
    }

    /// Whether the expression matches somewhere in `url`.
    public func matches(_ url: String) -> Bool {
        let regex: UnsafeMutablePointer<regex_t>? = lock.withLock { pool.popLast() }
        guard let regex = regex ?? (try? Self.compile(anchored).get()) else { return false }
        let matched = regexec(regex, url, 0, nil, 0) == 0
        lock.withLock { pool.append(regex) }
        return matched
    }
}
