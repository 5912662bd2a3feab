internal import CShims

/// Everything that decides how records are framed, decoded and written; filled by the command line and a config
/// file. Each default is the initial value of its property (or of the composed types' properties: ``Limits``,
/// ``DecoderOptions``, ``CompoundDecoder/Settings``), and only there: the options, `respdecode config` and
/// docs/options.md read the defaults from `Configuration()`.
public struct Configuration: Sendable {
    /// How input is framed.
    public var input: InputFormat = .auto
    /// WARC record types that become records (`--warc-types`); `nil`: every type. The others are skipped and counted.
    public var warcTypes: Set<String>? = ["response", "resource"]
    /// Check each WARC record's `WARC-Payload-Digest` and report `digest` (`--no-digest-check` turns it off).
    public var verifyDigests = true
    /// The chain, validation and the body decoders' options and limits: all the decoding stage is told.
    public var decoding = CompoundDecoder.Settings()
    /// Line format.
    public var outputStyle: OutputStyle = .ndjson
    /// Also write a CDXJ index of the records to this file, in the same pass (`--index-file`,
    /// docs/output.md#cdxj-index); nil: none.
    public var indexFile: String? = nil
    /// A revisit whose payload digest matches a response or resource read earlier in the run gets `revisitOf`
    /// (`--resolve-revisits`, docs/output.md#revisits).
    public var resolveRevisits = false
    /// The most payload digests `--resolve-revisits` keeps (`--max-revisit-digests`); the oldest goes first.
    public var maxRevisitDigests = 1_000_000
    /// Records decoded at once (`--jobs`): the number of cores the process may run on unless set.
    public var jobs = Configuration.defaultJobs
    /// Print a run summary on standard error at the end (`--stats`).
    public var stats = false
    /// Print the summary as a JSON line on standard error every this many seconds (`--stats-interval`); nil: never
    /// (SIGUSR1 still prints it at once).
    public var statsInterval: Double? = nil

    /// The defaults.
    public init() {}

    /// Bounds against hostile input, for every stage (framing reads them here): the decoders' limits.
    public var limits: Limits {
        get { decoding.options.limits }
        set { decoding.options.limits = newValue }
    }

    /// The cores this process may run on (its CPU affinity, which a container's cpuset narrows), at least 1.
    public static var defaultJobs: Int {
        Int(respdecode_usable_cpus())
    }
}

extension CompoundDecoder {
    /// The compound decoder of `configuration`'s decoding settings.
    public init(configuration: Configuration) {
        self.init(settings: configuration.decoding)
    }
}

/// How result lines are written (docs/output.md#pretty-output).
public enum OutputStyle: String, Sendable, CaseIterable {
    /// One compact JSON object per line.
    case ndjson
    /// Indented JSON objects, for people.
    case pretty
    /// A CDXJ index line per indexed WARC record, as webrecorder's cdxj-indexer writes it (docs/output.md#cdxj-index).
    case cdxj
}
