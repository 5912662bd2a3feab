import CoreMetrics
internal import Metrics
import NIOConcurrencyHelpers
internal import Prometheus
internal import RespDecode

/// `GET /metrics`: what the server counts, through swift-metrics into a swift-prometheus registry, in Prometheus's
/// text format (docs/sidecar.md#metrics).
final class ServeMetrics: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let pool: JobPool

    // Made after swift-metrics is bootstrapped (in `init`): made before, they would report nowhere.
    private let records: CoreMetrics.Counter
    private let bytesIn: CoreMetrics.Counter
    private let bytesOut: CoreMetrics.Counter
    private let decodeTime: CoreMetrics.Timer
    private let queueDepth: CoreMetrics.Gauge
    private let decodingRequests: CoreMetrics.Gauge
    private let openCount = NIOLockedValueBox<[String: Int]>([:])

    /// The registry swift-metrics reports into: bootstrapped once per process (a second server in the same process,
    /// in tests, shares it).
    private static let shared: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Decoding a record takes microseconds to seconds.
        factory.durationHistogramBuckets["respdecode_decode_duration_seconds"] = [
            .microseconds(10), .microseconds(50), .microseconds(100), .microseconds(500), .milliseconds(1),
            .milliseconds(5), .milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(500),
            .seconds(1), .seconds(5),
        ]
        MetricsSystem.bootstrap(factory)
        return registry
    }()

    init(pool: JobPool) {
        registry = Self.shared
        self.pool = pool
        records = Counter(label: "respdecode_records_total")
        bytesIn = Counter(label: "respdecode_bytes_in_total")
        bytesOut = Counter(label: "respdecode_bytes_out_total")
        decodeTime = Timer(label: "respdecode_decode_duration_seconds")
        queueDepth = Gauge(label: "respdecode_queue_depth")
        decodingRequests = Gauge(label: "respdecode_http_requests_decoding")
    }

    /// A batch of lines went out.
    func delivered(_ report: BatchReport, bytes: Int) {
        records.increment(by: Int64(report.records))
        bytesOut.increment(by: Int64(bytes))
        for (decoder, count) in report.byDecoder {
            let ok = count.records - count.errors
            if ok > 0 {
                Counter(label: "respdecode_lines_total", dimensions: [("decoder", decoder), ("ok", "true")]).increment(
                    by: Int64(ok))
            }
            if count.errors > 0 {
                Counter(label: "respdecode_lines_total", dimensions: [("decoder", decoder), ("ok", "false")])
                    .increment(by: Int64(count.errors))
            }
        }
        for (code, count) in report.errorsByCode {
            Counter(label: "respdecode_errors_total", dimensions: [("code", code)]).increment(by: Int64(count))
        }
        for nanoseconds in report.decodeNanoseconds { decodeTime.recordNanoseconds(Int64(clamping: nanoseconds)) }
    }

    func received(bytes: Int) { bytesIn.increment(by: Int64(bytes)) }

    /// A connection opened (+1) or closed (-1) on a listener (`stream`, `http`).
    /// The gauge is set under the count's lock: set after it, a close on one event loop and an accept on another
    /// could land in the wrong order and leave the gauge one off until the next change.
    func connection(_ listener: String, _ change: Int) {
        openCount.withLockedValue { counts in
            counts[listener, default: 0] += change
            Gauge(label: "respdecode_open_connections", dimensions: [("listener", listener)])
                .record(counts[listener, default: 0])
        }
    }

    /// An HTTP request was answered.
    func answered(route: String, status: Int) {
        Counter(label: "respdecode_http_requests_total", dimensions: [("route", route), ("status", String(status))])
            .increment()
    }

    func decoding(_ count: Int) { decodingRequests.record(count) }

    /// The text of `GET /metrics`.
    func exposition() -> [UInt8] {
        queueDepth.record(pool.queueDepth)
        return registry.emitToBuffer()
    }
}
