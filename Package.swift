// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Networking",
    // Apple platforms need these versions for `Synchronization.Mutex`; Linux ignores them.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Networking", targets: ["Networking"]),
        .library(name: "NetworkingTestSupport", targets: ["NetworkingTestSupport"]),
        .executable(name: "Demo", targets: ["Demo"]),
    ],
    targets: [
        .target(name: "Networking"),
        .target(name: "NetworkingTestSupport", dependencies: ["Networking"]),
        .executableTarget(name: "Demo", dependencies: ["Networking"], path: "Demo"),
        .testTarget(name: "NetworkingTests", dependencies: ["Networking", "NetworkingTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
