// swift-tools-version: 6.0
import Foundation
import PackageDescription

// script/bench's package: the library against raw libcurl, URLSession and AsyncHTTPClient, on
// loopback against nginx. A package of its own so that the library keeps no package dependencies:
// AsyncHTTPClient (and SwiftNIO under it) is built here only.

/// The library's package, one folder up. A package depended on by path is named after its
/// folder, whatever the clone is called.
let libraryFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
    name: "NetworkingBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: libraryFolder.path),
        .package(url: "https://github.com/swift-server/async-http-client.git", exact: "1.37.0"),
    ],
    targets: [
        // The system libcurl for the raw-libcurl ceiling (Debian: libcurl4-openssl-dev).
        .systemLibrary(name: "BenchCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .executableTarget(
            name: "NetworkingBenchmarks",
            dependencies: [
                .product(name: "Networking", package: libraryFolder.lastPathComponent),
                .product(name: "NetworkingCache", package: libraryFolder.lastPathComponent),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .target(name: "BenchCurl", condition: .when(platforms: [.linux])),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
