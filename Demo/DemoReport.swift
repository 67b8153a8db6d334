import Foundation
import Networking

/// Prints numbered steps and remembers whether any behaved unexpectedly.
final class DemoReport {
    private(set) var failures: [String] = []
    private var step = 0
    private let useColor = isatty(STDOUT_FILENO) != 0

    func begin(_ title: String) {
        step += 1
        print("\n\(paint("\(step). \(title)", code: "1"))")
    }

    func ok(_ message: String) {
        print("   \(paint("ok", code: "32"))   \(message)")
    }

    func info(_ message: String) {
        print("        \(message)")
    }

    func fail(_ message: String) {
        failures.append("step \(step): \(message)")
        print("   \(paint("FAIL", code: "31")) \(message)")
    }

    private func paint(_ text: String, code: String) -> String {
        useColor ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}

/// Shows the library's log lines indented under the current step.
struct DemoLogger: NetworkLogging {
    func log(_ record: LogRecord) {
        print("        log: \(record.message)")
    }
}
