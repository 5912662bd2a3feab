import Foundation
import Testing

/// The library's folders name its stages (docs/contributing.md): no two folders of `Sources/RespDecode` use each
/// other's types, so each stage can be read, and changed, knowing only the ones below it.
///
/// A type belongs to the folder that declares it at the top level of one of its files; a folder uses a type when a
/// file in it names the type outside a comment. Names that several folders declare are nobody's (none today).
@Suite struct LayeringTests {
    static let library = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/RespDecode")

    /// Each top-level folder's Swift files, and the text of each file with its comments removed.
    static func folders() throws -> [String: [(path: String, text: String)]] {
        var result: [String: [(path: String, text: String)]] = [:]
        let enumerator = FileManager.default.enumerator(at: library, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            let relative = url.path.dropFirst(library.path.count + 1)
            let folder = relative.split(separator: "/").count > 1 ? String(relative.split(separator: "/")[0]) : "."
            result[folder, default: []].append((String(relative), try String(contentsOf: url, encoding: .utf8)))
        }
        return result
    }

    /// The top-level type names a file declares (`public struct Name`, `final class Name`, `enum Name`, …).
    static func declaredTypes(in text: String) -> [String] {
        var names: [String] = []
        let keywords: Set<Substring> = ["struct", "class", "enum", "protocol", "typealias", "actor"]
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let first = line.first, first.isLetter || first == "@" else { continue }
            let words = line.split(whereSeparator: { $0 == " " || $0 == ":" || $0 == "<" || $0 == "{" || $0 == "=" })
            guard let index = words.firstIndex(where: { keywords.contains($0) }), index + 1 < words.count else {
                continue
            }
            let modifiers = words[..<index]
            let allowed: Set<Substring> = [
                "public", "internal", "private", "fileprivate", "final", "indirect", "package", "nonisolated",
            ]
            guard modifiers.allSatisfy({ allowed.contains($0) || $0.hasPrefix("@") }) else { continue }
            let name = words[index + 1]
            if let initial = name.first, initial.isUppercase { names.append(String(name)) }
        }
        return names
    }

    /// The capitalised identifiers of a file outside its comments and string literals' simple cases.
    static func identifiers(in text: String) -> Set<String> {
        var result: Set<String> = []
        for line in text.split(separator: "\n") {
            let code = line.range(of: "//").map { line[..<$0.lowerBound] } ?? line[...]
            var word = ""
            for character in code {
                if character.isLetter || character.isNumber || character == "_" {
                    word.append(character)
                } else {
                    if let first = word.first, first.isUppercase { result.insert(word) }
                    word = ""
                }
            }
            if let first = word.first, first.isUppercase { result.insert(word) }
        }
        return result
    }

    @Test func noTwoFoldersUseEachOthersTypes() throws {
        let folders = try Self.folders()
        #expect(folders.count >= 8, "Sources/RespDecode not found at \(Self.library.path)")
        var owners: [String: Set<String>] = [:]
        for (folder, files) in folders {
            for file in files {
                for name in Self.declaredTypes(in: file.text) { owners[name, default: []].insert(folder) }
            }
        }
        #expect(owners["CompoundDecoder"] == ["Decoders"], "the declaration scan finds no types")
        // uses[a][b]: the types of folder b that folder a names.
        var uses: [String: [String: Set<String>]] = [:]
        for (folder, files) in folders {
            for file in files {
                for name in Self.identifiers(in: file.text) {
                    guard let owner = owners[name], owner.count == 1, let other = owner.first, other != folder else {
                        continue
                    }
                    uses[folder, default: [:]][other, default: []].insert(name)
                }
            }
        }
        for (a, usedByA) in uses {
            for (b, typesOfB) in usedByA where a < b {
                if let typesOfA = uses[b]?[a] {
                    Issue.record(
                        "\(a)/ uses \(typesOfB.sorted()) of \(b)/, and \(b)/ uses \(typesOfA.sorted()) of \(a)/")
                }
            }
        }
    }

    /// The check itself: a folder pair that does reference each other both ways is found.
    @Test func theScanFindsACycle() {
        let a = "public struct Alpha {\n    var b: Beta\n}\n"
        let b = "final class Beta { let a: Alpha? = nil } // Gamma in a comment\n"
        #expect(Self.declaredTypes(in: a) == ["Alpha"])
        #expect(Self.declaredTypes(in: b) == ["Beta"])
        #expect(Self.identifiers(in: a).contains("Beta"))
        #expect(Self.identifiers(in: b).contains("Alpha"))
        #expect(!Self.identifiers(in: b).contains("Gamma"))
    }
}
