/// The media type of a file, guessed from its name's extension, for the `Content-Type` of uploaded
/// files and multipart parts.
///
/// Linux has no system database a Swift package can rely on (`/etc/mime.types` is optional and
/// differs between distributions) and the answer must not change with the machine, so the library
/// carries its own table of about 180 common extensions: images, audio, video, documents, archives,
/// text, source code, fonts and data formats. Types follow the IANA registry where it has one and
/// common practice otherwise (for example `text/javascript`, RFC 9239). `text/*` types carry no
/// `charset` parameter: the library cannot know the encoding of a file's bytes, and the default of
/// the receiving side is a better guess than a wrong label.
enum MIMETypes {
    /// The type for files with an unknown or missing extension (RFC 2046 §4.5.1).
    static let fallback = "application/octet-stream"

    /// The media type for a path extension such as `"png"` or `"JSON"`, compared case-insensitively
    /// with any leading dot ignored; ``fallback`` when the extension is unknown or empty.
    static func type(forPathExtension ext: String) -> String {
        let key = ext.hasPrefix(".") ? String(ext.dropFirst()) : ext
        return typesByExtension[key.lowercased()] ?? fallback
    }

    /// Lower-case extension, without its dot → media type without parameters.
    static let typesByExtension: [String: String] = [
        // Images
        "apng": "image/apng", "avif": "image/avif", "bmp": "image/bmp", "gif": "image/gif",
        "heic": "image/heic", "heif": "image/heif", "ico": "image/vnd.microsoft.icon", "jpe": "image/jpeg",
        "jpeg": "image/jpeg", "jpg": "image/jpeg", "jfif": "image/jpeg", "jxl": "image/jxl",
        "png": "image/png", "psd": "image/vnd.adobe.photoshop", "svg": "image/svg+xml", "svgz": "image/svg+xml",
        "tif": "image/tiff", "tiff": "image/tiff", "webp": "image/webp", "dng": "image/x-adobe-dng",
        "cr2": "image/x-canon-cr2", "nef": "image/x-nikon-nef",
        // Audio
        "aac": "audio/aac", "aif": "audio/aiff", "aiff": "audio/aiff", "amr": "audio/amr",
        "flac": "audio/flac", "m4a": "audio/mp4", "mid": "audio/midi", "midi": "audio/midi",
        "mp3": "audio/mpeg", "oga": "audio/ogg", "ogg": "audio/ogg", "opus": "audio/opus",
        "wav": "audio/wav", "weba": "audio/webm", "caf": "audio/x-caf",
        // Video
        "3gp": "video/3gpp", "3g2": "video/3gpp2", "avi": "video/x-msvideo", "flv": "video/x-flv",
        "m4v": "video/mp4", "mkv": "video/x-matroska", "mov": "video/quicktime", "mp4": "video/mp4",
        "mpeg": "video/mpeg", "mpg": "video/mpeg", "ogv": "video/ogg", "ts": "video/mp2t",
        "webm": "video/webm", "wmv": "video/x-ms-wmv",
        // Documents
        "pdf": "application/pdf", "rtf": "application/rtf", "epub": "application/epub+zip",
        "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text",
        "ods": "application/vnd.oasis.opendocument.spreadsheet",
        "odp": "application/vnd.oasis.opendocument.presentation",
        "pages": "application/vnd.apple.pages", "numbers": "application/vnd.apple.numbers",
        "ps": "application/postscript", "eps": "application/postscript",
        "ics": "text/calendar", "vcf": "text/vcard", "eml": "message/rfc822",
        // Archives and packages
        "7z": "application/x-7z-compressed", "br": "application/x-brotli", "bz2": "application/x-bzip2",
        "gz": "application/gzip", "tgz": "application/gzip", "jar": "application/java-archive",
        "rar": "application/vnd.rar", "tar": "application/x-tar", "xz": "application/x-xz",
        "zip": "application/zip", "zst": "application/zstd", "apk": "application/vnd.android.package-archive",
        "deb": "application/vnd.debian.binary-package", "rpm": "application/x-rpm",
        "dmg": "application/x-apple-diskimage", "iso": "application/x-iso9660-image",
        "exe": "application/vnd.microsoft.portable-executable",
        "msi": "application/x-msi", "bin": "application/octet-stream", "wasm": "application/wasm",
        // Text
        "txt": "text/plain", "text": "text/plain", "log": "text/plain", "conf": "text/plain", "ini": "text/plain",
        "md": "text/markdown", "markdown": "text/markdown", "html": "text/html", "htm": "text/html",
        "xhtml": "application/xhtml+xml", "css": "text/css", "csv": "text/csv", "tsv": "text/tab-separated-values",
        "rst": "text/x-rst", "tex": "application/x-tex", "srt": "application/x-subrip", "vtt": "text/vtt",
        // Source code and scripts
        "js": "text/javascript", "mjs": "text/javascript", "cjs": "text/javascript", "jsx": "text/jsx",
        "tsx": "text/tsx", "swift": "text/x-swift", "c": "text/x-c", "h": "text/x-c", "cc": "text/x-c++",
        "cpp": "text/x-c++", "hpp": "text/x-c++", "m": "text/x-objective-c", "mm": "text/x-objective-c++",
        "java": "text/x-java", "kt": "text/x-kotlin", "py": "text/x-python", "rb": "text/x-ruby",
        "go": "text/x-go", "rs": "text/x-rust", "php": "application/x-httpd-php", "pl": "text/x-perl",
        "sh": "application/x-sh", "bash": "application/x-sh", "sql": "application/sql",
        "cs": "text/x-csharp", "scala": "text/x-scala", "lua": "text/x-lua", "r": "text/x-r",
        "dart": "text/x-dart", "diff": "text/x-diff", "patch": "text/x-diff",
        // Data formats
        "json": "application/json", "jsonld": "application/ld+json", "ndjson": "application/x-ndjson",
        "geojson": "application/geo+json", "map": "application/json", "webmanifest": "application/manifest+json",
        "xml": "application/xml", "xsl": "application/xslt+xml", "xslt": "application/xslt+xml",
        "rss": "application/rss+xml", "atom": "application/atom+xml", "plist": "application/x-plist",
        "yaml": "application/yaml", "yml": "application/yaml", "toml": "application/toml",
        "protobuf": "application/x-protobuf", "pb": "application/x-protobuf",
        "avro": "application/avro", "parquet": "application/vnd.apache.parquet", "cbor": "application/cbor",
        "msgpack": "application/msgpack", "sqlite": "application/vnd.sqlite3",
        "graphql": "application/graphql", "gql": "application/graphql",
        // Fonts
        "otf": "font/otf", "ttf": "font/ttf", "ttc": "font/collection", "woff": "font/woff", "woff2": "font/woff2",
        "eot": "application/vnd.ms-fontobject",
        // Keys and certificates
        "pem": "application/x-pem-file", "crt": "application/x-x509-ca-cert", "cer": "application/pkix-cert",
        "der": "application/x-x509-ca-cert", "p12": "application/x-pkcs12", "pfx": "application/x-pkcs12",
        // 3D and design
        "gltf": "model/gltf+json", "glb": "model/gltf-binary", "obj": "model/obj", "stl": "model/stl",
        "usdz": "model/vnd.usdz+zip",
    ]
}
