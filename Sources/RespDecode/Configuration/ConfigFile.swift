import Glibc

/*
 A config file (`--config FILE`): one JSON object whose members set options. This type reads and writes the file
 format only: strict JSON (read by JSONValue), the line each top-level key is on (so that a message about a key can
 point at it), and the refusals that need no knowledge of the options (unreadable file, invalid JSON, not an object,
 a key given twice). Which keys exist and what their values mean is the command line's business: it turns each
 entry into the equivalent arguments and validates them where it validates its own.

 Writing (`respdecode config`) is pretty-printed JSON with the keys in the order given, two-space indents, arrays on
 one line and objects one member a line, so that the output is stable and diffs well.
 */

/// A config file read into its top-level entries, in file order, each with the line its key is on.
public struct ConfigFile: Sendable {
    /// The file name as given (on the command line), for messages.
    public let path: String
    /// The members of the top-level object, in file order.
    public let entries: [Entry]

    /// The largest file read: a config file is a few hundred bytes; anything this big is not one.
    public static let maxBytes = 1 << 20
    /// The deepest nesting accepted: the deepest value an option takes is an object of arrays.
    public static let maxDepth = 16

    /// One top-level member.
    public struct Entry: Sendable, Equatable {
        public let key: String
        public let value: Value
        /// The 1-based line the key is on.
        public let line: Int

        public init(key: String, value: Value, line: Int) {
            self.key = key
            self.value = value
            self.line = line
        }
    }

    /// A member of a nested object.
    public struct Field: Sendable, Equatable {
        public let key: String
        public let value: Value

        public init(_ key: String, _ value: Value) {
            self.key = key
            self.value = value
        }
    }

    /// A JSON value of the file.
    public indirect enum Value: Sendable, Equatable {
        /// Members in file order.
        case object([Field])
        case array([Value])
        case string(String)
        /// The number's text as written (checked against the JSON grammar): it is handed on as that text.
        case number(String)
        case bool(Bool)
        case null

        /// A number from an integer.
        public static func integer(_ value: Int) -> Value { .number(String(value)) }

        /// A number from a double, written in Swift's shortest form that reads back as the same double.
        public static func double(_ value: Double) -> Value { .number(value.description) }

        /// An array of strings.
        public static func strings(_ values: [String]) -> Value { .array(values.map { .string($0) }) }

        /// A short name of the value's type, for messages: "a string", "an array", ….
        public var typeName: String {
            switch self {
            case .object: "an object"
            case .array: "an array"
            case .string: "a string"
            case .number: "a number"
            case .bool: "a boolean"
            case .null: "null"
            }
        }
    }

    /// A file of `entries` (for tests and for callers that build one).
    public init(path: String, entries: [Entry]) {
        self.path = path
        self.entries = entries
    }

    /// Parses `bytes`, the content of the file `path`. A UTF-8 byte order mark is skipped.
    public init(path: String, bytes: [UInt8]) throws(ConfigFileError) {
        self.path = path
        let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        let text = Array(bytes[start...])
        let lines = LineIndex(text)
        let value: JSONValue
        do {
            value = try JSONValue.parse(text, maxDepth: Self.maxDepth)
        } catch {
            throw ConfigFileError(
                .invalidJSON, path: path, line: lines.line(at: error.offset),
                message: "invalid JSON: \(error.message)")
        }
        guard case .object(let members) = value else {
            let first = text.firstIndex { !Self.isWhitespace($0) } ?? 0
            throw ConfigFileError(
                .notAnObject, path: path, line: lines.line(at: first),
                message: "expected a JSON object of options, found \(value.typeName)")
        }
        let keyOffsets = Self.topLevelKeyOffsets(text)
        precondition(keyOffsets.count == members.count, "the key scan disagrees with the parser")
        var entries: [Entry] = []
        var firstLine: [String: Int] = [:]
        for (member, offset) in zip(members, keyOffsets) {
            let line = lines.line(at: offset)
            if let first = firstLine[member.key] {
                throw ConfigFileError(
                    .duplicateKey, path: path, line: line, key: member.key,
                    message: "appears twice (first on line \(first))")
            }
            firstLine[member.key] = line
            entries.append(Entry(key: member.key, value: Value(member.value), line: line))
        }
        self.entries = entries
    }

    /// Reads and parses the file at `path`.
    public static func read(path: String) throws(ConfigFileError) -> ConfigFile {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw ConfigFileError(.unreadable, path: path, message: "cannot open: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else {
                throw ConfigFileError(
                    .unreadable, path: path, message: "cannot read: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[..<n])
            guard bytes.count <= maxBytes else {
                throw ConfigFileError(
                    .unreadable, path: path, message: "larger than \(maxBytes >> 20) MiB; not a config file")
            }
        }
        return try ConfigFile(path: path, bytes: bytes)
    }

    /// An error about `entry`: `path:line: "key": message`.
    public func error(_ code: ConfigFileError.Code, _ message: String, at entry: Entry) -> ConfigFileError {
        ConfigFileError(code, path: path, line: entry.line, key: entry.key, message: message)
    }

    // MARK: - Writing

    /// `fields` as a pretty-printed JSON object, ending with a newline.
    public static func render(_ fields: [Field]) -> String {
        let buffer = OutputBuffer(capacity: 4096)
        write(.object(fields), into: buffer, indent: 0)
        buffer.append(UInt8(ascii: "\n"))
        return String(decoding: buffer.bytes, as: UTF8.self)
    }

    private static func write(_ value: Value, into buffer: OutputBuffer, indent: Int) {
        switch value {
        case .object(let fields):
            guard !fields.isEmpty else {
                buffer.append(ascii: "{}")
                return
            }
            buffer.append(ascii: "{\n")
            for (index, field) in fields.enumerated() {
                buffer.append(Array(repeating: UInt8(ascii: " "), count: indent + 2))
                buffer.appendJSONString(field.key)
                buffer.append(ascii: ": ")
                write(field.value, into: buffer, indent: indent + 2)
                buffer.append(ascii: index == fields.count - 1 ? "\n" : ",\n")
            }
            buffer.append(Array(repeating: UInt8(ascii: " "), count: indent))
            buffer.append(UInt8(ascii: "}"))
        case .array(let elements):
            buffer.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { buffer.append(ascii: ", ") }
                write(element, into: buffer, indent: indent)
            }
            buffer.append(UInt8(ascii: "]"))
        case .string(let text):
            buffer.appendJSONString(text)
        case .number(let text):
            buffer.append(Array(text.utf8))
        case .bool(let flag):
            buffer.append(ascii: flag ? "true" : "false")
        case .null:
            buffer.append(ascii: "null")
        }
    }

    // MARK: - Positions

    @inline(__always) private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// The offsets of the keys of the top-level object of `text`, which JSONValue has accepted as one.
    static func topLevelKeyOffsets(_ text: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        var depth = 0
        var index = 0
        // After `{` or `,` at depth 1, the next string is a key.
        var expectingKey = false
        while index < text.count {
            let byte = text[index]
            switch byte {
            case UInt8(ascii: "\""):
                if depth == 1 && expectingKey {
                    offsets.append(index)
                    expectingKey = false
                }
                index += 1
                while text[index] != UInt8(ascii: "\"") {
                    index += text[index] == UInt8(ascii: "\\") ? 2 : 1
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                if depth == 1 { expectingKey = true }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
            case UInt8(ascii: ","):
                if depth == 1 { expectingKey = true }
            default:
                break
            }
            index += 1
        }
        return offsets
    }

    /// Turns byte offsets into 1-based line numbers.
    private struct LineIndex {
        /// The offsets of the line feeds, in order.
        let newlines: [Int]

        init(_ text: [UInt8]) {
            newlines = text.indices.filter { text[$0] == 0x0A }
        }

        func line(at offset: Int) -> Int {
            // The number of line feeds before `offset`, by binary search.
            var low = 0
            var high = newlines.count
            while low < high {
                let middle = (low + high) / 2
                if newlines[middle] < offset { low = middle + 1 } else { high = middle }
            }
            return low + 1
        }
    }
}

extension ConfigFile.Value {
    /// The value of a parsed JSON value.
    init(_ value: JSONValue) {
        switch value {
        case .object(let members): self = .object(members.map { ConfigFile.Field($0.key, ConfigFile.Value($0.value)) })
        case .array(let elements): self = .array(elements.map(ConfigFile.Value.init))
        case .string(let text): self = .string(text)
        case .number(let text): self = .number(text)
        case .bool(let flag): self = .bool(flag)
        case .null: self = .null
        }
    }
}

/// Why a config file was refused. Refusing it is a configuration error: the worker exits 2 and reads nothing.
///
/// `code` is stable; `description` is the message for people, `path:line: "key": message`, with the line and the key
/// left out when the error has none (an unreadable file has no line; invalid JSON no key).
public struct ConfigFileError: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: Code
    /// The file name as given.
    public var path: String
    /// The 1-based line the problem is on, when there is one.
    public var line: Int?
    /// The top-level key the problem is about, when there is one.
    public var key: String?
    /// What is wrong, for people.
    public var message: String

    public init(_ code: Code, path: String, line: Int? = nil, key: String? = nil, message: String) {
        self.code = code
        self.path = path
        self.line = line
        self.key = key
        self.message = message
    }

    public var description: String {
        var text = path
        if let line { text += ":\(line)" }
        text += ": "
        if let key {
            let buffer = OutputBuffer(capacity: key.utf8.count + 8)
            buffer.appendJSONString(key)
            text += String(decoding: buffer.bytes, as: UTF8.self) + ": "
        }
        return text + message
    }

    /// The stable error codes.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Wrapped: String, Hashable, Sendable {
            case unreadable, invalidJSON, notAnObject, duplicateKey, unknownKey, wrongType, invalidValue
        }
        private let wrapped: Wrapped

        /// The file could not be opened or read, or is too large to be a config file.
        public static let unreadable = Code(wrapped: .unreadable)
        /// The file is not one valid JSON text.
        public static let invalidJSON = Code(wrapped: .invalidJSON)
        /// The JSON text is not an object.
        public static let notAnObject = Code(wrapped: .notAnObject)
        /// A key appears twice (JSON leaves the meaning open; a config file must not).
        public static let duplicateKey = Code(wrapped: .duplicateKey)
        /// A key that names no option.
        public static let unknownKey = Code(wrapped: .unknownKey)
        /// A value of a type the option does not take (a string for a flag, …).
        public static let wrongType = Code(wrapped: .wrongType)
        /// A value the option refuses (out of range, unknown name, …), alone or together with the others.
        public static let invalidValue = Code(wrapped: .invalidValue)

        public var description: String { wrapped.rawValue }
    }
}
