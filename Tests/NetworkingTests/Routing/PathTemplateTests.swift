import Foundation
import Testing

@testable import Networking

/// Path templates as pure logic: parsing, rendering and every refusal. What the server receives
/// is checked end to end in `RoutesIntegrationTests`.
@Suite("PathTemplate")
struct PathTemplateTests {
    private func render(_ template: String, _ values: JSONValue) throws -> String {
        try PathTemplate(template).render(values)
    }

    /// The reason a template cannot be rendered with `values`, or "" (recording an issue).
    private func renderRefusal(
        _ template: String, _ values: JSONValue, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        let parsed = try PathTemplate(template)
        do {
            let path = try parsed.render(values)
            Issue.record("expected a refusal, rendered \(path)", sourceLocation: sourceLocation)
            return ""
        } catch {
            return error.reason
        }
    }

    // MARK: - Placeholders

    @Test(
        "Both placeholder spellings, dotted names and escapes are parsed",
        arguments: [
            ("books/:id", ["id"]), ("books/{id}", ["id"]), ("meetings/:meeting.id/notes", ["meeting.id"]),
            ("meetings/{meeting.id}/notes/{note_id}", ["meeting.id", "note_id"]),
            ("categories/:itemID\\.json", ["itemID"]), ("a/:x/:y", ["x", "y"]), ("plain/path", []),
            ("time\\:12", []), ("http://localhost:8080/files/:name", ["name"]),
            ("https://files.example.com/:name", ["name"]), ("files/:_id2", ["_id2"]),
        ])
    func variables(template: String, expected: [String]) throws {
        #expect(try PathTemplate(template).variables == expected)
        #expect(try PathTemplate(template).text == template)
        #expect(try PathTemplate(template).description == template)
    }

    @Test("`:name` and `{name}` render the same")
    func spellings() throws {
        #expect(try render("books/:id/cover", ["id": 12]) == "books/12/cover")
        #expect(try render("books/{id}/cover", ["id": 12]) == "books/12/cover")
        #expect(try render("{a}{b}", ["a": "x", "b": "y"]) == "xy")
    }

    @Test("Dotted names walk into nested values, in both spellings")
    func dotted() throws {
        let values: JSONValue = ["meeting": ["id": 5, "room": ["name": "Blue"]]]
        #expect(try render("meetings/:meeting.id", values) == "meetings/5")
        #expect(try render("meetings/{meeting.id}/rooms/{meeting.room.name}", values) == "meetings/5/rooms/Blue")
    }

    @Test("A backslash ends a placeholder and makes the next character literal")
    func escapes() throws {
        // `\.json` after the name: the text in a Swift string; in a JSON file it is written `\\.json`.
        #expect(try render("categories/:itemID\\.json", ["itemID": 1234]) == "categories/1234.json")
        #expect(try render("time\\:12/:id", ["id": 1]) == "time:12/1")
        // Text no URL holds unencoded is sent encoded.
        #expect(try render("a\\\\b", [:]) == "a%5Cb")
        #expect(try render("x\\{y}", [:]) == "x%7By%7D")
    }

    @Test("A dot right after a name belongs to the text after it")
    func trailingDot() throws {
        #expect(try render("files/:id.", ["id": 7]) == "files/7.")
    }

    @Test("`:8080` and `://` stay literal, so absolute URL templates work")
    func absoluteURLs() throws {
        #expect(try render("http://localhost:8080/files/:name", ["name": "a"]) == "http://localhost:8080/files/a")
        #expect(try render("https://covers.example.com/:isbn\\.png", ["isbn": "978"]) == "https://covers.example.com/978.png")
        #expect(try render("http://[2001:db8::1]:8080/status/:id", ["id": 7]) == "http://[2001:db8::1]:8080/status/7")
        #expect(try PathTemplate("http://[::1]/x").variables == [])
        #expect(try render("https://h.example/search?filter[:field]=x", ["field": "year"]) == "https://h.example/search?filter[year]=x")
        #expect(throws: RepositoryError.self) { try PathTemplate("http://[::1/x") }
    }

    @Test("A template's own text is percent-encoded where no URL may hold it; `%` before two hex digits, the host and the rest are kept")
    func literalTextIsEncoded() throws {
        #expect(try render("reports/Q1 2024/:id", ["id": 1]) == "reports/Q1%202024/1")
        #expect(try render("sales/100%/a|b/ünï", [:]) == "sales/100%25/a%7Cb/%C3%BCn%C3%AF")
        // Brackets in the query stay (`filter[year]=x`, as Rails and PHP read them); in the path they are encoded.
        #expect(try render("files/a%20b/x[1]?q=a b&r=%zz&f[k]=1", [:]) == "files/a%20b/x%5B1%5D?q=a%20b&r=%25zz&f[k]=1")
        #expect(try render("https://h.example/a b/:x", ["x": "y"]) == "https://h.example/a%20b/y")
        #expect(try render("v1/\\{x}/y\\:z", [:]) == "v1/%7Bx%7D/y:z")
        #expect(try render("s?q=a+b&c=%2B%26&d=x=y", [:]) == "s?q=a+b&c=%2B%26&d=x=y")
        #expect(try render("http://[::1]:8080/a b/:id", ["id": 1]) == "http://[::1]:8080/a%20b/1")
    }

    // MARK: - Values

    @Test(
        "Numbers and booleans are rendered in their JSON form",
        arguments: [
            (JSONValue.int(7), "7"), (.int(-3), "-3"), (.double(2.5), "2.5"), (.double(3), "3"), (.double(-0.25), "-0.25"),
            (.double(1.7e15), "1700000000000000"), (.double(-9_007_199_254_740_992), "-9007199254740992"),
            (.bool(true), "true"), (.bool(false), "false"), (.string("dune"), "dune"),
        ])
    func scalars(value: JSONValue, expected: String) throws {
        #expect(try render("x/:v", ["v": value]) == "x/\(expected)")
    }

    @Test("Each value is percent-encoded as exactly one segment")
    func encoding() throws {
        #expect(try render("echo/:v", ["v": "a b/c?d#e%f ü"]) == "echo/a%20b%2Fc%3Fd%23e%25f%20%C3%BC")
        #expect(try render("echo/:v", ["v": "a/..b"]) == "echo/a%2F..b")
        // Sub-delimiters, ":" and "@" are allowed in a segment (RFC 3986) and kept, but ";", which
        // servlet containers cut the segment at.
        #expect(try render("echo/:v", ["v": "a:b@c!$&'()*+,;="]) == "echo/a:b@c!$&'()*+,%3B=")
    }

    @Test(
        "A value whose '/' or '\\' would make a dot segment once a server decodes it is refused",
        arguments: [
            "../admin", "../../admin", "a/../../b", "./x", "x/..", "..\\x", "a\\..\\b", "x/..;y/z",
            // A combining mark after the separator (one Character in Swift, two code points to a server)
            "../\u{301}", "../\u{301}\u{600}/../admin", "..;\u{301}", "x/..\\\u{301}",
        ])
    func dotSegmentsAcrossSeparators(value: String) throws {
        #expect(try renderRefusal("books/:id", ["id": .string(value)]).hasPrefix(#"the path variable "id" is "#))
    }

    @Test("An empty value is refused in the path, sent in the query")
    func emptyValues() throws {
        #expect(try render("search/:scope?q=:q", ["scope": "all", "q": ""]) == "search/all?q=")
        #expect(try renderRefusal("search/:scope?q=:q", ["scope": "", "q": "x"]).contains(#""scope""#))
    }

    @Test("A dot-segment value is refused, since even encoded it would change the path's shape", arguments: [".", ".."])
    func dotSegments(value: String) throws {
        // Given: a value the URL layer would treat as "this folder" or "the parent folder"; sent as
        // "%2E%2E", a normaliser such as nginx decodes it and removes the dot segment all the same
        // When
        let reason = try renderRefusal("books/:id/cover", ["id": .string(value)])
        // Then: it is refused like an empty value, naming the placeholder and the value
        #expect(reason == "the path variable \"id\" is \"\(value)\", which would be read as a dot segment and change the path")
        #expect(try renderRefusal("books/{id}", ["id": .string(value)]).hasPrefix(#"the path variable "id" is "."#))
    }

    @Test("Values with dots that are not dot segments are sent as they are")
    func dotsInsideValues() throws {
        #expect(try render("files/:name", ["name": "..."]) == "files/...")
        #expect(try render("files/:name", ["name": ".hidden"]) == "files/.hidden")
        #expect(try render("files/:name", ["name": "a..b"]) == "files/a..b")
        // After a "?", a value is a query component, where dots mean nothing.
        #expect(try render("search?q=:q", ["q": ".."]) == "search?q=..")
        // A dot value within a longer segment leaves no dot segment: "..json" is a name.
        #expect(try render("files/:name\\.json", ["name": "."]) == "files/..json")
        #expect(try render("files/{a}{b}/x", ["a": "a", "b": "."]) == "files/a./x")
    }

    @Test("A segment that values and literals make a dot segment together is refused")
    func dotSegmentsAcrossParts() throws {
        #expect(try renderRefusal("files/{a}{b}/x", ["a": ".", "b": "."]).hasPrefix(#"the path variable "b" is "."#))
        #expect(try renderRefusal("files/{a}\\./x", ["a": "."]).hasPrefix(#"the path variable "a" is "."#))
        #expect(try renderRefusal(":a", ["a": ".."]).hasPrefix(#"the path variable "a" is "..""#))
    }

    @Test("A dotted name is looked up as one key first (OpenAPI's {post.id}), then walked")
    func dottedKeys() throws {
        #expect(try render("posts/{post.id}", ["post.id": 5]) == "posts/5")
        #expect(try render("posts/{post.id}", ["post": ["id": 6]]) == "posts/6")
        #expect(try render("posts/{post.id}", ["post.id": 5, "post": ["id": 6]]) == "posts/5")
    }

    // MARK: - Refusals at render time

    @Test("A missing variable is named, never rendered as (null) or an empty segment")
    func missing() throws {
        let reason = try renderRefusal("books/:id/notes/:noteID", ["id": 1])
        #expect(reason == #"the path variable "noteID" is missing (or null)"#)
        #expect(!reason.contains("(null)"))
        #expect(
            try renderRefusal("meetings/:meeting.id", ["meeting": ["name": "x"]]) == #"the path variable "meeting.id" is missing (or null)"#
        )
        #expect(try renderRefusal("meetings/:meeting.id", ["meeting": 5]) == #"the path variable "meeting.id" is missing (or null)"#)
    }

    @Test("A null value is refused like a missing one")
    func null() throws {
        #expect(try renderRefusal("books/{id}", ["id": .null]) == #"the path variable "id" is missing (or null)"#)
    }

    @Test("An empty string is refused rather than leaving an empty segment")
    func empty() throws {
        #expect(
            try renderRefusal("books/:id/cover", ["id": ""])
                == #"the path variable "id" is empty, which would leave an empty path segment"#)
    }

    @Test("Objects and arrays are refused, naming the kind")
    func notScalar() throws {
        #expect(
            try renderRefusal("books/:id", ["id": ["a": 1]]) == #"the path variable "id" is an object, not a string, number or boolean"#)
        #expect(try renderRefusal("books/:id", ["id": [1, 2]]) == #"the path variable "id" is an array, not a string, number or boolean"#)
    }

    // MARK: - Invalid templates

    @Test(
        "Invalid templates are refused when parsed, quoting the template",
        arguments: [
            ("books/{id", #"the path "books/{id" has a "{" without its "}""#),
            ("books/{}", #"the path "books/{}" has an invalid placeholder "{}": a name such as {id} or {meeting.id}"#),
            ("books/{1a}", #"the path "books/{1a}" has an invalid placeholder "{1a}": a name such as {id} or {meeting.id}"#),
            ("books/{a b}", #"the path "books/{a b}" has an invalid placeholder "{a b}": a name such as {id} or {meeting.id}"#),
            ("books/{id.}", #"the path "books/{id.}" has an invalid placeholder "{id.}": a name such as {id} or {meeting.id}"#),
            ("books/:id\\", #"the path "books/:id\" ends with a lone "\""#),
            ("books/{id}}", #"the path "books/{id}}" has a "}" without its "{": write "\}" for the character"#),
            (
                "books{?page}",
                #"the path "books{?page}" has "{?page}", an RFC 6570 operator, which templates do not support: write ?page={page}, or pass the value in parameters: or query:"#
            ),
            (
                "files/{+path}",
                #"the path "files/{+path}" has "{+path}", an RFC 6570 operator, which templates do not support: write ?page={page}, or pass the value in parameters: or query:"#
            ),
        ])
    func invalid(template: String, reason: String) {
        #expect(invalidConfigurationReason { () throws(RepositoryError) in _ = try PathTemplate(template) } == reason)
    }

    @Test(
        "A template's own dot segment is refused: servers resolve it, so the call would leave the base URL's path",
        arguments: [
            "../admin", "books/../x", "books/..", "a/%2E%2E/b", "a/%2e%2E/b", "..;x/y", "{id}/../x", "..?page=1",
            // Escapes beside bytes that are not UTF-8, and a template's own ".." beside a value.
            "files/%2E%2E%2F%FF/admin", "a/{x}%2F..%2Fadmin", "a/..%2F{x}", "a/{x}%5C..%5C{y}",
        ])
    func literalDotSegments(template: String) {
        let reason = invalidConfigurationReason { () throws(RepositoryError) in _ = try PathTemplate(template) }
        #expect(reason.hasSuffix(#"has a ".." segment, which servers resolve, so the request would leave the base URL's path"#))
    }

    @Test("A template naming another scheme than http or https is refused, not sent as a path under the base URL")
    func otherSchemes() throws {
        for template in ["wss://stream.example.com/feed", "ftp://h:21/:p", "WS://h/x", "git+ssh://h/r"] {
            let reason = invalidConfigurationReason { () throws(RepositoryError) in _ = try PathTemplate(template) }
            #expect(reason.contains("names the scheme"), "\(template): \(reason)")
        }
        // A colon without "//" is a path's: Google-style custom methods, placeholders.
        #expect(try render("books\\:batchGet", [:]) == "books:batchGet")
        #expect(try render(":id/x", ["id": 1]) == "1/x")
        #expect(try render("HTTPS://h.example/x", [:]) == "HTTPS://h.example/x")
    }

    @Test("Dots that are no dot segment, in the query, or in a template that names its server are kept")
    func literalDotsKept() throws {
        #expect(try render("books/..x/.hidden/x..", [:]) == "books/..x/.hidden/x..")
        // A "." names the folder it is in: it cannot climb (a value "." is still refused).
        #expect(try render("./users/:id", ["id": 1]) == "./users/1")
        #expect(try render("\\{a\\}/b", [:]) == "%7Ba%7D/b")
        #expect(
            invalidConfigurationReason { () throws(RepositoryError) in _ = try PathTemplate("\\{a\\}/b}") }.contains(
                #"has a "}" without its "{""#))
        // Only a template starting with the placeholder `:baseURL` names its server.
        #expect(try !PathTemplate(":baseURLx/p").namesItsServer)
        #expect(try PathTemplate(":baseURL/p").namesItsServer)
        #expect(try render("search?path=../x", [:]) == "search?path=../x")
        #expect(try render("https://files.example.com/a/../b", [:]) == "https://files.example.com/a/../b")
        #expect(try render("books/\\}", [:]) == "books/%7D")
        // A literal `%2E` after a "." value makes ".." too.
        #expect(try renderRefusal("files/{x}%2E", ["x": "."]).hasPrefix(#"the path variable "x" is "."#))
        #expect(try render("files/{x}%2E", ["x": "a"]) == "files/a%2E")
        // Dots beside a value are the value's to complete: checked at the call.
        #expect(try render("files/.{x}.", ["x": "a"]) == "files/.a.")
        #expect(try render("files/{x}..{y}", ["x": "a", "y": "b"]) == "files/a..b")
        #expect(try render("files/%FF%2E%2E", [:]) == "files/%FF%2E%2E")
    }

    @Test("A route with an invalid template is refused, naming the route")
    func invalidInRoute() {
        let reason = invalidConfigurationReason { () throws(RepositoryError) in _ = try Route(name: "book", path: "books/{id") }
        #expect(reason == #"route "book": the path "books/{id" has a "{" without its "}""#)
    }

    @Test("Templates compare by their text")
    func equality() throws {
        #expect(try PathTemplate("books/:id") == PathTemplate("books/:id"))
        #expect(try PathTemplate("books/:id") != PathTemplate("books/{id}"))
    }

    @Test("After a ? in the template, a value is one query component: it cannot add query items")
    func valuesInTheQuery() throws {
        #expect(try render("search?q=:term&page=:page", ["term": "a&admin=true+b", "page": 2]) == "search?q=a%26admin%3Dtrue%2Bb&page=2")
    }

    @Test(
        "An absolute http(s) URL filling a template's leading :baseURL is kept whole (WebApiClient's fixture); anywhere else it is one segment"
    )
    func absoluteURLAtTheStart() throws {
        #expect(try render(":tenant/items", ["tenant": "https://evil.example"]) == "https:%2F%2Fevil.example/items")
        #expect(try render("{baseURL}/items", ["baseURL": "https://evil.example"]) == "https:%2F%2Fevil.example/items")
        for value in ["https://h/p?a=1", "https://user@h", "https://h/#top", "not a url"] {
            #expect(throws: PathTemplateError.notBaseURL("baseURL")) { try PathTemplate(":baseURL/x").render(["baseURL": .string(value)]) }
        }
        #expect(try render(":baseURL/yes/i/can", ["baseURL": "https://example.com"]) == "https://example.com/yes/i/can")
        #expect(try render(":baseURL/yes", ["baseURL": "http://example.com:8080/api/"]) == "http://example.com:8080/api/yes")
        #expect(try render("files/:name", ["name": "https://example.com"]) == "files/https:%2F%2Fexample.com")
        #expect(try render(":name/x", ["name": "javascript://example.com"]) == "javascript:%2F%2Fexample.com/x")
    }

    @Test("A value that is a dot segment before a ';' is refused: servers such as Tomcat cut parameters first")
    func dotSegmentsWithParameters() throws {
        #expect(try renderRefusal("users/:id/profile", ["id": "..;"]).hasPrefix(#"the path variable "id" is "..;""#))
        #expect(try renderRefusal("users/:id/profile", ["id": ".;x"]).hasPrefix(#"the path variable "id" is ".;x""#))
        #expect(try render("users/:id/profile", ["id": "a;..;"]) == "users/a%3B..%3B/profile")
    }

    @Test("Dots after a name are text, read in one pass however many there are", .timeLimit(.minutes(1)))
    func manyTrailingDots() throws {
        let dots = String(repeating: ".", count: 200_000)
        let template = try PathTemplate(":a" + dots)
        #expect(template.variables == ["a"])
        #expect(try template.render(["a": "x"]) == "x" + dots)
    }

    @Test("A template with a fragment or, when absolute, a user is refused, without quoting secrets")
    func fragmentsAndUsers() {
        #expect(
            invalidConfigurationReason { () throws(RepositoryError) in _ = try PathTemplate("docs#:section") }
                == ##"the path "docs#:section" has a "#": a request sends no fragment (write %23 for the character)"##)
        let reason = invalidConfigurationReason { () throws(RepositoryError) in _ = try PathTemplate("https://user:pw@h/:id") }
        #expect(reason.contains("names a user"))
        #expect(!reason.contains("pw"))
    }

    @Test("A value in the host of an absolute template keeps only unreserved characters: no user, password or port")
    func valuesInTheHost() throws {
        #expect(try render("https://{tenant}.example.com/x", ["tenant": "acme"]) == "https://acme.example.com/x")
        #expect(try render("https://{tenant}.example.com/:id", ["tenant": "u:p@a", "id": "a:b"]) == "https://u%3Ap%40a.example.com/a:b")
    }
}
