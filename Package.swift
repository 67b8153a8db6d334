// swift-tools-version: 6.0
import PackageDescription

/// Platforms whose `Networking` links the system libcurl for `LibcurlTransport`.
let libcurlPlatforms: [Platform] = [.linux]

let package = Package(
    name: "Networking",
    // Apple platforms need these versions for `Synchronization.Mutex`; Linux ignores them.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Networking", targets: ["Networking"]),
        .library(name: "NetworkingCache", targets: ["NetworkingCache"]),
        .library(name: "NetworkingTestSupport", targets: ["NetworkingTestSupport"]),
        .library(name: "NetworkingOffline", targets: ["NetworkingOffline"]),
        .executable(name: "Demo", targets: ["Demo"]),
    ],
    targets: [
        // The system libcurl (Debian: libcurl4-openssl-dev, installed by script/bootstrap).
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]),
        // The system zlib (Debian: zlib1g-dev, installed by script/bootstrap), for gzip request bodies.
        .systemLibrary(
            name: "CZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        .target(
            name: "Networking",
            dependencies: ["CZlib", .target(name: "CCurl", condition: .when(platforms: libcurlPlatforms))]),
        // The response cache: built on the core's public seams only (an interceptor and options).
        .target(name: "NetworkingCache", dependencies: ["Networking", "CZlib"]),
        .target(name: "NetworkingTestSupport", dependencies: ["Networking"]),
        // The offline write queue and the batch client, built on Networking's public API only.
        .target(name: "NetworkingOffline", dependencies: ["Networking", "CZlib"]),
        .executableTarget(
            name: "Demo", dependencies: ["Networking", "NetworkingCache", "NetworkingOffline", "NetworkingTestSupport"], path: "Demo",
            resources: [.copy("routes.json")]),
        .testTarget(name: "NetworkingTests", dependencies: ["Networking", "NetworkingTestSupport", "CZlib"]),
        // The library's JSON decoder against Foundation's: differential, random and corpus tests.
        .testTarget(name: "NetworkingJSONTests", dependencies: ["Networking"], resources: [.copy("Corpus")]),
        .testTarget(name: "NetworkingOfflineTests", dependencies: ["NetworkingOffline", "Networking", "NetworkingTestSupport"]),
        // The child process of the offline queue's crash test (kill -9 at random moments).
        .executableTarget(
            name: "OfflineStressWorker", dependencies: ["Networking", "NetworkingOffline"], path: "Tests/OfflineStressWorker"),
        // The offline queue and the batch client too: writes they send outside the cache's chain
        // are reported to it (test-only: the two libraries stay independent).
        .testTarget(
            name: "NetworkingCacheTests", dependencies: ["NetworkingCache", "Networking", "NetworkingOffline", "NetworkingTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
