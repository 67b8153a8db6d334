import Testing

@testable import Networking

@Suite("MIME types")
struct MIMETypesTests {
    @Test(
        "Common extensions",
        arguments: [
            ("png", "image/png"), ("jpg", "image/jpeg"), ("jpeg", "image/jpeg"), ("gif", "image/gif"),
            ("webp", "image/webp"), ("heic", "image/heic"), ("svg", "image/svg+xml"), ("mp3", "audio/mpeg"),
            ("m4a", "audio/mp4"), ("wav", "audio/wav"), ("mp4", "video/mp4"), ("mov", "video/quicktime"),
            ("webm", "video/webm"), ("pdf", "application/pdf"),
            ("docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
            ("zip", "application/zip"), ("gz", "application/gzip"), ("tar", "application/x-tar"),
            ("txt", "text/plain"), ("html", "text/html"), ("css", "text/css"), ("csv", "text/csv"),
            ("md", "text/markdown"), ("js", "text/javascript"), ("json", "application/json"),
            ("xml", "application/xml"), ("yaml", "application/yaml"), ("yml", "application/yaml"),
            ("wasm", "application/wasm"), ("woff2", "font/woff2"), ("ttf", "font/ttf"), ("swift", "text/x-swift"),
        ])
    func known(ext: String, type: String) {
        #expect(MIMETypes.type(forPathExtension: ext) == type)
    }

    @Test("Extensions compare case-insensitively and may start with a dot")
    func caseAndDot() {
        #expect(MIMETypes.type(forPathExtension: "PNG") == "image/png")
        #expect(MIMETypes.type(forPathExtension: "Json") == "application/json")
        #expect(MIMETypes.type(forPathExtension: ".jpg") == "image/jpeg")
    }

    @Test("Unknown and empty extensions are application/octet-stream")
    func unknown() {
        #expect(MIMETypes.type(forPathExtension: "") == "application/octet-stream")
        #expect(MIMETypes.type(forPathExtension: "nope") == "application/octet-stream")
        #expect(MIMETypes.type(forPathExtension: "tar.gz") == "application/octet-stream")
    }

    @Test("The table is large, lower-case, and its types carry no parameters")
    func table() {
        #expect(MIMETypes.typesByExtension.count >= 150)
        for (ext, type) in MIMETypes.typesByExtension {
            #expect(ext == ext.lowercased() && !ext.hasPrefix("."), "\(ext)")
            #expect(!type.contains(";") && !type.contains(" ") && type.split(separator: "/").count == 2, "\(type)")
        }
    }
}
