import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP proxy on loopback that can be switched off and on, to test what an app does while its
/// API is unreachable — without stopping the API: point the configuration at the proxy's port,
/// call ``goDown()`` (connections are then refused and open ones cut), later ``comeUp()``.
///
/// ```swift
/// let proxy = try OutageProxy(upstreamPort: 8000)
/// let configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "127.0.0.1", port: proxy.port)
/// proxy.goDown()   // calls fail with .noNetworkConnection(.connectionRefused, …)
/// try proxy.comeUp()
/// ```
///
/// Plain TCP: it forwards bytes both ways, one thread per direction of each connection.
/// Thread-safe.
public final class OutageProxy: Sendable {
    /// Why the proxy could not start.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The loopback port it listens on (the same across outages).
    public let port: Int
    private let shared: Shared

    /// What the proxy's threads use: they hold this, not the proxy, so that releasing the proxy
    /// stops it.
    private final class Shared: Sendable {
        let upstreamPort: Int
        /// `generation` counts the listeners installed: a listener's accepting thread stops when
        /// its generation is over (a new listener may reuse the old one's descriptor number).
        typealias State = (listener: Int32, generation: Int, connections: [Int32], stopped: Bool)
        let state = Mutex<State>((-1, 0, [], false))

        init(upstreamPort: Int) {
            self.upstreamPort = upstreamPort
        }

        /// Stops listening and cuts the open connections (their pumps then close them). Under
        /// the lock, so that no socket is shut down after its pump closed it and its number was
        /// reused.
        func cut(stopping: Bool) {
            state.withLock { state in
                if stopping { state.stopped = true }
                if state.listener >= 0 {
                    shutdown(state.listener, Int32(SHUT_RDWR))
                    posixClose(state.listener)
                    state.listener = -1
                }
                for connection in state.connections { shutdown(connection, Int32(SHUT_RDWR)) }
            }
        }

        /// Whether the listener of `generation` is still the one the proxy listens on.
        func isListening(in generation: Int) -> Bool {
            state.withLock { Self.isCurrent(generation, in: $0) }
        }

        /// Keeps a forwarded connection's sockets, to cut them at the next outage; `false` when
        /// the listener of `generation` is over.
        func adopt(_ client: Int32, _ upstream: Int32, in generation: Int) -> Bool {
            state.withLock { state in
                guard Self.isCurrent(generation, in: state) else { return false }
                state.connections += [client, upstream]
                return true
            }
        }

        private static func isCurrent(_ generation: Int, in state: State) -> Bool {
            state.generation == generation && state.listener >= 0 && !state.stopped
        }

        /// Makes `listener` the proxy's, unless one is already installed or the proxy stopped;
        /// returns its generation.
        func install(_ listener: Int32) -> Int? {
            state.withLock { state in
                guard state.listener < 0, !state.stopped else { return nil }
                state.listener = listener
                state.generation += 1
                return state.generation
            }
        }

        /// Closes a connection's two sockets once both its pumps have ended.
        func close(_ client: Int32, _ upstream: Int32) {
            state.withLock { state in
                state.connections.removeAll { $0 == client || $0 == upstream }
                posixClose(client)
                posixClose(upstream)
            }
        }
    }

    /// The two pumps of a connection; the second to end closes its sockets.
    private final class PumpPair: Sendable {
        private let running = Atomic<Int>(2)

        /// Whether the caller was the last pump running.
        func end() -> Bool { running.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 }
    }

    /// Starts listening on a free loopback port, forwarding to `127.0.0.1:upstreamPort`.
    ///
    /// - Throws: ``Failure`` when no socket can be bound.
    public init(upstreamPort: Int) throws {
        shared = Shared(upstreamPort: upstreamPort)
        let (listener, port) = try Self.listen(port: 0)
        self.port = port
        if let generation = shared.install(listener) { Self.startAccepting(listener, generation: generation, shared: shared) }
    }

    deinit {
        shared.cut(stopping: true)
    }

    /// Whether it accepts connections now.
    public var isUp: Bool { shared.state.withLock { $0.listener >= 0 } }

    /// Stops listening and cuts every open connection: the API looks unreachable.
    public func goDown() {
        shared.cut(stopping: false)
    }

    /// Listens again on the same port.
    ///
    /// - Throws: ``Failure`` when the port cannot be bound again.
    public func comeUp() throws {
        guard !isUp else { return }
        let listener: Int32
        do {
            (listener, _) = try Self.listen(port: port)
        } catch {
            // Another call to comeUp() bound the port first.
            if isUp { return }
            throw error
        }
        guard let generation = shared.install(listener) else {
            posixClose(listener)
            return
        }
        Self.startAccepting(listener, generation: generation, shared: shared)
    }

    private static func startAccepting(_ listener: Int32, generation: Int, shared: Shared) {
        Thread.detachNewThread {
            while true {
                // Over since the last connection (goDown() closed the listener while this thread
                // was connecting upstream): its number may be another socket's by now. This
                // narrows the window to this check and the `accept` below; it does not close it.
                guard shared.isListening(in: generation) else { return }
                let client = accept(listener, nil, nil)
                guard client >= 0 else {
                    let failure = errno
                    // Closed by goDown() or the proxy's release.
                    guard shared.isListening(in: generation) else { return }
                    // A client gone before it was accepted, a signal, or no descriptor free
                    // for now: keep serving (a listener nobody accepts on would leave calls
                    // hanging instead of refused), after a pause when resources ran out.
                    if failure != EINTR, failure != ECONNABORTED { usleep(10_000) }
                    continue
                }
                ignoreBrokenPipes(client)
                guard let upstream = try? Self.connect(port: shared.upstreamPort) else {
                    posixClose(client)
                    continue
                }
                guard shared.adopt(client, upstream, in: generation) else {
                    posixClose(client)
                    posixClose(upstream)
                    return
                }
                let pair = PumpPair()
                Self.pump(from: client, to: upstream, pair: pair, shared: shared)
                Self.pump(from: upstream, to: client, pair: pair, shared: shared)
            }
        }
    }

    /// Copies bytes from one socket to the other. At the source's end of data it passes the
    /// end on (a client that has sent its whole request still gets the answer); when either
    /// socket fails it ends both. The second pump of a connection to end closes them.
    private static func pump(from source: Int32, to destination: Int32, pair: PumpPair, shared: Shared) {
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            var failed = false
            loop: while true {
                let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else {
                    failed = count < 0
                    break
                }
                var offset = 0
                while offset < count {
                    let written = buffer.withUnsafeBytes {
                        send(destination, $0.baseAddress.map { $0 + offset }, count - offset, noSignalFlag)
                    }
                    if written < 0, errno == EINTR { continue }
                    guard written > 0 else {
                        failed = true
                        break loop
                    }
                    offset += written
                }
            }
            if failed {
                shutdown(source, Int32(SHUT_RDWR))
                shutdown(destination, Int32(SHUT_RDWR))
            } else {
                shutdown(destination, Int32(SHUT_WR))
            }
            if pair.end() { shared.close(source, destination) }
        }
    }

    private static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(clamping: port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private static func listen(port: Int) throws -> (Int32, Int) {
        let descriptor = socket(AF_INET, streamSocketType, 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var bound = address(port: port)
        let result = withUnsafePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0, posixListen(descriptor, 128) == 0 else {
            close(descriptor)
            throw Failure(description: "bind/listen on port \(port): \(String(cString: strerror(errno)))")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return (descriptor, Int(UInt16(bigEndian: actual.sin_port)))
    }

    private static func connect(port: Int) throws -> Int32 {
        let descriptor = socket(AF_INET, streamSocketType, 0)
        guard descriptor >= 0 else { throw Failure(description: "socket") }
        ignoreBrokenPipes(descriptor)
        var target = address(port: port)
        let result = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                posixConnect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(descriptor)
            throw Failure(description: "connect to port \(port): \(String(cString: strerror(errno)))")
        }
        return descriptor
    }
}

// The socket calls under names that do not clash with the proxy's own methods.
private func posixListen(_ descriptor: Int32, _ backlog: Int32) -> Int32 {
    #if canImport(Darwin)
        Darwin.listen(descriptor, backlog)
    #elseif canImport(Musl)
        Musl.listen(descriptor, backlog)
    #else
        Glibc.listen(descriptor, backlog)
    #endif
}

private func posixConnect(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    #if canImport(Darwin)
        Darwin.connect(descriptor, address, length)
    #elseif canImport(Musl)
        Musl.connect(descriptor, address, length)
    #else
        Glibc.connect(descriptor, address, length)
    #endif
}

#if canImport(Darwin)
    private let streamSocketType = SOCK_STREAM
    // Darwin has no MSG_NOSIGNAL; a write to a closed socket is ignored once SIGPIPE is.
    private let noSignalFlag: Int32 = 0
#else
    private let streamSocketType = Int32(SOCK_STREAM.rawValue)
    private let noSignalFlag = Int32(MSG_NOSIGNAL)
#endif

/// On Darwin, a write to a closed socket raises SIGPIPE unless the socket says not to.
private func ignoreBrokenPipes(_ descriptor: Int32) {
    #if canImport(Darwin)
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
    #endif
}

private func posixClose(_ descriptor: Int32) {
    #if canImport(Darwin)
        _ = Darwin.close(descriptor)
    #elseif canImport(Musl)
        _ = Musl.close(descriptor)
    #else
        _ = Glibc.close(descriptor)
    #endif
}
