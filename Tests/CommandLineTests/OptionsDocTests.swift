import ArgumentParser
import Foundation
import RespDecode
import Testing

@testable import respdecode

/// docs/options.md's tables of options, made from what `--help` shows (ArgumentParser's own description of the
/// commands: names, value names, choices, defaults, help), the option table's ranges (``DecodeOptions/table``) and what
/// `respdecode config` prints for the defaults. The test below fails when the file, --help and `respdecode config`
/// disagree; `RESPDECODE_UPDATE_DOCS=1 swift test --filter OptionsDocTests` rewrites the tables from the code.
enum OptionsDocument {
    /// The options whose default depends on the machine or on other options: `respdecode config` prints the value
    /// that applies.
    static let machineDefaults = [
        "jobs": "the number of cores this process may run on",
        "warc-types": "`response,resource`; `response,resource,metadata,revisit` when an index is written",
    ]

    /// One option as ArgumentParser describes it (`--experimental-dump-help`).
    struct Argument {
        var name: String
        var isFlag: Bool
        var valueName: String?
        var allValues: [String]
        var defaultValue: String?
        var help: String
    }

    /// The named options of `command`, in the order of its --help, a flag's `--no-` form folded into the flag.
    static func arguments(of command: any ParsableCommand.Type) throws -> [Argument] {
        let dump = try #require(
            try JSONSerialization.jsonObject(with: Data(command._dumpHelp().utf8)) as? [String: Any])
        let info = try #require(dump["command"] as? [String: Any])
        let entries = try #require(info["arguments"] as? [[String: Any]])
        var arguments: [Argument] = []
        for entry in entries where ["option", "flag"].contains(entry["kind"] as? String) {
            let name = try #require((entry["preferredName"] as? [String: Any])?["name"] as? String)
            if ["help", "version"].contains(name) { continue }
            if name.hasPrefix("no-"), arguments.contains(where: { $0.isFlag && $0.name == name.dropFirst(3) }) {
                continue
            }
            let isFlag = entry["kind"] as? String == "flag"
            arguments.append(
                Argument(
                    name: name, isFlag: isFlag, valueName: isFlag ? nil : entry["valueName"] as? String,
                    allValues: entry["allValues"] as? [String] ?? [], defaultValue: entry["defaultValue"] as? String,
                    help: entry["abstract"] as? String ?? ""))
        }
        return arguments
    }

    /// A default as `respdecode config` prints it, in the words of --help: `--name`/`--no-name` for a flag, the
    /// list comma-separated.
    static func helpText(_ value: ConfigFile.Value, flag name: String) -> String? {
        switch value {
        case .bool(let on): on ? "--\(name)" : "--no-\(name)"
        case .string(let text), .number(let text): text
        case .array(let items): items.compactMap { helpText($0, flag: name) }.joined(separator: ",")
        case .object, .null: nil
        }
    }

    /// The table of `command`'s options; `effective` gives each decode option's default as `respdecode config`
    /// prints it.
    static func table(
        of command: any ParsableCommand.Type, defaults effective: [String: ConfigFile.Value],
        skipping skipped: Set<String> = []
    ) throws -> String {
        var text = "| option | value | default | range | what it does |\n|---|---|---|---|---|\n"
        for argument in try arguments(of: command) where !skipped.contains(argument.name) {
            let option = argument.isFlag ? "`--\(argument.name)`, `--no-\(argument.name)`" : "`--\(argument.name)`"
            var value = argument.valueName.map { "`<\($0)>`" } ?? ""
            if !argument.allValues.isEmpty {
                value += ": " + argument.allValues.map { "`\($0)`" }.joined(separator: ", ")
            }
            let defaultText: String
            if let machine = machineDefaults[argument.name] {
                defaultText = machine
            } else if let configured = effective[argument.name] {
                switch configured {
                case .bool(let on): defaultText = on ? "on" : "off"
                case .null: defaultText = "none"
                case .object(let fields) where fields.isEmpty: defaultText = "each decoder's own"
                default: defaultText = "`\(helpText(configured, flag: argument.name) ?? "")`"
                }
            } else {
                defaultText = argument.defaultValue.map { "`\($0)`" } ?? "none"
            }
            let range = DecodeOptions.table.first { $0.name == argument.name }?.range ?? ""
            let help = argument.help.replacingOccurrences(of: "|", with: "\\|")
            text += "| \(option) | \(value) | \(defaultText) | \(range) | \(help) |\n"
        }
        return text
    }

    /// Every default of the decode options as `respdecode config` prints it, by key.
    static func effectiveDefaults() throws -> [String: ConfigFile.Value] {
        let options = try DecodeOptions.parse([])
        let effective = EffectiveOptions(options: options, configuration: try options.makeConfiguration())
        return Dictionary(uniqueKeysWithValues: DecodeOptions.table.map { ($0.name, $0.effective(effective)) })
    }

    /// The generated part of docs/options.md: the decode options' table and serve's.
    static func generated() throws -> String {
        let defaults = try effectiveDefaults()
        return "### Options of decoding (`respdecode`, `decode`, `frame`, `config`, `serve`)\n\n"
            + (try table(of: DecodeCommand.self, defaults: defaults))
            + "\n### Options of `respdecode serve` only\n\n"
            + (try table(
                of: ServeCommand.self, defaults: [:],
                skipping: Set(try arguments(of: DecodeCommand.self).map(\.name))))
    }

    static let begin =
        "<!-- BEGIN generated: the tables of options, from --help and the option table (see "
        + "Tests/CommandLineTests/OptionsDocTests.swift); do not edit -->\n"
    static let end = "<!-- END generated -->\n"

    /// docs/options.md, found from this file's place in the repository.
    static var path: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/options.md")
    }
}

@Suite("docs/options.md")
struct OptionsDocTests {
    /// --help's default of every decode option is what `respdecode config` prints for it and the configuration
    /// types' own, and its options are the option table's rows, in order.
    @Test func helpAndConfigAgree() throws {
        let arguments = try OptionsDocument.arguments(of: DecodeCommand.self)
        let defaults = try OptionsDocument.effectiveDefaults()
        #expect(
            arguments.map(\.name).filter { !["config", "files-from"].contains($0) } == DecodeOptions.table.map(\.name))
        // An option's default is the configuration's: the options given nothing make Configuration() again.
        let options = try DecodeOptions.parse([])
        let made = EffectiveOptions(options: options, configuration: try options.makeConfiguration())
        let plain = EffectiveOptions(options: options, configuration: Configuration())
        for row in DecodeOptions.table {
            #expect(row.effective(made) == row.effective(plain), "--\(row.name)'s default is not the configuration's")
        }
        for argument in arguments where OptionsDocument.machineDefaults[argument.name] == nil {
            guard let configured = defaults[argument.name] else { continue }
            #expect(
                argument.defaultValue == OptionsDocument.helpText(configured, flag: argument.name),
                "--\(argument.name): --help says \(argument.defaultValue ?? "nothing"), config \(configured)")
        }
    }

    /// The tables in docs/options.md are the ones the code makes (set RESPDECODE_UPDATE_DOCS=1 to rewrite them).
    @Test func theDocumentIsUpToDate() throws {
        let text = try String(contentsOf: OptionsDocument.path, encoding: .utf8)
        let begin = try #require(text.range(of: OptionsDocument.begin), "no generated section in docs/options.md")
        let end = try #require(text.range(of: OptionsDocument.end, range: begin.upperBound..<text.endIndex))
        let generated = try OptionsDocument.generated()
        if ProcessInfo.processInfo.environment["RESPDECODE_UPDATE_DOCS"] == "1" {
            let updated = String(text[..<begin.upperBound]) + generated + "\n" + String(text[end.lowerBound...])
            try Data(updated.utf8).write(to: OptionsDocument.path)
            return
        }
        #expect(
            String(text[begin.upperBound..<end.lowerBound]) == generated + "\n",
            "docs/options.md is out of date: RESPDECODE_UPDATE_DOCS=1 swift test --filter OptionsDocTests")
    }
}
