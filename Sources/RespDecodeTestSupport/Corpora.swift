public import Foundation

/// Where the shared third-party corpora are: `../shared/corpora` beside the project, or `$RESPDECODE_CORPORA`.
/// Tests that read them are skipped, with `skipMessage`, when the folder is absent — unless
/// `RESPDECODE_REQUIRE_CORPORA=1`
/// (CI) says they must be there (`missingWhileRequired`).
public enum Corpora {
    public static let root: URL = {
        if let path = ProcessInfo.processInfo.environment["RESPDECODE_CORPORA"] {
            return URL(fileURLWithPath: path, isDirectory: true)
        }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpora", isDirectory: true)
    }()

    /// The folder holding Package.swift, found upward from this file.
    public static let packageRoot: URL = {
        var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while dir.path != "/" {
            if FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) { return dir }
            dir.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
    }()

    public static var available: Bool { FileManager.default.fileExists(atPath: root.path) }

    public static let skipMessage =
        "../shared/corpora is absent (set RESPDECODE_CORPORA to its path to run these tests)"

    /// Whether the corpora must be present (`RESPDECODE_REQUIRE_CORPORA=1`, as CI sets it), so that the suites that
    /// read them cannot be skipped unnoticed.
    public static var required: Bool { ProcessInfo.processInfo.environment["RESPDECODE_REQUIRE_CORPORA"] == "1" }

    /// What is wrong when the corpora are required but absent; `nil` when all is well.
    public static var missingWhileRequired: String? {
        required && !available ? "the corpora are required here but \(root.path) is absent" : nil
    }

    /// `path` below the corpora root.
    public static func url(_ path: String) -> URL { root.appendingPathComponent(path) }

    /// The regular files directly in `folder`, sorted by name.
    public static func files(in folder: String, suffix: String = "") throws -> [URL] {
        let dir = url(folder)
        return try FileManager.default.contentsOfDirectory(at: dir, includingPropertiesForKeys: nil)
            .filter { $0.lastPathComponent.hasSuffix(suffix) }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    public static func bytes(_ url: URL) throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }

    /// The bytes of `path` below the corpora root.
    public static func bytes(_ path: String) throws -> [UInt8] { try bytes(url(path)) }

    /// Every regular file below `folder`, at any depth, as paths relative to `folder`, sorted.
    public static func allFiles(under folder: String) -> [String] {
        let base = url(folder).standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: base) else { return [] }
        var paths: [String] = []
        while let relative = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: base + "/" + relative, isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                paths.append(relative)
            }
        }
        return paths.sorted()
    }
}
