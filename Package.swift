// swift-tools-version:6.2
import PackageDescription

// Every target is compiled in Swift 6 language mode (the 6.x tools default) with these upcoming features on.
let swiftSettings: [SwiftSetting] = [
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0335-existential-any.md
    .enableUpcomingFeature("ExistentialAny"),
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0444-member-import-visibility.md
    .enableUpcomingFeature("MemberImportVisibility"),
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0409-access-level-on-imports.md
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "respdecode",
    products: [
        .executable(name: "respdecode", targets: ["respdecode"]),
        .library(name: "RespDecode", targets: ["RespDecode"]),
        // The fuzz targets as one binary: for libFuzzer with `-Xswiftc -DFUZZING --sanitize=fuzzer` (scripts/fuzz),
        // otherwise a replayer of saved inputs.
        .executable(name: "respdecode-fuzz", targets: ["respdecode-fuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // The sidecar (`respdecode serve`): event loops for the stream protocol and the HTTP API, and its /metrics.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // libxml2 (Debian: libxml2-dev), used by the xml and plist decoders through one wrapper file.
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        // libpng (Debian: libpng-dev) and libjpeg-turbo's libjpeg API (libjpeg62-turbo-dev), used only by CShims.
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        // zlib (Debian: zlib1g-dev): PNG text chunks, gzip/deflate Content-Encoding, .warc.gz members.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // libdeflate (libdeflate-dev): whole .warc.gz members that are in memory at once, 1.5x zlib's speed; and a
        // clean PNG's image data for libpng, from CShims/png.c (3x zlib's speed there).
        .systemLibrary(name: "CDeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"])]),
        // libbrotli's decoder (libbrotli-dev) and libzstd (libzstd-dev): the br and zstd Content-Encodings.
        .systemLibrary(name: "CBrotli", pkgConfig: "libbrotlidec", providers: [.apt(["libbrotli-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        // liblz4's frame API (liblz4-dev): .warc.lz4 frames, read one per record.
        .systemLibrary(name: "CLZ4", pkgConfig: "liblz4", providers: [.apt(["liblz4-dev"])]),
        // libbrotli's encoder, for tests only: they make br bodies (and br bombs) at run time.
        .systemLibrary(name: "CBrotliEncoder", pkgConfig: "libbrotlienc", providers: [.apt(["libbrotli-dev"])]),
        // OpenSSL's libcrypto (libssl-dev), for its EVP digests only: checking WARC-Payload-Digest.
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // libzip (libzip-dev): WACZ input, a ZIP file of WARC files, read entry by entry.
        .systemLibrary(name: "CZip", pkgConfig: "libzip", providers: [.apt(["libzip-dev"])]),
        // libuchardet (Debian: libuchardet-dev): the charset of a text body that declares none (the text and html
        // decoders).
        .systemLibrary(name: "CUchardet", pkgConfig: "uchardet", providers: [.apt(["libuchardet-dev"])]),
        // CLD2 (libcld2-dev), language detection: a C++ API, called from CShims/cld2.cpp; this target only links it.
        .systemLibrary(name: "CCLD2", providers: [.apt(["libcld2-dev"])]),
        // ICU's common library (libicu-dev, which libxml2-dev depends on): ISO 639-3 codes for CLD2's languages, called
        // from CShims/cld2.cpp; this target only links it.
        .systemLibrary(name: "CICU", providers: [.apt(["libicu-dev"])]),
        // msgpack-c (libmsgpack-dev): the msgpack decoder runs its unpacking state machine (the header
        // msgpack/unpack_template.h) with callbacks of our own, from CShims/msgpack.c. Headers only: nothing of the
        // library is called, so it is not linked (no pkg-config, whose flags would link libmsgpackc) and the runtime
        // needs no msgpack package.
        .systemLibrary(name: "CMsgpack", providers: [.apt(["libmsgpack-dev"])]),
        // libcbor (libcbor-dev): the cbor decoder, through its streaming decoder (cbor_stream_decode).
        .systemLibrary(name: "CCbor", pkgConfig: "libcbor", providers: [.apt(["libcbor-dev"])]),
        // The one C target: what Swift cannot do (C globals, variadic callbacks; setjmp for libpng and libjpeg; C++ for
        // CLD2; a C header template for msgpack-c).
        .target(name: "CShims", dependencies: ["CLibXML2", "CPNG", "CJPEG", "CCLD2", "CICU", "CMsgpack", "CDeflate"]),
        // Framing, validation, decoders, output and the stream runner: everything but the command line.
        .target(
            name: "RespDecode",
            dependencies: [
                "CLibXML2", "CShims", "CZlib", "CDeflate", "CBrotli", "CZstd", "CLZ4", "CCrypto", "CZip", "CCLD2",
                "CICU", "CUchardet", "CCbor",
                .product(name: "Logging", package: "swift-log"),
            ],
            // Optimized in debug builds too: the tests hold the library to the budgets of the shipped binary (a hostile
            // input within 1 s of CPU time), and unoptimized Swift is 5-10x slower on byte loops -- the XML entity that
            // expands to 30 MB of quotes took 1.0-1.5 s -Onone against 0.3 s -O on this machine. Assertions that
            // -O removes are none of the library's: it checks with preconditions and errors.
            swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]
        ),
        // `respdecode serve` on SwiftNIO: the stream protocol and the HTTP API on event loops, decoding on the library's
        // JobPool, metrics through swift-metrics into swift-prometheus (docs/sidecar.md). Kept apart from the library,
        // so that a batch run links no event loop.
        .target(
            name: "RespDecodeServe",
            dependencies: [
                "RespDecode",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The executable: argument parsing and wiring only.
        .executableTarget(
            name: "respdecode",
            dependencies: [
                "RespDecode", "RespDecodeServe",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // A release binary exports no symbols. The Swift driver links executables with --export-dynamic, which put
            // 13,900 symbols of the static-stdlib binary in its dynamic symbol table, paid for at every start: the
            // runtime's dladdr of itself scans that table, and the libraries' symbol lookups search the executable
            // first. An empty run: 7.65 -> 7.05 ms of CPU (BENCHMARKS.md). Nothing looks a symbol up in the executable
            // by name (no dlsym; the Swift runtime finds its metadata through sections). Still position-independent.
            linkerSettings: [.unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(configuration: .release))]
        ),
        // What framers' tests and the fuzz targets share: the every-split verifier, the corpora locator, the seeded
        // generator; and libzip's writer, for the WACZ files the tests make. The library's public API only.
        .target(
            name: "RespDecodeTestSupport",
            dependencies: ["RespDecode", "CZip", .product(name: "Logging", package: "swift-log")]
        ),
        // One fuzz target per parser, through the library's public API only (see FuzzTarget.swift).
        .target(
            name: "FuzzTargets",
            dependencies: [
                "RespDecode", "RespDecodeTestSupport", "RespDecodeServe",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(name: "respdecode-fuzz", dependencies: ["FuzzTargets"]),
        .testTarget(
            name: "RespDecodeTests",
            // CLibXML2 only to ask which libxml2 the xmllint it compares with runs on; the compressors to make
            // gzip, deflate, zstd and br test bodies, .warc.gz members and .warc.zst and .warc.lz4 frames at run time.
            dependencies: [
                "RespDecode", "RespDecodeTestSupport", "CLibXML2", "CZlib", "CZstd", "CLZ4", "CBrotliEncoder",
                .product(name: "Logging", package: "swift-log"),
            ],
            // The generator of the PngSuite pixel reference and its output, read by the test at run time.
            exclude: ["Decoders/Image/pngsuite-reference.py", "Decoders/Image/PngSuiteReference.tsv"]
        ),
        // The command line in process (@testable import of the executable): option groups, config file keys,
        // merging a config file under the command line and putting its errors on the right key and line.
        .testTarget(
            name: "CommandLineTests",
            dependencies: ["respdecode", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // Replays every input the fuzzers kept (Tests/FuzzRegressions/TARGET/) through its target, and the seeds.
        .testTarget(name: "FuzzTargetsTests", dependencies: ["FuzzTargets", "RespDecodeTestSupport"]),
        // The sidecar's parts in process (@testable import): its metrics under concurrent changes.
        .testTarget(name: "RespDecodeServeTests", dependencies: ["RespDecode", "RespDecodeServe"]),
        // Runs the built `respdecode` binary on samples/ and on crafted streams.
        .testTarget(
            name: "EndToEndTests",
            // The compressors, to build compressed hostile inputs (zlib, zstd and br bombs, .warc.gz members, .warc.zst
            // and .warc.lz4 frames) at test time.
            dependencies: ["respdecode", "RespDecodeTestSupport", "CZlib", "CZstd", "CLZ4", "CBrotliEncoder"]
        ),
    ]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + swiftSettings
}
