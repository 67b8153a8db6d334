import Foundation
import Testing

@testable import Networking

/// Forms read back by a real server-side parser: werkzeug (Flask's), through python3. Skipped when
/// python3 or werkzeug is missing.
@Suite("Multipart form data read by werkzeug", .enabled(if: Subprocess.pythonHas(["werkzeug"])))
struct MultipartInteroperabilityTests {
    /// Parses the body on standard input with werkzeug and prints the fields and files as JSON, with
    /// every value in base64 so the comparison is byte for byte.
    private static let script = """
        import base64, io, json, sys
        from werkzeug.formparser import parse_form_data
        body = sys.stdin.buffer.read()
        environ = {"REQUEST_METHOD": "POST", "CONTENT_TYPE": sys.argv[1], "CONTENT_LENGTH": str(len(body)),
                   "wsgi.input": io.BytesIO(body)}
        _, form, files = parse_form_data(environ, max_form_memory_size=None, silent=False)
        b64 = lambda data: base64.b64encode(data).decode()
        print(json.dumps({
            "fields": [[k, b64(v.encode())] for k, v in form.items(multi=True)],
            "files": [[k, f.filename, f.content_type, b64(f.read())] for k, f in files.items(multi=True)],
        }))
        """

    private struct Parsed: Decodable {
        var fields: [[String]]
        var files: [[String]]
    }

    @Test(
        "Names, file names, types and contents survive, with a random and with a quoted boundary",
        arguments: [nil, "a:b=c?d (e)"])
    func werkzeugReadsTheForm(boundary: String?) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var generator = SeededGenerator(seed: 2046)
        let binary = generator.bytes(3000)
        let fileBytes = generator.bytes(70_000)
        let file = try directory.file("photo.jpg", contents: Data(fileBytes))

        var form =
            try boundary.map { (boundary) throws(MultipartError) in try MultipartFormData(boundary: boundary) }
            ?? MultipartFormData()
        form.append("plain", name: "simple")
        form.append("line one\r\nline two\n«unicode» 📄", name: "multi\"line\r\nname")
        form.append(Data("utf-8 text é".utf8), name: "no file name", contentType: "text/plain")
        form.append(Data(binary), name: "blob", fileName: "ré\"sumé\n.bin")
        try form.append(fileAt: file, name: "photo")

        let python = try #require(Subprocess.find("python3"))
        let body = try form.encodedData(maximumSize: 1 << 20)
        let result = try await Subprocess.run(python, ["-c", Self.script, form.contentType], input: body)
        #expect(result.status == 0)
        let parsed = try JSONDecoder().decode(Parsed.self, from: result.output)

        // werkzeug turns %22 back into a quote and leaves %0D and %0A as they are.
        func werkzeugName(_ name: String) -> String {
            RandomForm.escaped(name).replacingOccurrences(of: "%22", with: "\"")
        }
        func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
        #expect(
            parsed.fields == [
                ["simple", base64(Array("plain".utf8))],
                [werkzeugName("multi\"line\r\nname"), base64(Array("line one\r\nline two\n«unicode» 📄".utf8))],
                ["no file name", base64(Array("utf-8 text é".utf8))],
            ])
        #expect(
            parsed.files == [
                ["blob", werkzeugName("ré\"sumé\n.bin"), "application/octet-stream", base64(binary)],
                ["photo", "photo.jpg", "image/jpeg", base64(fileBytes)],
            ])
    }
}
