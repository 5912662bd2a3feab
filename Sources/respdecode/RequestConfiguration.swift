import ArgumentParser
import Glibc
import RespDecode
import RespDecodeServe

/// What an HTTP request's query options make of the server's configuration (docs/sidecar.md#query-options): the
/// options a request may give are a fixed allow list, written as the command-line options they are (`chain=json,xml`
/// is `--chain json,xml`; a flag takes `true` or `false`), and parsed after the server's own command line by the
/// same parser, so an option is declared once and checked by the same code. A request may only lower a limit.
struct RequestConfiguration: Sendable {
    /// The server's configuration, whose limits a request may not raise.
    let base: Configuration
    /// The server's own arguments (`serve …`, its config file named there), parsed before the request's.
    let arguments: [String]

    init(base: Configuration, arguments: [String] = Array(CommandLine.arguments.dropFirst())) {
        self.base = base
        self.arguments = arguments
    }

    /// Options with a value.
    static let valued: [String] =
        [
            "input", "chain", "accept", "status-codes", "fields", "warc-types", "select-status", "select-type",
            // Not select-url-regex: compiling a request's regular expression (glibc's regcomp) can take seconds and a
            // gigabyte ("((a{1,100}){1,100}){1,100}"), on the event loop that parses the request.
            "select-url", "select-min-body-bytes", "select-max-body-bytes",
        ] + DecodeOptions.configKeys.map(\.name).filter { $0.hasPrefix("max-") && $0 != "max-revisit-digests" }
    /// Flags: `true` or `false`.
    static let flags: [String] = ["keep-nulls", "inflate"]

    func make(_ pairs: [(name: String, value: String)]) throws -> Configuration {
        var extra: [String] = []
        for (name, value) in pairs {
            if Self.flags.contains(name) {
                switch value {
                case "true", "1", "": extra.append("--\(name)")
                case "false", "0": extra.append("--no-\(name)")
                default: throw RequestOptionError("the query option \(name) takes true or false, not '\(value)'")
                }
            } else if Self.valued.contains(name) {
                extra += ["--\(name)", value]
            } else {
                throw RequestOptionError(
                    "'\(name)' is not a query option of this server; allowed: "
                        + (Self.flags + Self.valued).joined(separator: ", "))
            }
        }
        let configuration: Configuration
        do {
            guard let serve = try Invocation.parse(arguments + extra) as? ServeCommand else {
                throw RequestOptionError("the server's own arguments are not a serve command")
            }
            configuration = try serve.options.makeConfiguration()
        } catch let error as RequestOptionError {
            throw error
        } catch {
            throw RequestOptionError(RespDecodeCommand.message(for: error))
        }
        if let raised = Self.raised(configuration.limits, over: base.limits) {
            throw RequestOptionError("a query option raises the limit \(raised): a request may only lower limits")
        }
        return configuration
    }

    /// The first limit of `limits` above `base`'s, by its property name, or nil.
    static func raised(_ limits: Limits, over base: Limits) -> String? {
        for (new, old) in zip(Mirror(reflecting: limits).children, Mirror(reflecting: base).children) {
            switch (new.value, old.value) {
            case (let a as Int, let b as Int) where a > b: return "\(new.label ?? "?") (\(a) > \(b))"
            case (let a as Int64, let b as Int64) where a > b: return "\(new.label ?? "?") (\(a) > \(b))"
            case (let a as Double, let b as Double) where a > b: return "\(new.label ?? "?") (\(a) > \(b))"
            default: continue
            }
        }
        return nil
    }
}

/// `--auth-token-file`: the token is the file's first line, without its line end; it must not be empty.
enum AuthToken {
    static func read(_ path: String) throws -> [UInt8] {
        guard let file = fopen(path, "rb") else { throw ValidationError("cannot read \(path)") }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= 64 * 1024 {
            let n = fread(&buffer, 1, buffer.count, file)
            if n <= 0 { break }
            bytes += buffer[..<n]
        }
        let line = bytes.prefix { $0 != 0x0A && $0 != 0x0D }
        guard !line.isEmpty else { throw ValidationError("\(path) holds no token") }
        guard line.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw ValidationError("\(path): the token must be printable ASCII without spaces")
        }
        return Array(line)
    }
}
