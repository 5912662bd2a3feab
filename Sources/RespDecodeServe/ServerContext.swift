internal import Glibc
import Logging
import NIOConcurrencyHelpers
import NIOCore
internal import RespDecode

/// What every connection of a server shares: the settings, the workers, the counts, and the registry of open
/// connections that a drain stops.
final class ServerContext: Sendable {
    let settings: ServeSettings
    let configuration: Configuration
    let pool: JobPool
    let statistics: Statistics
    let metrics: ServeMetrics
    let logger: Logger
    let requestOptions: RequestOptions

    private struct State {
        var connections: [Int: (drain: @Sendable () -> Void, close: @Sendable () -> Void)] = [:]
        var nextID = 1
        var draining = false
        var decoding = 0
        var whenEmpty: (@Sendable () -> Void)?
    }
    private let state = NIOLockedValueBox(State())

    init(
        settings: ServeSettings, configuration: Configuration, pool: JobPool, statistics: Statistics, logger: Logger
    ) {
        self.settings = settings
        self.configuration = configuration
        self.pool = pool
        self.statistics = statistics
        self.metrics = ServeMetrics(pool: pool)
        self.logger = logger
        self.requestOptions = RequestOptions(settings: settings)
    }

    /// Registers an open connection with what stops it in a drain (called on its loop, or at once if a drain has
    /// begun) and what closes it at once. Returns its number.
    func opened(drain: @escaping @Sendable () -> Void, close: @escaping @Sendable () -> Void) -> Int {
        let (id, draining) = state.withLockedValue { state in
            let id = state.nextID
            state.nextID += 1
            state.connections[id] = (drain, close)
            return (id, state.draining)
        }
        if draining { drain() }
        return id
    }

    func closed(_ id: Int) {
        let whenEmpty: (@Sendable () -> Void)? = state.withLockedValue { state in
            state.connections[id] = nil
            guard state.draining, state.connections.isEmpty, let whenEmpty = state.whenEmpty else { return nil }
            state.whenEmpty = nil
            return whenEmpty
        }
        whenEmpty?()
    }

    var isDraining: Bool { state.withLockedValue { $0.draining } }

    /// Stops every connection (each finishes what it has in flight) and calls `whenEmpty` once all have closed.
    func drain(whenEmpty: @escaping @Sendable () -> Void) {
        let (stops, empty) = state.withLockedValue { state -> ([@Sendable () -> Void], Bool) in
            state.draining = true
            if state.connections.isEmpty { return ([], true) }
            state.whenEmpty = whenEmpty
            return (state.connections.values.map(\.drain), false)
        }
        for stop in stops { stop() }
        if empty { whenEmpty() }
    }

    /// Closes every connection still open (after a drain that timed out) and waits up to `seconds` for them to go.
    func closeAll(within seconds: Double) {
        for close in state.withLockedValue({ $0.connections.values.map(\.close) }) { close() }
        var waited = 0.0
        while waited < seconds && state.withLockedValue({ !$0.connections.isEmpty }) {
            usleep(10_000)
            waited += 0.01
        }
    }

    /// Takes a place among the requests decoding at once (`--max-requests`); false when all are taken.
    /// The gauge is set under the lock, as ``ServeMetrics/connection(_:_:)`` says why.
    func startDecoding() -> Bool {
        state.withLockedValue { state in
            guard state.decoding < settings.maxRequests else { return false }
            state.decoding += 1
            metrics.decoding(state.decoding)
            return true
        }
    }

    func endDecoding() {
        state.withLockedValue { state in
            state.decoding -= 1
            metrics.decoding(state.decoding)
        }
    }

    /// Ready: not draining, a request may start decoding now, and the workers are not saturated.
    var isReady: Bool {
        state.withLockedValue { !$0.draining && $0.decoding < settings.maxRequests } && !pool.isSaturated
    }

    /// Seconds as a NIO amount.
    static func amount(_ seconds: Double) -> TimeAmount { .nanoseconds(Int64(seconds * 1e9)) }
}
