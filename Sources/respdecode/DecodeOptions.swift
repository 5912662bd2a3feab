import ArgumentParser
import Logging
import RespDecode

/// Every option of decoding: what `respdecode [OPTIONS] [FILE ...]` takes besides its files, shared by every
/// subcommand that decodes or describes decoding (`config`, `frame`, `serve`). An option is declared once: its
/// property here (name, help, value type, default read from the configuration types) and its row in ``table``
/// (config file key, range, how it sets the ``Configuration``, how `respdecode config` prints it).
///
/// Every flag has a `--no-` form and the last of the two wins: a config file's flags come before the command line's
/// (see ``Invocation``), so that the command line can turn off what the file turns on.
struct DecodeOptions: ParsableArguments {
    /// Where every option's default comes from: the configuration types' own (``Configuration``, ``Limits``,
    /// ``DecoderOptions``), so that --help, `respdecode config` and docs/options.md show the values that apply.
    static let defaults = Configuration()
    /// The defaults of the two options that are no setting of the configuration (`--strict`, `--log-level`).
    static let defaultStrict = false
    static let defaultLogLevel = Logger.Level.warning

    @Option(
        help: ArgumentHelp(
            "Read options from this JSON file: an object whose keys are the long option names "
                + "(\"max-depth\": 64); options given on the command line win. 'respdecode config' prints one.",
            valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("How input is framed.", valueName: "format"))
    var input = defaults.input

    @Option(
        help: ArgumentHelp(
            "WARC record types that become lines, comma-separated, or 'all' (the others are skipped "
                + "and counted): \(warcTypeNames.joined(separator: ", ")). Default: "
                + "\(warcTypesText(defaults.warcTypes)); \(warcTypesText(CDXJWriter.recordTypes)) when an index is "
                + "written (--output cdxj, --index-file), as cdxj-indexer indexes.", valueName: "types"))
    var warcTypes: String?

    // Selection (docs/output.md#selecting-records): records that fail a filter are skipped before decoding.

    @Option(
        help: ArgumentHelp(
            "Decode only records with these status codes: codes, ranges and classes (200,3xx,400-499). "
                + "Default: every status.", valueName: "list"))
    var selectStatus: StatusCodeSet?

    @Option(
        help: ArgumentHelp(
            "Decode only records whose Content-Type's MIME type matches one of these globs (image/*,text/html; "
                + "'none': no Content-Type). Default: every type.", valueName: "types"))
    var selectType: String?

    @Option(
        help: ArgumentHelp(
            "Decode only records whose whole URL matches this glob (fnmatch; * matches / too). Default: every URL.",
            valueName: "glob"))
    var selectUrl: String?

    @Option(
        help: ArgumentHelp(
            "Decode only records whose URL this POSIX extended regular expression matches (anywhere; anchor with "
                + "^ and $). Default: every URL.", valueName: "regex"))
    var selectUrlRegex: String?

    @Option(
        help: ArgumentHelp(
            "Decode only records whose body as framed has at least this many bytes. Default: no least.",
            valueName: "size"))
    var selectMinBodyBytes: ByteSize?

    @Option(
        help: ArgumentHelp(
            "Decode only records whose body as framed has at most this many bytes. Default: no largest.",
            valueName: "size"))
    var selectMaxBodyBytes: ByteSize?

    @Flag(
        inversion: .prefixedNo,
        help: "Check WARC-Payload-Digest and report \"digest\" (--no-digest-check saves a SHA-1 over every payload).")
    var digestCheck = defaults.verifyDigests

    @Flag(
        inversion: .prefixedNo,
        help: "A WARC payload digest mismatch is a digestMismatch error on the line (the value is still decoded).")
    var strictDigests = defaults.decoding.strictDigests

    @Flag(
        inversion: .prefixedNo,
        help: ArgumentHelp(
            "Take a missing or application/octet-stream MIME type from the "
                + "body's first bytes (the line says \"sniffed\": true)."))
    var sniff = defaults.decoding.sniff

    @Option(help: ArgumentHelp("Decoders to try, in order (available: \(availableDecoders)).", valueName: "names"))
    var chain = defaults.decoding.chain.map(\.decoder.name).joined(separator: ",")

    @Option(
        name: .customLong("accept"),
        help: ArgumentHelp(
            "Replace a decoder's acceptable MIME types, e.g. json=application/json,application/*+json. Wildcards: "
                + "type/*, */*, */*+suffix. Repeatable. Default: each decoder's own types.",
            valueName: "decoder=types"))
    var accept: [String] = []

    @Option(help: ArgumentHelp("Acceptable status codes, as codes, ranges and classes (2xx).", valueName: "list"))
    var statusCodes = defaults.decoding.acceptableStatusCodes

    @Flag(
        inversion: .prefixedNo,
        help: "A MIME type that no decoder accepts is an unacceptableContentType error instead of a raw value.")
    var strictTypes = defaults.decoding.strictTypes

    @Flag(
        inversion: .prefixedNo,
        help: "Keep null members and null array elements in JSON values (they are removed by default).")
    var keepNulls = !defaults.decoding.options.stripNulls

    @Flag(
        inversion: .prefixedNo,
        help: "Keep whitespace-only text between XML elements as text children (dropped by default).")
    var xmlKeepWhitespace = defaults.decoding.options.xmlKeepWhitespace

    @Flag(
        inversion: .prefixedNo,
        help: ArgumentHelp(
            "Decode PNG and JPEG images in full to RGBA8 and report the byte "
                + "count, mean colour and dHash (AFNetworking's automaticallyInflatesResponseImage). Default: metadata from "
                + "the headers only."))
    var inflate = defaults.decoding.options.imageInflate

    @Flag(
        inversion: .prefixedNo,
        help: "Write the visible text of HTML pages (\"text\") in html values.")
    var htmlText = defaults.decoding.options.htmlText

    @Flag(
        inversion: .prefixedNo,
        help: "Write the links of HTML pages (\"links\") in html values.")
    var htmlLinks = defaults.decoding.options.htmlLinks

    @Flag(
        inversion: .prefixedNo,
        help: "Detect the language of html and text values with CLD2 (\"languages\").")
    var detectLanguage = defaults.decoding.options.detectLanguage

    @Option(help: ArgumentHelp("Most bytes of text an html or text value keeps.", valueName: "size"))
    var maxTextBytes = ByteSize(defaults.limits.maxTextBytes)

    @Option(help: ArgumentHelp("Most links an html value lists.", valueName: "n"))
    var maxHtmlLinks = defaults.limits.maxHTMLLinks

    @Option(help: ArgumentHelp("Most parts a record's multipart value lists, at every depth together.", valueName: "n"))
    var maxMultipartParts = defaults.limits.maxMultipartParts

    @Option(help: ArgumentHelp("Most multipart bodies nested in one another (the record's counts).", valueName: "n"))
    var maxMultipartDepth = defaults.limits.maxMultipartDepth

    @Option(
        help: ArgumentHelp(
            "AFNetworking's imageScale: add pointWidth/pointHeight (pixels divided by this) to image "
                + "values. Default: none.", valueName: "factor"))
    var scale: Double?

    @Option(
        help: ArgumentHelp(
            "Most pixels (width x height) an image may have to be decoded with --inflate.",
            valueName: "n"))
    var maxImagePixels = defaults.limits.maxImagePixels

    @Option(help: ArgumentHelp("Most scans of a progressive JPEG decoded with --inflate.", valueName: "n"))
    var maxJpegScans = defaults.limits.maxJPEGScans

    @Option(
        help: ArgumentHelp(
            "Most pixels a progressive JPEG's scans may cover together (scans x width x height) "
                + "with --inflate.", valueName: "n"))
    var maxJpegScanPixels = defaults.limits.maxJPEGScanPixels

    @Option(help: ArgumentHelp("Most memory libjpeg may use for one image.", valueName: "size"))
    var maxImageMemory = ByteSize(defaults.limits.maxImageMemory)

    @Option(help: ArgumentHelp("Largest PNG text or ICC chunk after decompression.", valueName: "size"))
    var maxImageChunkBytes = ByteSize(defaults.limits.maxImageChunkBytes)

    @Option(
        help: ArgumentHelp(
            "Line format: ndjson, pretty, or cdxj (a CDXJ index line per indexed WARC record, as cdxj-indexer "
                + "writes it).", valueName: "style"))
    var output = defaults.outputStyle

    @Option(
        help: ArgumentHelp(
            "Write only these top-level keys of each line, comma-separated (seq,url,status,…; not with --output "
                + "cdxj). Default: every key.", valueName: "keys"))
    var fields: String?

    @Option(
        help: ArgumentHelp(
            "Also write a CDXJ index of the records to this file, in the same pass (the lines still go to "
                + "standard output). Default: none.", valueName: "file"))
    var indexFile: String?

    @Flag(
        inversion: .prefixedNo,
        help: ArgumentHelp(
            "A WARC revisit whose payload digest matches a response or resource read earlier in the run gets "
                + "\"revisitOf\" (that line's seq, input and offset). Needs revisit in --warc-types."))
    var resolveRevisits = defaults.resolveRevisits

    @Option(
        help: ArgumentHelp(
            "Most payload digests --resolve-revisits keeps; past it the oldest is forgotten.", valueName: "n"))
    var maxRevisitDigests = defaults.maxRevisitDigests

    @Option(
        help: ArgumentHelp(
            "Largest response header section (also each chunk-size line and trailer section).",
            valueName: "size"))
    var maxHeaderBytes = ByteSize(defaults.limits.maxHeaderBytes)

    @Option(help: ArgumentHelp("Largest body as framed (after de-chunking).", valueName: "size"))
    var maxBodyBytes = ByteSize(defaults.limits.maxBodyBytes)

    @Option(
        help: ArgumentHelp(
            "Largest body after Content-Encoding is undone (every coding's output counts).",
            valueName: "size"))
    var maxDecodedBodyBytes = ByteSize(defaults.limits.maxDecodedBodyBytes)

    @Option(
        help: ArgumentHelp(
            "Most content codings a Content-Encoding list may stack (identity does not count).",
            valueName: "n"))
    var maxContentCodings = defaults.limits.maxContentCodings

    @Option(
        help: ArgumentHelp(
            "Deepest nesting of JSON arrays and objects, XML and HTML elements, plist containers, and msgpack and CBOR "
                + "arrays, maps and tags.",
            valueName: "n"))
    var maxDepth = defaults.limits.maxDepth

    @Option(
        help: ArgumentHelp(
            "Most objects a property list may expand to (a shared object counts at each use).",
            valueName: "n"))
    var maxPlistObjects = defaults.limits.maxPlistObjects

    @Option(
        help: ArgumentHelp(
            "Deepest nesting of protobuf messages guessed in length-delimited fields, and of groups.",
            valueName: "n"))
    var maxProtobufDepth = defaults.limits.maxProtobufDepth

    @Option(
        help: ArgumentHelp(
            "Largest JSON value of one body's decoder (guards entity, shared-object and binary-to-JSON "
                + "expansion; json and ndjson values are never longer than their body); in an html value, of the "
                + "fields other than its text.", valueName: "size"))
    var maxValueBytes = ByteSize(defaults.limits.maxValueBytes)

    @Option(help: ArgumentHelp("Most name-value pairs of a form (x-www-form-urlencoded) body.", valueName: "n"))
    var maxFormFields = defaults.limits.maxFormFields

    @Option(help: ArgumentHelp("Most events and comments of an event stream (text/event-stream).", valueName: "n"))
    var maxEvents = defaults.limits.maxEvents

    @Option(
        help: ArgumentHelp(
            "Most values of an NDJSON, JSON Lines or JSON text sequence body.", valueName: "n"))
    var maxNdjsonValues = defaults.limits.maxNDJSONValues

    @Option(
        help: ArgumentHelp(
            "Most bytes a compressed WARC entry of a WACZ may inflate to per byte stored (entries up to 1 MiB "
                + "always may); also caps all WARC entries of an archive together, per byte of the archive.",
            valueName: "n"))
    var maxArchiveRatio = defaults.limits.maxArchiveRatio

    @Option(help: ArgumentHelp("Largest WARC entry of a WACZ, as inflated.", valueName: "size"))
    var maxArchiveEntryBytes = ByteSize(defaults.limits.maxArchiveEntryBytes)

    @Option(help: ArgumentHelp("Most bytes of a failing body kept in a line's \"body\".", valueName: "size"))
    var maxErrorBodyBytes = ByteSize(defaults.limits.maxErrorBodyBytes)

    @Option(
        help: ArgumentHelp(
            "Most warnings one line keeps; the last one kept says how many more there were.",
            valueName: "n"))
    var maxWarnings = defaults.limits.maxWarnings

    @Flag(inversion: .prefixedNo, help: "Exit 1 when any line has \"ok\": false.")
    var strict = defaultStrict

    @Option(help: ArgumentHelp("Least severe log messages written to standard error.", valueName: "level"))
    var logLevel = defaultLogLevel

    @Option(
        help: ArgumentHelp(
            "Records decoded at once, in parallel. (default: the number of cores "
                + "this process may run on, \(defaults.jobs) here)", valueName: "n"))
    var jobs: Int?

    @Flag(inversion: .prefixedNo, help: "Print a run summary on standard error at the end.")
    var stats = defaults.stats

    @Option(
        help: ArgumentHelp(
            "Print the run summary as a JSON line on standard error every this many seconds "
                + "(fractions allowed). Default: never.", valueName: "seconds"))
    var statsInterval: Double?

    /// Every option but --config, in the order of --help: its config file key, its range, how it sets a
    /// ``Configuration`` and how `respdecode config` prints it. An option is its property above and its row here.
    static let table: [OptionRow] = [
        .value("input", \.input, \.input),
        OptionRow(
            name: "warc-types", shape: .list, range: nil, check: { _ = try $0.warcTypeSet() },
            apply: {
                $1.warcTypes =
                    $0.warcTypes == nil ? Self.defaultWARCTypes(indexing: $0.writesIndex) : try $0.warcTypeSet()
            },
            effective: {
                $0.configuration.warcTypes.map { .strings(warcTypeNames.filter($0.contains)) } ?? .string("all")
            }),
        OptionRow(
            name: "select-status", shape: .list, range: nil, check: { _ in },
            apply: { $1.decoding.selection.statuses = $0.selectStatus },
            effective: { $0.configuration.decoding.selection.statuses?.configValue ?? .null }),
        OptionRow(
            name: "select-type", shape: .list, range: nil,
            check: { if let text = $0.selectType { _ = try RecordSelection.typePatterns(parsing: text).get() } },
            apply: { options, configuration in
                configuration.decoding.selection.types = try options.selectType.map {
                    try RecordSelection.typePatterns(parsing: $0).get()
                }
            },
            effective: { $0.configuration.decoding.selection.types.map { .strings($0) } ?? .null }),
        OptionRow(
            name: "select-url", shape: .value, range: nil,
            check: { if $0.selectUrl == "" { throw ValidationError("--select-url is empty") } },
            apply: { $1.decoding.selection.urlGlob = $0.selectUrl },
            effective: { $0.configuration.decoding.selection.urlGlob.map { .string($0) } ?? .null }),
        OptionRow(
            name: "select-url-regex", shape: .value, range: nil,
            check: { if let pattern = $0.selectUrlRegex { _ = try URLRegex(pattern) } },
            apply: { options, configuration in
                configuration.decoding.selection.urlRegex = try options.selectUrlRegex.map { try URLRegex($0) }
            },
            effective: { $0.configuration.decoding.selection.urlRegex.map { .string($0.pattern) } ?? .null }),
        .optionalSize(
            "select-min-body-bytes", \.selectMinBodyBytes, setting: \.decoding.selection.minBodyBytes),
        .optionalSize(
            "select-max-body-bytes", \.selectMaxBodyBytes, setting: \.decoding.selection.maxBodyBytes),
        .flag("digest-check", \.digestCheck, \.verifyDigests),
        .flag("strict-digests", \.strictDigests, \.decoding.strictDigests),
        .flag("sniff", \.sniff, \.decoding.sniff),
        OptionRow(
            name: "chain", shape: .list, range: nil, check: { _ = try $0.chainEntries() },
            apply: { $1.decoding.chain = try $0.chainEntries() },
            effective: { .strings($0.configuration.decoding.chain.map(\.decoder.name)) }),
        // Applied with --chain. Only the decoders whose types were replaced are printed: a file that lists every
        // decoder of the chain would make a command line that narrows --chain an error (--accept must name decoders
        // of the chain).
        OptionRow(
            name: "accept", shape: .decoderLists, range: nil, check: { _ in }, apply: { _, _ in },
            effective: { effective in
                .object(
                    effective.configuration.decoding.chain
                        .filter { $0.acceptableTypes != $0.decoder.defaultAcceptableTypes }
                        .map { ConfigFile.Field($0.decoder.name, .strings($0.acceptableTypes.map(\.description))) })
            }),
        .value("status-codes", \.statusCodes, \.decoding.acceptableStatusCodes, shape: .list),
        .flag("strict-types", \.strictTypes, \.decoding.strictTypes),
        .flag("keep-nulls", \.keepNulls, \.decoding.options.stripNulls, inverted: true),
        .flag("xml-keep-whitespace", \.xmlKeepWhitespace, \.decoding.options.xmlKeepWhitespace),
        .flag("inflate", \.inflate, \.decoding.options.imageInflate),
        .flag("html-text", \.htmlText, \.decoding.options.htmlText),
        .flag("html-links", \.htmlLinks, \.decoding.options.htmlLinks),
        .flag("detect-language", \.detectLanguage, \.decoding.options.detectLanguage),
        .size("max-text-bytes", \.maxTextBytes, \.limits.maxTextBytes),
        .value("max-html-links", \.maxHtmlLinks, \.limits.maxHTMLLinks, 0...100_000_000),
        .value("max-multipart-parts", \.maxMultipartParts, \.limits.maxMultipartParts, 1...100_000_000),
        .value("max-multipart-depth", \.maxMultipartDepth, \.limits.maxMultipartDepth, 1...1000),
        .optional(
            "scale", \.scale, 0.001...1000, apply: { $1.decoding.options.imageScale = $0 },
            effective: { $0.decoding.options.imageScale?.configValue ?? .null }),
        .value("max-image-pixels", \.maxImagePixels, \.limits.maxImagePixels, 1...(1 << 40)),
        .value("max-jpeg-scans", \.maxJpegScans, \.limits.maxJPEGScans, 1...1_000_000),
        .value("max-jpeg-scan-pixels", \.maxJpegScanPixels, \.limits.maxJPEGScanPixels, 1...(1 << 50)),
        .size("max-image-memory", \.maxImageMemory, \.limits.maxImageMemory),
        .size("max-image-chunk-bytes", \.maxImageChunkBytes, \.limits.maxImageChunkBytes),
        .value("output", \.output, \.outputStyle),
        OptionRow(
            name: "fields", shape: .list, range: nil,
            check: { options in
                guard let text = options.fields else { return }
                _ = try OutputFields.parsing(text).get()
                if options.output == .cdxj {
                    throw ValidationError("--fields chooses the keys of result lines; --output cdxj writes index lines")
                }
            },
            apply: { options, configuration in
                configuration.decoding.fields = try options.fields.map { try OutputFields.parsing($0).get() } ?? .all
            },
            effective: { effective in
                let fields = effective.configuration.decoding.fields
                return fields == .all ? .null : .strings(fields.names.split(separator: ",").map(String.init))
            }),
        OptionRow(
            name: "index-file", shape: .value, range: nil,
            check: { if $0.indexFile == "" { throw ValidationError("--index-file names no file") } },
            apply: { $1.indexFile = $0.indexFile },
            effective: { $0.configuration.indexFile.map { .string($0) } ?? .null }),
        .flag("resolve-revisits", \.resolveRevisits, \.resolveRevisits),
        .value("max-revisit-digests", \.maxRevisitDigests, \.maxRevisitDigests, 1...(1 << 30)),
        .size("max-header-bytes", \.maxHeaderBytes, \.limits.maxHeaderBytes),
        .size("max-body-bytes", \.maxBodyBytes, \.limits.maxBodyBytes),
        .size("max-decoded-body-bytes", \.maxDecodedBodyBytes, \.limits.maxDecodedBodyBytes),
        .value("max-content-codings", \.maxContentCodings, \.limits.maxContentCodings, 0...100),
        .value("max-depth", \.maxDepth, \.limits.maxDepth, 1...1_000_000),
        .value("max-plist-objects", \.maxPlistObjects, \.limits.maxPlistObjects, 1...(1 << 40)),
        .value("max-protobuf-depth", \.maxProtobufDepth, \.limits.maxProtobufDepth, 1...64),
        .size("max-value-bytes", \.maxValueBytes, \.limits.maxValueBytes),
        .value("max-form-fields", \.maxFormFields, \.limits.maxFormFields, 1...(1 << 40)),
        .value("max-events", \.maxEvents, \.limits.maxEvents, 1...(1 << 40)),
        .value("max-ndjson-values", \.maxNdjsonValues, \.limits.maxNDJSONValues, 1...(1 << 40)),
        .value("max-archive-ratio", \.maxArchiveRatio, \.limits.maxArchiveRatio, 1...1_000_000),
        .size("max-archive-entry-bytes", \.maxArchiveEntryBytes, \.limits.maxArchiveEntryBytes),
        .size("max-error-body-bytes", \.maxErrorBodyBytes, \.limits.maxErrorBodyBytes),
        .value("max-warnings", \.maxWarnings, \.limits.maxWarnings, 1...10_000),
        .commandLine("strict", .flag) { .bool($0.strict) },
        .commandLine("log-level", .value) { $0.logLevel.configValue },
        .optional("jobs", \.jobs, 1...1024, apply: { $1.jobs = $0 }, effective: { $0.jobs.configValue }),
        .flag("stats", \.stats, \.stats),
        .optional(
            "stats-interval", \.statsInterval, Double.leastNonzeroMagnitude...86400,
            saying: "a number of seconds above 0 and at most 86400", apply: { $1.statsInterval = $0 },
            effective: { $0.statsInterval?.configValue ?? .null }),
    ]

    /// The record types of WARC 1.1 (§6).
    static let warcTypeNames = [
        "warcinfo", "response", "resource", "request", "metadata", "revisit", "conversion", "continuation",
    ]

    static var availableDecoders: String { DecoderRegistry.all.map(\.name).joined(separator: ", ") }

    /// The configuration of a run given no option: what ``makeConfiguration()`` makes from the defaults, since every
    /// option's default is the configuration's own.
    static var plainConfiguration: Configuration { Configuration() }

    /// The configuration the options make: the defaults with each option's value set by its row.
    func makeConfiguration() throws -> Configuration {
        var configuration = Configuration()
        for row in Self.table { try row.apply(self, &configuration) }
        return configuration
    }

    /// Whether a CDXJ index is written (`--output cdxj`, `--index-file`): the default `--warc-types` is then
    /// cdxj-indexer's.
    var writesIndex: Bool { output == .cdxj || indexFile != nil }

    /// The record types when `--warc-types` is not given.
    static func defaultWARCTypes(indexing: Bool) -> Set<String>? {
        indexing ? CDXJWriter.recordTypes : defaults.warcTypes
    }

    /// `--warc-types` as a set; nil: all, or not given (see ``defaultWARCTypes(indexing:)``).
    func warcTypeSet() throws -> Set<String>? {
        guard let warcTypes else { return nil }
        if warcTypes == "all" { return nil }
        var types: Set<String> = []
        for name in warcTypes.split(separator: ",").map({ String($0.trimmingCharacters()).lowercased() }) {
            guard Self.warcTypeNames.contains(name) else {
                throw ValidationError(
                    "unknown WARC record type '\(name)' in --warc-types; expected 'all' or some of: "
                        + Self.warcTypeNames.joined(separator: ", "))
            }
            types.insert(name)
        }
        guard !types.isEmpty else { throw ValidationError("--warc-types names no record type") }
        return types
    }

    /// `--warc-types`' text for a set of types; nil: all.
    static func warcTypesText(_ types: Set<String>?) -> String {
        types.map { types in warcTypeNames.filter(types.contains).joined(separator: ",") } ?? "all"
    }

    /// `--chain`, with the acceptable types `--accept` replaces.
    func chainEntries() throws -> [ChainEntry] {
        var entries: [ChainEntry] = []
        for name in chain.split(separator: ",").map({ String($0.trimmingCharacters()) }) {
            guard let decoder = DecoderRegistry.decoder(named: name) else {
                throw ValidationError("unknown decoder '\(name)' in --chain; available: \(Self.availableDecoders)")
            }
            guard !entries.contains(where: { $0.decoder.name == name }) else {
                throw ValidationError("decoder '\(name)' appears twice in --chain")
            }
            entries.append(ChainEntry(decoder: decoder))
        }
        guard !entries.isEmpty else { throw ValidationError("--chain names no decoder") }
        for override in accept {
            let parts = override.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { throw ValidationError("--accept '\(override)' is not decoder=types") }
            let name = String(parts[0])
            guard let index = entries.firstIndex(where: { $0.decoder.name == name }) else {
                throw ValidationError("--accept names '\(name)', which is not in --chain")
            }
            var patterns: [MediaTypePattern] = []
            for text in parts[1].split(separator: ",") {
                guard let pattern = MediaTypePattern(String(text)) else {
                    throw ValidationError("--accept: '\(text)' is not a MIME type pattern (type/subtype)")
                }
                patterns.append(pattern)
            }
            entries[index].acceptableTypes = patterns
        }
        return entries
    }

    /// Checks every option as the command line is parsed (ArgumentParser calls this for an option group), so that a
    /// bad value is a usage error before anything is read, and a config file's values can be tried one at a time.
    /// Each row checks its own option; the configuration is made once, when the command runs.
    func validate() throws {
        for row in Self.table { try row.check(self) }
    }
}

extension Substring {
    fileprivate func trimmingCharacters() -> Substring {
        var s = self
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return s
    }
}
