// `respdecode serve` on SwiftNIO (docs/sidecar.md): being written.
internal import NIOCore
