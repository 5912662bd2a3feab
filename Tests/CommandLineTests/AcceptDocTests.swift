import Foundation
import RespDecode
import Testing

/// docs/decoding.md's table of the decoders' acceptable types (what `--accept` replaces) lists, for every decoder of
/// ``DecoderRegistry``, each of its default MIME types: the table is the one place docs/options.md and the README
/// point to, so a type added to a decoder must be added there too.
@Suite("The acceptable types in the docs")
struct AcceptDocTests {
    static let decoding: String = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/decoding.md")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    /// The table row of `decoder`: the line that starts `| name |`.
    static func row(of decoder: String) -> String? {
        decoding.split(separator: "\n").first { $0.hasPrefix("| \(decoder) |") }.map(String.init)
    }

    @Test(arguments: DecoderRegistry.all.map(\.name))
    func everyDefaultTypeIsListed(_ name: String) throws {
        #expect(!Self.decoding.isEmpty, "docs/decoding.md not found")
        let row = try #require(Self.row(of: name), "docs/decoding.md has no row for the \(name) decoder")
        let decoder = try #require(DecoderRegistry.decoder(named: name))
        // text's row names its types by reference (`text/*` and the text-like application types): `text/*` at least.
        let types = name == "text" ? ["text/*"] : decoder.defaultAcceptableTypes.map(\.description)
        for type in types {
            #expect(row.contains("`\(type)`"), "the \(name) row does not list \(type)")
        }
    }

    @Test func theTableNamesNoDecoderThatDoesNotExist() {
        let names = Set(DecoderRegistry.all.map(\.name))
        let start = Self.decoding.range(of: "| decoder | acceptable types |")
        #expect(start != nil)
        guard let start else { return }
        for line in Self.decoding[start.upperBound...].split(separator: "\n").dropFirst().prefix(while: {
            $0.hasPrefix("|")
        }) {
            let name = line.split(separator: "|").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            #expect(names.contains(name), "docs/decoding.md lists a decoder \(name) that DecoderRegistry lacks")
        }
    }
}
