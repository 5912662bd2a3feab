public import RespDecode

/// What `respdecode serve` is told beyond the decode options (docs/sidecar.md): where to listen, and the bounds that
/// keep clients from holding the server.
public struct ServeSettings: Sendable {
    /// The stream protocol's address (records in, lines out on the same connection), if any.
    public var stream: ListenAddress?
    /// The HTTP API's address, if any.
    public var http: ListenAddress?
    /// Connections open at once on each listener; beyond, new ones wait in the listen backlog.
    public var maxConnections = 10_000
    /// Seconds a connection may send nothing in the middle of a stream or a request (or between requests), or read
    /// none of its lines, before it is closed; nil: never.
    public var idleTimeout: Double? = 300
    /// Seconds a new connection has to send its first byte (and an HTTP connection between requests, its next
    /// request's first byte: the smaller of this and the idle timeout applies then).
    public var firstByteTimeout: Double? = 10
    /// Seconds an HTTP request's head may take to arrive from its first byte (slowloris).
    public var headerTimeout: Double? = 10
    /// Largest HTTP request body, in bytes: 413 beyond.
    public var maxRequestBytes = 256 << 20
    /// HTTP requests decoding at once: 503 with Retry-After beyond.
    public var maxRequests = 64
    /// The bearer token every request but /healthz and /readyz must carry (from `--auth-token-file`); nil: none.
    public var authToken: [UInt8]?
    /// Seconds a drain (SIGTERM) waits for requests and streams in flight before the process exits anyway.
    public var drainTimeout: Double = 30
    /// What a request's query options make of the server's configuration (docs/sidecar.md#query-options): the
    /// executable's option parser, so that an option is declared once. Throws ``RequestOptionError``.
    public var requestConfiguration: @Sendable ([(name: String, value: String)]) throws -> Configuration

    public init(requestConfiguration: @escaping @Sendable ([(name: String, value: String)]) throws -> Configuration) {
        self.requestConfiguration = requestConfiguration
    }
}

/// A query option a request may not give, or gives wrongly: the request is answered 400 with the message.
public struct RequestOptionError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
