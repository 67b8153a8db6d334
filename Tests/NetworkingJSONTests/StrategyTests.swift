import Foundation
import Testing

/// Every key, date, data and non-conforming float strategy, and userInfo.
@Suite struct StrategyTests {
    /// Reports the keys a keyed container presents, sorted (JSONDecoder's order is a hash order).
    struct Keys: Decodable, Equatable {
        let keys: [String]
        let values: [String: Int]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            keys = container.allKeys.map(\.stringValue).sorted()
            var values: [String: Int] = [:]
            for key in container.allKeys { values[key.stringValue] = try? container.decode(Int.self, forKey: key) }
            self.values = values
        }
    }

    struct Snake: Decodable, Equatable {
        let imageUrl: String?
        let userId: Int?
        let aB: Int?
        let html: Int?
        let urlString: Int?
        let _private: Int?
        // swift-format-ignore: AlwaysUseLowerCamelCase
        let trailing_: Int?
        let x1Y: Int?
    }

    static let snakeKeys = [
        "image_url", "imageUrl", "IMAGE_URL", "Image_Url", "user_id", "user__id", "_user_id", "user_id_", "__user_id__", "a_b", "aB",
        "_", "__", "a_", "_a", "a", "A", "html", "HTML", "url_string", "URL_STRING", "uRL_sTRING", "_private", "trailing_", "x_1_y",
        "x1_y", "x_1y", "a_b'c", "a_b^c", "a_b`c", "a_b.c", "a_b-c", "a_b c", "a_2x", "a_x2y", "a_BC1D", "ünï_cödé", "a_é", "ß_a",
        "ǆ_ǆ", "a_ß", "a_ﬁ", "日本_語", "a_\u{301}b", "_\u{301}a_b", "a\u{301}_b", "snake_😀_case", "a_b\tc", "a\\u005fb",
        "a\\u005F\\u0062", "", " ", "a_b_c_d_e_f",
    ]

    @Test(arguments: snakeKeys)
    func convertFromSnakeCase(_ key: String) {
        let object = "{\"\(key)\":1,\"x\":2}"
        assertSameAsJSONDecoder(Keys.self, object, .snakeCase)
        assertSameAsJSONDecoder(Snake.self, object, .snakeCase)
        assertSameAsJSONDecoder(Snake.self, object)
        assertSameAsJSONDecoder([String: Int].self, object, .snakeCase)
        assertSameAsJSONDecoder(Wrapper<[String: Int]>.self, #"{"value":"# + object + "}", .snakeCase)
        assertSameAsJSONDecoder(Wrapper<Keys>.self, #"{"value":"# + object + "}", .snakeCase)
    }

    @Test(arguments: [
        #"{"a_b":1,"aB":2}"#, #"{"aB":2,"a_b":1}"#, #"{"a_b":1,"a__b":2,"_a_b":3}"#, #"{"image_url":"x","imageUrl":"y"}"#,
        #"{"imageUrl":"y","image_url":"x"}"#, #"{"a_b":null,"aB":2}"#, #"{"user_id":"1","userId":2}"#,
    ])
    func duplicatesAfterConversion(_ json: String) {
        assertSameAsJSONDecoder(Keys.self, json, .snakeCase)
        assertSameAsJSONDecoder(Snake.self, json, .snakeCase)
        assertSameAsJSONDecoder([Snake].self, "[" + json + "," + json + "]", .snakeCase)
    }

    static let custom: [Configuration] = [
        Configuration(name: "uppercased") { decoder in
            decoder.keyDecodingStrategy = .custom { path in AnyKey(stringValue: path.last?.stringValue.uppercased() ?? "") }
        },
        Configuration(name: "path") { decoder in
            decoder.keyDecodingStrategy = .custom { path in
                AnyKey(stringValue: path.map { $0.intValue.map { "#\($0)" } ?? $0.stringValue }.joined(separator: "."))
            }
        },
        Configuration(name: "constant") { decoder in decoder.keyDecodingStrategy = .custom { _ in AnyKey(stringValue: "k") } },
        Configuration(name: "int key") { decoder in decoder.keyDecodingStrategy = .custom { path in AnyKey(intValue: path.count) } },
    ]

    @Test(
        arguments: custom,
        [
            #"{"a":1,"b":{"c":2,"d":[{"e":3}]}}"#, #"{"id":1,"title":"t","genre":"novel","available":true}"#, #"[{"x":1},{"y":2}]"#,
            #"{"ID":1}"#, #"{"a\u0062":1}"#, #"{"bad\x":1}"#,
        ])
    func customKeyStrategy(_ configuration: Configuration, _ json: String) {
        assertSameAsJSONDecoder(PathRecorder.self, json, configuration)
        assertSameAsJSONDecoder(Keys.self, json, configuration)
        assertSameAsJSONDecoder(Book.self, json, configuration)
        assertSameAsJSONDecoder([String: JSONAnyValue].self, json, configuration)
        assertSameAsJSONDecoder([Keys].self, json, configuration)
    }

    static let dateConfigurations: [Configuration] = [
        Configuration(name: "deferredToDate") { $0.dateDecodingStrategy = .deferredToDate },
        Configuration(name: "secondsSince1970") { $0.dateDecodingStrategy = .secondsSince1970 },
        Configuration(name: "millisecondsSince1970") { $0.dateDecodingStrategy = .millisecondsSince1970 },
        Configuration(name: "iso8601") { $0.dateDecodingStrategy = .iso8601 },
        Configuration(name: "formatted") { decoder in
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(secondsFromGMT: 0)
            formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ssXXXXX"
            decoder.dateDecodingStrategy = .formatted(formatter)
        },
        Configuration(name: "custom string") { decoder in
            decoder.dateDecodingStrategy = .custom { decoder in
                let text = try decoder.singleValueContainer().decode(String.self)
                guard let seconds = Double(text) else {
                    throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "bad date \(text)"))
                }
                return Date(timeIntervalSince1970: seconds)
            }
        },
        Configuration(name: "custom path") { decoder in
            decoder.dateDecodingStrategy = .custom { decoder in
                Date(timeIntervalSince1970: Double(decoder.codingPath.count) + (try decoder.singleValueContainer().decodeNil() ? 0.5 : 0))
            }
        },
        Configuration(name: "custom keyed") { decoder in
            decoder.dateDecodingStrategy = .custom { decoder in
                let container = try decoder.container(keyedBy: AnyKey.self)
                return Date(timeIntervalSince1970: try container.decode(Double.self, forKey: AnyKey(stringValue: "t")))
            }
        },
    ]

    static let dateTexts = [
        "0", "1700000000", "1700000000.5", "-1", "1e10", "1e400", "\"2024-01-02T03:04:05Z\"", "\"2024-01-02T03:04:05.123Z\"",
        "\"2024-01-02T03:04:05+01:00\"", "\"2024-01-02\"", "\"2024-13-02T03:04:05Z\"", "\"bad\"", "\"1700000000\"", "\"\"", "null",
        "true", "[]", #"{"t":5}"#, #"{"t":"5"}"#, "01", "\"\\u0032024-01-02T03:04:05Z\"", "\"\\x\"",
    ]

    @Test(arguments: dateConfigurations, dateTexts)
    func dates(_ configuration: Configuration, _ text: String) {
        assertSameAsJSONDecoder(Date.self, text, configuration)
        assertSameAsJSONDecoder(Wrapper<Date>.self, #"{"value":"# + text + "}", configuration)
        assertSameAsJSONDecoder(OptionalWrapper<Date>.self, #"{"value":"# + text + "}", configuration)
        assertSameAsJSONDecoder([Date].self, "[" + text + "]", configuration)
        assertSameAsJSONDecoder(Wrapper<[String: Date]>.self, #"{"value":{"d":"# + text + "}}", configuration)
        assertSameAsJSONDecoder(
            Special.self, #"{"url":"u","decimal":1,"uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","date":"# + text + #","data":""}"#,
            configuration)
    }

    static let dataConfigurations: [Configuration] = [
        Configuration(name: "base64") { $0.dataDecodingStrategy = .base64 },
        Configuration(name: "deferredToData") { $0.dataDecodingStrategy = .deferredToData },
        Configuration(name: "custom") { decoder in
            decoder.dataDecodingStrategy = .custom { decoder in
                let text = try decoder.singleValueContainer().decode(String.self)
                return Data(text.utf8.reversed())
            }
        },
    ]

    static let dataTexts = [
        "\"\"", "\"YQ==\"", "\"YWJj\"", "\"YQ\"", "\"YQ=\"", "\"Y\"", "\"====\"", "\"YQ==YQ==\"", "\"Y Q==\"", "\"YW\\/j\"",
        "\"YQ\\u003d\\u003d\"", "\"_-8\"", "\"YQ==\\n\"", "\"\\x\"", "[1,2,3]", "[]", "[256]", "[-1]", "[1,\"a\"]", "null", "5",
        "{}", "\"aGVsbG8gd29ybGQ=\"",
    ]

    @Test(arguments: dataConfigurations, dataTexts)
    func data(_ configuration: Configuration, _ text: String) {
        assertSameAsJSONDecoder(Data.self, text, configuration)
        assertSameAsJSONDecoder(Wrapper<Data>.self, #"{"value":"# + text + "}", configuration)
        assertSameAsJSONDecoder(OptionalWrapper<Data>.self, #"{"value":"# + text + "}", configuration)
        assertSameAsJSONDecoder([Data?].self, "[" + text + "]", configuration)
    }

    @Test(arguments: [
        #"{"url":"https://a.b/c?d=e#f","decimal":12.50,"uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","date":0,"data":"YQ=="}"#,
        #"{"url":"","decimal":1,"uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","date":0,"data":""}"#,
        #"{"url":"u","decimal":"1","uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","date":0,"data":""}"#,
        #"{"url":"u","decimal":1e300,"uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","date":0,"data":""}"#,
        #"{"url":"u","decimal":-0.000001,"uuid":"e621e1f8-c36c-495a-93fc-0c247a3e6e5f","date":0,"data":""}"#,
        #"{"url":"u","decimal":1,"uuid":"nope","date":0,"data":""}"#,
        #"{"url":5,"decimal":1,"uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","date":0,"data":""}"#,
        #"{"url":null,"decimal":null,"uuid":null,"date":null,"data":null}"#,
        #"{"url":"\u0068ttp://x","decimal":123456789012345678901234567890.123,"uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","date":0,"data":""}"#,
    ])
    func specialTypes(_ json: String) {
        assertSameAsJSONDecoder(Special.self, json)
        assertSameAsJSONDecoder(OptionalSpecial.self, json)
        assertSameAsJSONDecoder([Special].self, "[" + json + "]", .snakeCase)
    }

    @Test func userInfo() {
        let configuration = Configuration(name: "userInfo") { $0.userInfo = [UserInfoReader.key: "hello"] }
        assertSameAsJSONDecoder(UserInfoReader.self, #"{"value":1}"#, configuration)
        assertSameAsJSONDecoder([UserInfoReader].self, #"[{"value":1},{"value":2}]"#, configuration)
        assertSameAsJSONDecoder(UserInfoReader.self, #"{"value":1}"#)
    }

    /// Options FastJSONDecoder leaves to JSONDecoder must still give JSONDecoder's answers.
    @Test(arguments: [#"{"value":1}"#, #"{value:1,}"#, #""value":1"#, #"{"value":1} // c"#, "[1]", "{\"value\":0x10}"])
    func fallbackOptions(_ json: String) {
        let json5 = Configuration(name: "json5") { $0.allowsJSON5 = true }
        let topLevel = Configuration(name: "assumesTopLevelDictionary") { $0.assumesTopLevelDictionary = true }
        let both = Configuration(name: "json5 and assumesTopLevelDictionary") { decoder in
            decoder.allowsJSON5 = true
            decoder.assumesTopLevelDictionary = true
        }
        for configuration in [json5, topLevel, both] {
            assertSameAsJSONDecoder(Wrapper<Int>.self, json, configuration)
            assertSameAsJSONDecoder(Wrapper<Int>.self, json, configuration, keyPath: ["value"])
            assertSameAsJSONDecoder(Int.self, json, configuration, keyPath: ["value"])
        }
    }
}
