import Foundation

/// Parameters as the text fields of a multipart form (see ``ParameterEncoding/multipart``).
enum MultipartFields {
    /// Appends each member of `object`, in name order.
    static func append(_ object: [String: JSONValue], to form: inout MultipartFormData) {
        for name in object.keys.sorted() {
            guard let value = object[name] else { continue }
            append(value, name: name, to: &form)
        }
    }

    private static func append(_ value: JSONValue, name: String, to form: inout MultipartFormData) {
        switch value {
        case .null: break
        case .string(let text): form.append(text, name: name)
        case .bool(let flag): form.append(flag ? "true" : "false", name: name)
        case .int, .double, .object: form.append(value.description, name: name)
        case .array(let elements): for element in elements { append(element, name: name, to: &form) }
        }
    }
}
