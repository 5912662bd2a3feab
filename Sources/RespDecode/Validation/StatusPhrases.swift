/// Reason phrases for AFNetworking's status error message (`Request failed: not found (404)`).
///
/// AFNetworking formats `[NSHTTPURLResponse localizedStringForStatusCode:]`, which Darwin gives in lower case. The
/// table is the one swift-corelibs-foundation 6.3.1 returns on Linux (read off by running it), lower-cased; codes
/// it does not list fall back, as it does, to the class phrase ("client error", "server error", …).
public enum StatusPhrases {
    public static func phrase(for status: Int) -> String {
        if let known = table[status] { return known }
        switch status {
        case 100..<200: return "informational"
        case 200..<300: return "success"
        case 300..<400: return "redirection"
        case 400..<500: return "client error"
        default: return "server error"
        }
    }

    private static let table: [Int: String] = [
        100: "continue", 101: "switching protocols", 102: "processing",
        200: "ok", 201: "created", 202: "accepted", 203: "non-authoritative information", 204: "no content",
        205: "reset content", 206: "partial content", 207: "multi-status", 208: "already reported", 226: "im used",
        300: "multiple choices", 301: "moved permanently", 302: "found", 303: "see other", 304: "not modified",
        305: "use proxy", 307: "temporary redirect", 308: "permanent redirect",
        400: "bad request", 401: "unauthorized", 402: "payment required", 403: "forbidden", 404: "not found",
        405: "method not allowed", 406: "not acceptable", 407: "proxy authentication required",
        408: "request timeout", 409: "conflict", 410: "gone", 411: "length required", 412: "precondition failed",
        413: "payload too large", 414: "uri too long", 415: "unsupported media type",
        416: "range not satisfiable", 417: "expectation failed", 421: "misdirected request",
        422: "unprocessable entity", 423: "locked", 424: "failed dependency", 426: "upgrade required",
        428: "precondition required", 429: "too many requests", 431: "request header fields too large",
        451: "unavailable for legal reasons",
        500: "internal server error", 501: "not implemented", 502: "bad gateway", 503: "service unavailable",
        504: "gateway timeout", 505: "http version not supported", 506: "variant also negotiates",
        507: "insufficient storage", 508: "loop detected", 510: "not extended", 511: "network authentication required",
    ]
}
