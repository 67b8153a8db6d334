#if canImport(CCurl)
    import Foundation
    import Testing

    @testable import Networking

    /// What is specific to ``LibcurlTransport``: its lifecycle, connection reuse and input checks.
    @Suite("LibcurlTransport", .timeLimit(.minutes(2)))
    struct LibcurlTransportTests {
        @Test("Sequential requests reuse one connection")
        func connectionReuse() async throws {
            let servers = try TestServers.require()
            let transport = LibcurlTransport()
            for _ in 0..<20 {
                #expect(try await Wire.response(try Wire.request(servers.apiURL + "/health"), over: transport).statusCode == 200)
            }
            #expect(transport.loop.connectionsOpened.load(ordering: .relaxed) == 1)
        }

        @Test("Bodies streamed to a sink after multiplexed HTTP/2 requests on the same pooled handles")
        func streamedBodiesAfterMultiplexedRequests() async throws {
            let servers = try TestServers.require()
            let transport = LibcurlTransport()
            let configuration = try TestServers.configuration(servers.h2URL, caFile: servers.caFile)
            let repository = TestAPI.Repository(configuration: configuration, transport: transport)
            for _ in 0..<3 {
                // Eight at once share one HTTP/2 connection: most finish while others still use it.
                let plain = await withTaskGroup(of: String?.self) { group in
                    for _ in 0..<8 {
                        group.addTask {
                            (try? await repository.performRequest(Endpoint<TransportResponse>.get("protocol")).get()).map {
                                String(decoding: $0.body, as: UTF8.self)
                            }
                        }
                    }
                    return await group.reduce(into: [String?]()) { $0.append($1) }
                }
                #expect(plain.allSatisfy { $0 == "HTTP/2.0" })
                let streamed = await withTaskGroup(of: String?.self) { group in
                    for _ in 0..<8 {
                        group.addTask {
                            guard
                                let response = try? await repository.performRequest(
                                    Endpoint<RepositoryResponse<ResponseChunks>>.get("protocol")
                                ).get()
                            else { return nil }
                            var body = Data()
                            do {
                                for try await chunk in response.value { body += chunk }
                            } catch {
                                return nil
                            }
                            return String(decoding: body, as: UTF8.self)
                        }
                    }
                    return await group.reduce(into: [String?]()) { $0.append($1) }
                }
                #expect(streamed.allSatisfy { $0 == "HTTP/2.0" }, "\(streamed)")
            }
        }

        @Test("Hundreds of concurrent requests all complete on one loop thread")
        func manyConcurrentRequests() async throws {
            let servers = try TestServers.require()
            let transport = LibcurlTransport()
            let request = try Wire.request(servers.httpbinURL + "/bytes/2048")
            let statuses = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<300 {
                    group.addTask { (try? await transport.send(request))?.statusCode ?? -1 }
                }
                return await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.count == 300)
            #expect(statuses.allSatisfy { $0 == 200 })
        }

        @Test("Cancellation reaches a caller waiting on the fast path (one request at a time, fast peer)")
        func cancellationOnFastPath() async throws {
            let servers = try TestServers.require()
            let transport = LibcurlTransport()
            _ = try await Wire.response(try Wire.request(servers.apiURL + "/health"), over: transport)
            let hanging = try Wire.request(servers.faultURL + "/hang", timeout: 60)
            for delay in [0, 50, 200] {
                // Whatever the test machine's speed: the last transfer counts as fast.
                transport.loop.spinPolicy.submitted()
                transport.loop.spinPolicy.finished(after: .microseconds(10))
                #expect(transport.loop.spinPolicy.favoursSpinning)
                let task = Task { await Wire.send(hanging, over: transport) }
                try await Task.sleep(for: .microseconds(delay))
                task.cancel()
                #expect(await task.value.failure == .cancelled)
            }
            // Still serving.
            #expect(try await Wire.response(try Wire.request(servers.apiURL + "/health"), over: transport).statusCode == 200)
        }

        @Test("Shutting down cancels the transfers in flight and refuses new ones")
        func shutdownCancels() async throws {
            let servers = try TestServers.require()
            let transport = LibcurlTransport()
            let request = try Wire.request(servers.faultURL + "/hang", timeout: 60)
            let inFlight = Task { await Wire.send(request, over: transport) }
            try await Task.sleep(for: .milliseconds(200))
            transport.shutdown()
            #expect(await inFlight.value.failure == .cancelled)
            #expect(await Wire.send(request, over: transport).failure == .cancelled)
        }

        @Test("A released transport stops its loop thread")
        func releaseStopsThread() async throws {
            let servers = try TestServers.require()
            weak var loop: LibcurlEventLoop?
            do {
                let transport = LibcurlTransport()
                loop = transport.loop
                #expect(try await Wire.response(try Wire.request(servers.apiURL + "/health"), over: transport).statusCode == 200)
            }
            // The thread holds the loop until it exits; wait (bounded) for that.
            for _ in 0..<500 where loop != nil { try await Task.sleep(for: .milliseconds(10)) }
            #expect(loop == nil)
        }

        @Test("Requests that cannot be sent fail with invalidRequest before touching the network")
        func invalidRequests() async throws {
            let transport = LibcurlTransport()
            let injected = try Wire.request("http://127.0.0.1:1/", headers: ["X-Bad": "a\r\nHost: evil"])
            guard case .failure(.invalidRequest) = await Wire.send(injected, over: transport) else {
                Issue.record("a header with CRLF must be refused")
                return
            }
            let ftp = try Wire.request("ftp://127.0.0.1/file")
            guard case .failure(.invalidRequest) = await Wire.send(ftp, over: transport) else {
                Issue.record("an ftp URL must be refused")
                return
            }
        }

        @Test("A timeout that has already passed is timedOut")
        func zeroTimeout() async throws {
            let servers = try TestServers.require()
            let result = await Wire.send(try Wire.request(servers.apiURL + "/health", timeout: 0), over: LibcurlTransport.shared)
            #expect(result.failure == .timedOut)
        }

        @Test("The default transport on Linux is libcurl")
        func defaultTransport() {
            #if os(Linux)
                #expect(DefaultTransport.shared is LibcurlTransport)
            #endif
        }

        @Test("Milliseconds round up and stay within libcurl's range")
        func milliseconds() {
            #expect(LibcurlTransport.milliseconds(.zero) == 0)
            #expect(LibcurlTransport.milliseconds(.seconds(-1)) == 0)
            #expect(LibcurlTransport.milliseconds(.microseconds(1)) == 1)
            #expect(LibcurlTransport.milliseconds(.milliseconds(1500)) == 1500)
            #expect(LibcurlTransport.milliseconds(.seconds(1e12)) == 30 * 24 * 3600 * 1000)
        }
    }
#endif
