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
            if let urlGlob, fnmatch(urlGlob, url, 0) != 0 { return .url }
            if let urlRegex, !urlRegex.matches(url) { return .urlRegex }
        }
        return nil
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
public final class URLRegex: @unchecked Sendable {
    /// The expression as written.
    public let pattern: String
    // A plain mutex, not the runtime's Monitor: selection sits below the runtime (LayeringTests).
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var pool: [UnsafeMutablePointer<regex_t>] = []

    /// Compiles `pattern`; throws regerror(3)'s message when it is not a valid extended regular expression.
    public init(_ pattern: String) throws(SelectionError) {
        self.pattern = pattern
        pthread_mutex_init(mutex, nil)
        guard !pattern.utf8.contains(0) else { throw SelectionError("--select-url-regex holds a NUL byte") }
        switch Self.compile(pattern) {
        case .success(let regex): pool.append(regex)
        case .failure(let error): throw error
        }
    }

    deinit {
        for regex in pool {
            regfree(regex)
            regex.deallocate()
        }
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    private func locked<R>(_ body: () -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
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
        let regex: UnsafeMutablePointer<regex_t>? = locked { pool.popLast() }
        guard let regex = regex ?? (try? Self.compile(pattern).get()) else { return false }
        let matched = regexec(regex, url, 0, nil, 0) == 0
        locked { pool.append(regex) }
        return matched
    }
}
