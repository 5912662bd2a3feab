internal import CShims

/// Everything that decides how records are decoded and written; filled by the command line (and, later, a config
/// file). Each property documents its default.
public struct Configuration: Sendable {
    /// How input is framed. Default: `.auto`.
    public var input: InputFormat
    /// The decoders tried in order, each with its acceptable MIME types. Default: every registered decoder.
    public var chain: [ChainEntry]
    /// Status codes that pass validation (AFNetworking's `acceptableStatusCodes`). Default: 200–299.
    public var acceptableStatusCodes: StatusCodeSet
    /// A MIME type that no decoder accepts is an `unacceptableContentType` error instead of a raw value.
    /// Default: false.
    public var strictTypes: Bool
    /// Remove null object members and null array elements from JSON values (AFNetworking 4's
    /// `removesKeysWithNullValues`). Default: true; `--keep-nulls` turns it off.
    public var stripNulls: Bool
    /// Keep whitespace-only text between XML elements as text children. Default: false (dropped).
    public var xmlKeepWhitespace: Bool
    /// Decode PNG and JPEG images in full to RGBA8 and report `decoded` (AFNetworking's
    /// `automaticallyInflatesResponseImage`). Default: false (metadata from the headers only).
    public var imageInflate: Bool
    /// AFNetworking's `imageScale`: when set, image values carry `pointWidth`/`pointHeight`. Default: nil (not
    /// written).
    public var imageScale: Double?
    /// WARC record types that become records (`--warc-types`); `nil`: every type. Default: `response` and
    /// `resource`; the others are skipped and counted.
    public var warcTypes: Set<String>?
    /// Check each WARC record's `WARC-Payload-Digest` and report `digest` (`--no-digest-check` turns it off).
    /// Default: true.
    public var verifyDigests: Bool
    /// A WARC payload digest mismatch is a `digestMismatch` error on the line (the value is still decoded), not
    /// only `"digest":"mismatch"`. Default: false.
    public var strictDigests: Bool
    /// A missing or `application/octet-stream` MIME type is taken from the body's first bytes (``Sniffing``).
    /// Default: false.
    public var sniff: Bool
    /// Line format. Default: `.ndjson`.
    public var outputStyle: OutputStyle
    /// Bounds against hostile input.
    public var limits: Limits
    /// Records decoded at once (`--jobs`). Default: the number of cores the process may run on.
    public var jobs: Int
    /// Print a run summary on standard error at the end (`--stats`). Default: false.
    public var stats: Bool
    /// Print the summary as a JSON line on standard error every this many seconds (`--stats-interval`).
    /// Default: nil (never; SIGUSR1 still prints it at once).
    public var statsInterval: Double?

    public init(
        input: InputFormat = .auto,
        chain: [ChainEntry] = DecoderRegistry.all.map { ChainEntry(decoder: $0) },
        acceptableStatusCodes: StatusCodeSet = .successful,
        strictTypes: Bool = false,
        stripNulls: Bool = true,
        xmlKeepWhitespace: Bool = false,
        imageInflate: Bool = false,
        imageScale: Double? = nil,
        warcTypes: Set<String>? = ["response", "resource"],
        verifyDigests: Bool = true,
        strictDigests: Bool = false,
        sniff: Bool = false,
        outputStyle: OutputStyle = .ndjson,
        limits: Limits = Limits(),
        jobs: Int = Configuration.defaultJobs,
        stats: Bool = false,
        statsInterval: Double? = nil
    ) {
        self.input = input
        self.chain = chain
        self.acceptableStatusCodes = acceptableStatusCodes
        self.strictTypes = strictTypes
        self.stripNulls = stripNulls
        self.xmlKeepWhitespace = xmlKeepWhitespace
        self.imageInflate = imageInflate
        self.imageScale = imageScale
        self.warcTypes = warcTypes
        self.verifyDigests = verifyDigests
        self.strictDigests = strictDigests
        self.sniff = sniff
        self.outputStyle = outputStyle
        self.limits = limits
        self.jobs = jobs
        self.stats = stats
        self.statsInterval = statsInterval
    }

    /// The cores this process may run on (its CPU affinity, which a container's cpuset narrows), at least 1.
    public static var defaultJobs: Int {
        Int(respdecode_usable_cpus())
    }
}

/// How input is framed (SPEC §2).
public enum InputFormat: String, Sendable, CaseIterable {
    /// Decided per input from its first bytes.
    case auto
    /// A stream of raw HTTP/1.x responses.
    case http
    /// WARC/1.0 or 1.1 records, plain or gzip (per record or as a whole).
    case warc
    /// A HAR 1.2 document.
    case har
    /// One JSON record object per line.
    case ndjson
}

/// How result lines are written (SPEC §4).
public enum OutputStyle: String, Sendable, CaseIterable {
    /// One compact JSON object per line.
    case ndjson
    /// Indented JSON objects, for people.
    case pretty
}
