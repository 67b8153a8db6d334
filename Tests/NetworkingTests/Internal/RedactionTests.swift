import Foundation
import Testing

@testable import Networking

@Suite("Redaction")
struct RedactionTests {
    @Test(
        "Names holding a credential fragment are sensitive, whatever their case",
        arguments: [
            ("access_token", true), ("X-Refresh-Token", true), ("client_secret", true), ("Password", true),
            ("Authorization", true), ("Set-Cookie", true), ("X-API-Key", true), ("apikey", true), ("sessionId", true),
            ("signature", true), ("passwd", true), ("title", false), ("Accept", false), ("user", false), ("page", false),
            ("X-Functions-Key", true), ("X-Master-Key", true), ("X-Auth-Key", true), ("auth_key", true),
            ("Idempotency-Key", false), ("X-Idempotency-Key", false), ("X-Request-Key", false), ("sort_key", false),
            ("X-Request-Id", false), ("monkey", false), ("PHPSESSID", true), ("sid", true), ("side", false), ("consider", false),
            ("code_verifier", true), ("client_assertion", true), ("assertion", true), ("jwt", true), ("OTP", true),
            ("X-Auth", true), ("X-Authentication", true), ("code", false), ("author", false),
            ("user[otp]", true), ("auth[key]", true), ("keys[]", false), ("user[name]", false),
            // Vendors' key names.
            ("DD-APPLICATION-KEY", true), ("X-Appwrite-Key", true), ("X-Mashape-Key", true), ("x-app-key", true),
            ("app_key", true), ("user_key", true), ("appid", true), ("Authentication", true), ("passcode", true),
            ("X-JWT-Audience", false), ("application", false), ("app_id_type", false), ("Sec-WebSocket-Key", false),
        ])
    func sensitiveNames(name: String, sensitive: Bool) {
        #expect(Redaction.standard.isSecret(name) == sensitive)
    }

    @Test("A setting written as a name and a value has its value hidden when the name is secret, in any case and with `key` for `name`")
    func namedValuesInAnyCase() {
        let bodies = [
            #"[{"Key":"app/db_password","Value":"aHVudGVy"}]"#, #"{"Name":"/prod/db/password","Value":"hunter2"}"#,
            #"{"key":"X-Api-Key","value":"hunter2"}"#, #"{"name":"Authorization","value":"hunter2"}"#,
        ]
        for body in bodies {
            let excerpt = Redaction.standard.bodyExcerpt(Data(body.utf8), limit: 1_000)
            #expect(!excerpt.contains("hunter2") && !excerpt.contains("aHVudGVy"), "\(excerpt)")
        }
        #expect(Redaction.standard.bodyExcerpt(Data(#"{"key":"theme","value":"dark"}"#.utf8), limit: 100).contains("dark"))
    }

    @Test("A URL's user part is hidden inside text and strings: a connection string, a return URL")
    func userInfoInText() {
        let body = Data(#"{"DATABASE_URL":"postgres://app:s3cr3t@db.internal/app","contact":"ann@example.com"}"#.utf8)
        let excerpt = Redaction.standard.bodyExcerpt(body, limit: 1_000)
        #expect(!excerpt.contains("s3cr3t") && excerpt.contains("db.internal/app") && excerpt.contains("ann@example.com"))
        #expect(
            Redaction.redactingUserInfo(in: "see redis://:pw@cache:6379/0 and x://a") == "see redis://<redacted>@cache:6379/0 and x://a")
        let url = URL(string: "https://api.test/login?next=https%3A%2F%2Fu%3Apw%40evil.test%2F&page=2")!
        let shown = Redaction.standard.url(url)
        #expect(!shown.contains("pw") && shown.contains("page=2"), "\(shown)")
        // Linear on a hostile text: many schemes, no `@` after them.
        let hostile = String(repeating: "a://", count: 100_000) + "@"
        #expect(Redaction.redactingUserInfo(in: hostile) == hostile)
    }

    @Test("A UTF-16 or UTF-32 body is redacted as its text, not byte by byte; other bytes with a NUL are shown by their count")
    func wideBodies() throws {
        let text = #"{"token": "abc123", "code": "E1"}"#
        for encoding in [String.Encoding.utf16LittleEndian, .utf16BigEndian, .utf32LittleEndian, .utf16] {
            let body = try #require(text.data(using: encoding))
            let excerpt = Redaction.standard.bodyExcerpt(body, limit: 1_000)
            #expect(!excerpt.contains("abc123") && excerpt.contains("E1"), "\(encoding): \(excerpt)")
        }
        #expect(Redaction.standard.bodyExcerpt(Data([0, 0, 0, 0, 1, 2]), limit: 100) == "<6 bytes, not UTF-8 text>")
    }

    @Test("A name in text that is not whole JSON counts with its escapes decoded and across a line break")
    func textNames() {
        let cut = Data((#"{"to\u006ben": "abc123", "key":"# + "\n" + #""k-42", "pad": ""# + String(repeating: "x", count: 40)).utf8)
        let excerpt = Redaction.standard.bodyExcerpt(cut, limit: 1_000)
        #expect(!excerpt.contains("abc123") && !excerpt.contains("k-42"), "\(excerpt)")
        // A quoted value goes whole; a header holding JSON is searched too.
        let quoted = Redaction.standard.redactText(#"Digest username="ann", password="two words", realm="r""#)
        #expect(!quoted.contains("two") && !quoted.contains("words") && quoted.contains(#"realm="r""#), "\(quoted)")
        let context = Redaction.standard.headerValue(name: "X-Context", value: #"{"session_token":"s-9","lang":"en"}"#)
        #expect(!context.contains("s-9") && context.contains("en"), "\(context)")
    }

    @Test("What print and dump show of an endpoint, its parameters, a header field and an answer hides their credentials")
    func printedValues() throws {
        var endpoint = Endpoint<Void>(
            .post, "login?api_key=k-1", parameters: ["user": "ann", "password": "hunter2"], query: ["access_token": "t-1"],
            headers: ["Authorization": "Bearer t-2"])
        endpoint.name = "login"
        let field = HTTPHeaders.Field(name: "Authorization", value: "Bearer t-3")
        let head = ResponseHead(statusCode: 200, headers: ["Set-Cookie": "sid=t-4"], url: URL(string: "https://h.test/?token=t-5"))
        let answer = RepositoryResponse(
            value: 1, statusCode: 200, headers: [:], url: URL(string: "https://u:t-6@h.test/"),
            request: RequestSummary(method: .get, url: URL(string: "https://h.test/?sig=t-7")!), source: .network)
        var shown = "\(endpoint) \(field) \([field]) \(head) \(answer)"
        dump(endpoint, to: &shown)
        dump(answer, to: &shown)
        for secret in ["k-1", "hunter2", "t-1", "t-2", "t-3", "t-4", "t-5", "t-6", "t-7"] {
            #expect(!shown.contains(secret), "\(secret) in \(shown)")
        }
        #expect(shown.contains("ann") && shown.contains("login"))
    }

    @Test(
        "A body nested to the decoder's limit is parsed, searched and shown on a 256 KiB thread, half a cooperative thread's on Apple platforms"
    )
    func deeplyNestedBodies() async {
        let depth = 511
        let body = Data(
            (String(repeating: #"{"a":"#, count: depth) + #"{"password":"hunter2","code":"E1"}"# + String(repeating: "}", count: depth))
                .utf8)
        let path = Array(repeating: "a", count: depth).joined(separator: ".") + ".code"
        let (code, excerpt) = await onPlainThread(stackSize: 256 << 10) {
            ((try? JSONValue(parsing: body))?.value(atKeyPath: path)?.stringValue, Redaction.standard.bodyExcerpt(body, limit: 1 << 20))
        }
        #expect(code == "E1")
        // Too deep to be parsed for the excerpt: its text is redacted.
        #expect(excerpt.contains(#""code":"E1""#) && !excerpt.contains("hunter2"))
        #expect(Redaction.nests(Data(#"[["]]]]\"[[[[", {"b": []}]]"#.utf8), atMost: 4))
        #expect(!Redaction.nests(Data("[[[[]]]]".utf8), atMost: 3))
        #expect(!Redaction.nests(Data(#"[{"a":{"b":[1]}}]"#.utf8), atMost: 3))
    }

    @Test("The standard-error logger escapes control characters a body could move a terminal with; lines and tabs stay")
    func terminalControls() {
        #expect(StandardErrorLogger.escapingControls("a\u{1B}[2Jb\rc\nd\te\u{7F}") == "a\\u{1B}[2Jb\\u{D}c\nd\te\\u{7F}")
        #expect(StandardErrorLogger.escapingControls("plain → text") == "plain → text")
        // Bidirectional controls reorder what a terminal shows; a joiner inside an emoji stays.
        #expect(StandardErrorLogger.escapingControls("a\u{202E}b\u{2066}c👩\u{200D}💻") == "a\\u{202E}b\\u{2066}c👩\u{200D}💻")
    }

    @Test("A body is binary for a log when its first kilobyte holds a NUL or is not UTF-8; text cut mid-character is text")
    func binaryBodies() {
        #expect(!LoggingInterceptor.isBinary(Data("plain ünïcode".utf8)))
        #expect(LoggingInterceptor.isBinary(Data([0x50, 0x4E, 0x47, 0x00])))
        #expect(LoggingInterceptor.isBinary(Data([0xFF, 0xD8, 0xFF, 0xE0])))
        // A two-byte character straddling the 1 KiB cut.
        #expect(!LoggingInterceptor.isBinary(Data((String(repeating: "a", count: 1023) + "ü and more").utf8)))
    }

    @Test("A log record's URL is the redacted one, or the origin alone: never the request's own")
    func loggedURL() throws {
        let url = try #require(URL(string: "https://api.example.com:8443/a?token=s3cret"))
        #expect(
            LoggingInterceptor.loggedURL("https://api.example.com:8443/a?token=%3Credacted%3E", of: url).absoluteString.contains("s3cret")
                == false)
        #expect(LoggingInterceptor.loggedURL("", of: url).absoluteString == "https://api.example.com:8443")
    }

    @Test("Path parameters and secret pairs inside another query value are redacted; plain URLs are kept as they are")
    func pathParametersAndNestedValues() throws {
        let redaction = Redaction.standard
        let session = try #require(URL(string: "https://h.example/app;jsessionid=ABC123/orders/42?page=2"))
        let nested = try #require(URL(string: "https://h.example/login?next=https%3A%2F%2Fx%2Fcb%3Faccess_token%3DT0KEN&page=2"))
        let plain = try #require(URL(string: "https://h.example/a;v=1/b?q=a%3Db&page=2"))
        #expect(
            !redaction.url(session).contains("ABC123") && redaction.url(session).contains("/orders/42?page=2"), "\(redaction.url(session))")
        #expect(!redaction.url(nested).contains("T0KEN") && redaction.url(nested).contains("page=2"), "\(redaction.url(nested))")
        #expect(redaction.url(plain) == plain.absoluteString)
        #expect(!redaction.headerValue(name: "Location", value: session.absoluteString).contains("ABC123"))
    }

    @Test("URLs in other header values, and URL fragments, lose their secret pairs")
    func urlsInHeadersAndFragments() throws {
        let redaction = Redaction.standard
        let link = #"<https://api.example.com/books?page=2&access_token=abc123>; rel="next""#
        let shownLink = redaction.headerValue(name: "Link", value: link)
        #expect(!shownLink.contains("abc123"))
        #expect(shownLink.hasPrefix("<https://api.example.com/books?page=2&access_token="))
        #expect(shownLink.hasSuffix(#">; rel="next""#))
        #expect(!redaction.headerValue(name: "Location", value: "/books/1?sig=s3cr3t&x=1").contains("s3cr3t"))
        #expect(redaction.headerValue(name: "Content-Type", value: "text/plain; charset=utf-8") == "text/plain; charset=utf-8")
        #expect(!redaction.headerValue(name: "Location", value: "https://ann:hunter2@files.example.com/a").contains("hunter2"))
        let callback = try #require(URL(string: "https://app.example.com/callback#access_token=abc123&state=xyz"))
        let shown = redaction.url(callback)
        #expect(!shown.contains("abc123"))
        #expect(shown.contains("state=xyz"))
        #expect(redaction.url(try #require(URL(string: "https://app.example.com/a#section-2"))) == "https://app.example.com/a#section-2")
    }

    @Test("JSON members with sensitive names are redacted at any depth, others kept")
    func jsonMembers() throws {
        // Given
        let body = Data(
            #"{"token": "t0k3n", "user": {"name": "Ann", "password": "hunter2"}, "items": [{"refresh_token": "r3fr3sh", "id": 1}], "count": 2}"#
                .utf8)
        // When
        let excerpt = Redaction.standard.bodyExcerpt(body, limit: 1024)
        // Then
        #expect(
            try JSONValue(parsing: Data(excerpt.utf8))
                == [
                    "token": "<redacted>", "user": ["name": "Ann", "password": "<redacted>"],
                    "items": [["refresh_token": "<redacted>", "id": 1]], "count": 2,
                ])
    }

    @Test("A header written as a name and value pair (a batch item's, a HAR entry's) has its value redacted when the name is secret")
    func headerPairs() throws {
        let body = Data(
            #"{"batch": [{"headers": [{"name": "X-Api-Key", "value": "k-123"}, {"name": "Accept", "value": "application/json"}]}]}"#.utf8)
        let excerpt = Redaction.standard.bodyExcerpt(body, limit: 1024)
        #expect(!excerpt.contains("k-123"))
        #expect(excerpt.contains("application/json"))
    }

    @Test("A sensitive member holding an object is redacted whole")
    func sensitiveObject() {
        let excerpt = Redaction.standard.bodyExcerpt(Data(#"{"session": {"id": "abc123", "user": 1}}"#.utf8), limit: 1024)
        #expect(excerpt == #"{"session":"<redacted>"}"#)
    }

    @Test("Credentials inside JSON string values are redacted; other strings are untouched")
    func stringValues() throws {
        // Given an echo of a request: a URL with a token, JSON text with a password
        let body = Data(
            #"{"url": "https://x.test/a?access_token=t0k3n&page=2", "data": "{\"password\": \"hunter2\"}", "title": "a = b", "plain": "text"}"#
                .utf8)
        // When
        let excerpt = try JSONValue(parsing: Data(Redaction.standard.bodyExcerpt(body, limit: 1024).utf8))
        // Then
        #expect(excerpt["url"] == "https://x.test/a?access_token=<redacted>&page=2")
        #expect(excerpt["data"] == #"{"password": "<redacted>"}"#)
        #expect(excerpt["title"] == "a = b")
        #expect(excerpt["plain"] == "text")
    }

    @Test("Text that is not complete JSON has quoted members and name=value pairs redacted")
    func text() {
        // Given
        let truncatedJSON = #"{"user": "ann", "password": "hun\"ter2", "access_token": "abc"#
        let form = "grant_type=password&password=hunter2&client_secret=s3 scope=read"
        // When
        let redactedJSON = Redaction.standard.redactText(truncatedJSON)
        let redactedForm = Redaction.standard.redactText(form)
        // Then
        #expect(redactedJSON == #"{"user": "ann", "password": "<redacted>", "access_token": "<redacted>""#)
        #expect(redactedForm == "grant_type=password&password=<redacted>&client_secret=<redacted> scope=read")
        // Numbers and literals too (NDJSON lines, a body cut short); other members as they are.
        let lines = #"{"pin": 1234, "token": -12.5e3, "secret": true, "session_key": null, "count": 3, "ok": false}"#
        #expect(
            Redaction.standard.redactText(lines)
                == #"{"pin": 1234, "token": "<redacted>", "secret": "<redacted>", "session_key": "<redacted>", "count": 3, "ok": false}"#)
    }

    @Test("The configuration's names match the parts of a nested query or form name")
    func nestedSecretFields() {
        let redaction = Redaction(secretFields: ["email"])
        #expect(redaction.redactText("user%5Bemail%5D=a%40b.c&user%5Bname%5D=ann") == "user%5Bemail%5D=<redacted>&user%5Bname%5D=ann")
        #expect(redaction.isSecret("emails[]") == false && redaction.isSecret("email[]"))
    }

    @Test("A pair that is no secret does not hide the secret pair after it; a secret member's array or object goes whole")
    func pairsAfterPairsAndStructuredValues() throws {
        // A path parameter after another one, in a URL and as text
        let url = try #require(URL(string: "https://h.test/app;lang=en;jsessionid=ABC123/x"))
        #expect(!Redaction.standard.url(url).contains("ABC123"))
        #expect(Redaction.standard.redactText("lang=en;jsessionid=ABC123") == "lang=en;jsessionid=<redacted>")
        // Members whose values are arrays or objects, in JSON text cut short or not parsed
        let text = #"{"api_tokens": ["a1", "b2"], "password": {"old": "x]y", "new": "z"}, "n": 1, "secret": ["cut"#
        #expect(
            Redaction.standard.redactText(text)
                == #"{"api_tokens": "<redacted>", "password": "<redacted>", "n": 1, "secret": "<redacted>""#)
    }

    @Test("Redacting a query keeps every other pair as it was sent (an encoded + stays encoded)")
    func queryKeptAsSent() throws {
        let url = try #require(URL(string: "https://h.test/search?q=C%2B%2B&api_key=X1&tag=a+b"))
        #expect(Redaction.standard.url(url) == "https://h.test/search?q=C%2B%2B&api_key=%3Credacted%3E&tag=a+b")
        let nested = try #require(URL(string: "https://h.test/login?next=https%3A%2F%2Fapp%2Fcb%3Faccess_token%3Dt0k%26page%3D2&x=%2B"))
        let redacted = Redaction.standard.url(nested)
        #expect(!redacted.contains("t0k"))
        #expect(redacted.hasSuffix("&x=%2B"))
        #expect(URLComponents(string: redacted)?.queryItems?.first?.value == "https://app/cb?access_token=<redacted>&page=2")
        // A value that is not UTF-8 once decoded, and could hold a pair, is hidden whole.
        let unreadable = try #require(URL(string: "https://h.test/login?next=cb%3Faccess_token%3Dt0k%FF&page=2"))
        #expect(Redaction.standard.url(unreadable) == "https://h.test/login?next=%3Credacted%3E&page=2")
    }

    @Test("Redacting text takes linear time, whatever a server sends", .timeLimit(.minutes(1)))
    func linearTime() async {
        // A megabyte of name characters with no "=" after them: each was a start the pattern
        // scanned the whole run from.
        let run = "=" + String(repeating: "a", count: 1_000_000)
        // 150,000 secret pairs: each was replaced in place, copying the rest of the text.
        let pairs = String(repeating: "token=x&", count: 150_000)
        // Secret members whose values open brackets that never close, and pairs within pairs.
        let members = String(repeating: #""token": [{"#, count: 100_000)
        let nested = String(repeating: "a=b;", count: 150_000)
        let redacted = await onPlainThread { [run, pairs, members, nested].map(Redaction.standard.redactText) }
        #expect(redacted == [run, String(repeating: "token=<redacted>&", count: 150_000), #""token": "<redacted>""#, nested])
    }

    @Test("A non-JSON body is redacted as text and bounded")
    func nonJSONBody() {
        // Given
        let body = Data(("token=abc123&" + String(repeating: "x", count: 100)).utf8)
        // When
        let excerpt = Redaction.standard.bodyExcerpt(body, limit: 40)
        // Then
        #expect(!excerpt.contains("abc123"))
        #expect(excerpt.hasPrefix("token=<redacted>&"))
        #expect(excerpt.hasSuffix("more bytes)"))
    }

    @Test("An empty body gives an empty excerpt; a JSON scalar is text")
    func edgeBodies() {
        #expect(Redaction.standard.bodyExcerpt(Data(), limit: 10).isEmpty)
        #expect(Redaction.standard.bodyExcerpt(Data("42".utf8), limit: 10) == "42")
    }

    @Test("URLs have sensitive query values and passwords redacted, and are otherwise untouched")
    func urls() throws {
        // Given
        let withToken = try #require(URL(string: "https://api.test/books?access_token=s3cret&page=2"))
        let withPassword = try #require(URL(string: "https://ann:hunter2@api.test/books"))
        let plain = try #require(URL(string: "https://api.test/books?page=2&q=a%20b"))
        // When
        let redactedToken = Redaction.standard.url(withToken)
        let redactedPassword = Redaction.standard.url(withPassword)
        // Then
        #expect(!redactedToken.contains("s3cret"))
        #expect(redactedToken.contains("page=2"))
        #expect(redactedToken.contains("access_token="))
        #expect(!redactedPassword.contains("hunter2"))
        #expect(redactedPassword.contains("ann"))
        #expect(Redaction.standard.url(plain) == plain.absoluteString)
    }

    @Test("Truncation keeps whole UTF-8 characters and says how many bytes were left out")
    func truncation() {
        // Given "é" is two bytes: a limit of 4 falls inside the third character
        let text = "ééééé"
        // When
        let truncated = Redaction.truncate(text, limit: 5)
        // Then
        #expect(truncated == "éé… (6 more bytes)")
        #expect(Redaction.truncate(text, limit: 10) == text)
        #expect(Redaction.truncate("👍👍", limit: 3) == "… (8 more bytes)")
        #expect(Redaction.truncate("abcdef", limit: 3) == "abc… (3 more bytes)")
    }

    @Test("A long body excerpt is at most the limit plus the marker")
    func excerptBound() {
        // Given
        let body = Data(("[" + Array(repeating: #""ü""#, count: 1000).joined(separator: ",") + "]").utf8)
        // When
        let excerpt = Redaction.standard.bodyExcerpt(body, limit: 1024)
        // Then
        let marker = excerpt.range(of: "… (")
        let kept = marker.map { excerpt[..<$0.lowerBound] } ?? ""
        #expect(marker != nil)
        #expect(kept.utf8.count <= 1024)
        #expect(kept.utf8.count >= 1020)
        #expect(excerpt.hasSuffix("more bytes)"))
    }
}

@Suite("Pretty body excerpts")
struct PrettyExcerptTests {
    @Test("A pretty excerpt reads as JSONEncoder's pretty printing, secrets redacted, empty containers on their line")
    func asTheEncoderWrites() throws {
        let body = Data(#"{"b": [1, {"token": "t0k", "x": "a:b,\"c\"{"}], "a": {"n": null, "e": [], "o": {}}}"#.utf8)
        let excerpt = Redaction.standard.bodyExcerpt(body, limit: 4096, pretty: true)
        let expected = """
            {
              "a" : {
                "e" : [],
                "n" : null,
                "o" : {}
              },
              "b" : [
                1,
                {
                  "token" : "<redacted>",
                  "x" : "a:b,\\"c\\"{"
                }
              ]
            }
            """
        #expect(excerpt == expected)
    }

    @Test("A string ending in an escaped backslash ends there; a cut keeps whole characters; an excerpt of exactly the limit is whole")
    func edges() {
        let backslash = Redaction.standard.bodyExcerpt(Data(#"["a\\",{"b":1}]"#.utf8), limit: 4096, pretty: true)
        #expect(backslash == "[\n  \"a\\\\\",\n  {\n    \"b\" : 1\n  }\n]")
        // "[\n  \"ééé\"\n]" is 14 bytes, the first "é" its 6th and 7th: a cut at 6 falls inside it.
        let accents = Data(#"["ééé"]"#.utf8)
        #expect(Redaction.standard.bodyExcerpt(accents, limit: 6, pretty: true) == "[\n  \"… (9 more bytes)")
        #expect(Redaction.standard.bodyExcerpt(accents, limit: 7, pretty: true) == "[\n  \"é… (7 more bytes)")
        #expect(Redaction.standard.bodyExcerpt(accents, limit: 14, pretty: true) == "[\n  \"ééé\"\n]")
    }

    @Test("A nested body builds only the excerpt: its indentation would be tens of times its size")
    func deepBodyIsCut() async throws {
        // 32 levels (the most parsed) and 400,000 values: pretty-printed whole, about 26 MB of indentation.
        let body = Data(
            (String(repeating: "[", count: 32) + Array(repeating: "0", count: 400_000).joined(separator: ",")
                + String(repeating: "]", count: 32)).utf8)
        let excerpt = await onPlainThread { Redaction.standard.bodyExcerpt(body, limit: 1000, pretty: true) }
        let kept = try #require(excerpt.components(separatedBy: "… (").first)
        #expect(kept.utf8.count == 1000)
        #expect(excerpt.hasSuffix(" more bytes)"))
        let total = try #require(Int(excerpt.split(separator: "(").last?.split(separator: " ").first ?? ""))
        #expect(total > 25_000_000)
    }
}
