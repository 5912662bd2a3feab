# respdecode in a container: a Debian bookworm runtime holding only the shared libraries the binary links, run as a
# non-root user, the binary as entry point (stdin in, JSON lines out, exit status passed through).
#
# Targets (every image name fully qualified, so podman needs no search registries):
#   runtime-base      bookworm-slim, the runtime libraries, the user; no binary
#   runtime-prebuilt  runtime-base plus dist/respdecode from the build context, a binary built outside
#                     (`swift build -c release --static-swift-stdlib` on Debian 12) -- what scripts/test-container builds
#   build             the Swift 6.3 builder (Debian 12, so it links the same libraries runtime-base installs)
#   runtime           the default: runtime-base plus the binary from `build`
#
# runtime-prebuilt comes before build, so that even a builder that runs every stage up to its target (Docker's legacy
# builder) never pulls the Swift image for it; BuildKit and buildah skip stages the target does not use. Stages are
# chosen by --target only: buildah 1.28 mishandles a FROM named by an ARG's default value.

FROM docker.io/library/debian:bookworm-slim AS runtime-base
# The libraries `ldd` lists for a release build with a static Swift standard library (Foundation's ICU data is
# linked in): libxml2 (xml and plist; it pulls in libicu72 and liblzma5), libpng16-16 and libjpeg62-turbo (images),
# zlib1g (gzip, deflate, PNG text, .warc.gz), libdeflate0 (whole .warc.gz members), libbrotli1 and libzstd1 (br and
# zstd, .warc.zst), liblz4-1 (.warc.lz4), libssl3 (libcrypto's SHA-1 for WARC-Payload-Digest), libzip4 (WACZ
# files), libcld2-0 (--detect-language; the ISO 639-3 codes come from libicu72, which libxml2 pulls in),
# libuchardet0 (charset detection for text), libcbor0.8 (the cbor decoder; the msgpack decoder uses msgpack-c's
# headers only, so no msgpack library), libstdc++6 and libgcc-s1 (already in the base, named so that nothing relies
# on it).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        libxml2 libpng16-16 libjpeg62-turbo zlib1g libdeflate0 libbrotli1 libzstd1 liblz4-1 libssl3 libzip4 libcld2-0 libuchardet0 \
        libcbor0.8 libstdc++6 libgcc-s1 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --uid 10001 --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin respdecode
# Inputs are mounted here (`-v "$PWD:/data:ro"`), so relative FILE arguments read as they would on the host.
WORKDIR /data
# Numeric, so that a runtime checking runAsNonRoot can tell without reading /etc/passwd.
USER 10001:10001
ENTRYPOINT ["respdecode"]
# `respdecode health` with no address checks the server this container runs: when PID 1 is `respdecode serve`, its
# --http (else --listen) address, read from /proc/1/cmdline; when PID 1 is a batch run, it exits 0 at once ("nothing
# to check"), so the one HEALTHCHECK is right for both uses of the image (docs/container.md#healthcheck). The start
# period covers the server's start; three failures 10 s apart mark it unhealthy. Kept by Docker; podman and buildah
# keep it only with `--format docker` (OCI images have no health check).
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["respdecode", "health"]

# A binary built outside: put it at dist/respdecode in the build context.
FROM runtime-base AS runtime-prebuilt
COPY dist/respdecode /usr/local/bin/respdecode

# Swift 6.3: swift-prometheus 2.4.1 needs tools 6.2. Untested: the machine this was written on cannot reach Docker
# Hub to pull it; CI tests runtime-prebuilt with a binary built by the host's Swift 6.3.1 on Debian 12 instead.
FROM docker.io/library/swift:6.3-bookworm AS build
WORKDIR /src
# The -dev packages, from the list CI installs (the Swift image already has libxml2-dev and pkg-config).
COPY .ci/packages .ci/packages
RUN bash .ci/packages && rm -rf /var/lib/apt/lists/*
# Dependencies first, so that a source change does not fetch them again (a Package.resolved beside the manifest pins
# them, as it does outside).
COPY Package.* ./
RUN swift package resolve
# Tests too: the manifest names the test targets, and SwiftPM wants their folders.
COPY Sources Sources
COPY Tests Tests
RUN swift build -c release --static-swift-stdlib --product respdecode \
 && install -D -m 755 "$(swift build -c release --static-swift-stdlib --show-bin-path)/respdecode" /out/respdecode

FROM runtime-base AS runtime
COPY --from=build /out/respdecode /usr/local/bin/respdecode
