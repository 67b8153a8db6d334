import Foundation
import Testing

/// Container operations at their edges: past the end, on null, on the wrong kind, after an error.
@Suite struct ContainerTests {
    /// Runs a script of unkeyed-container operations and logs each result or error.
    struct UnkeyedScript: Decodable, Equatable {
        var log: [String] = []

        enum Keys: CodingKey { case a }

        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            func step(_ name: String, _ body: () throws -> String) {
                do {
                    log.append("\(name)=\(try body())")
                } catch {
                    log.append("\(name) threw \(describeError(error))")
                }
                log.append("index=\(container.currentIndex) atEnd=\(container.isAtEnd) count=\(String(describing: container.count))")
            }
            step("int") { String(try container.decode(Int.self)) }
            step("string") { try container.decode(String.self) }
            step("nil") { String(try container.decodeNil()) }
            step("bool?") { String(describing: try container.decodeIfPresent(Bool.self)) }
            step("double") { String(try container.decode(Double.self)) }
            step("keyed") { String(describing: try container.nestedContainer(keyedBy: Keys.self).allKeys.map(\.stringValue)) }
            step("unkeyed") { String(describing: try container.nestedUnkeyedContainer().count) }
            step("super") { String(describing: try container.superDecoder().codingPath.map(\.stringValue)) }
            step("int128") { String(try container.decode(Int128.self)) }
            step("int128?") { String(describing: try container.decodeIfPresent(Int128.self)) }
            step("uint8?") { String(describing: try container.decodeIfPresent(UInt8.self)) }
            step("nil") { String(try container.decodeNil()) }
            step("generic") { String(describing: try container.decode([Int].self)) }
            step("generic?") { String(describing: try container.decodeIfPresent([Int].self)) }
            step("float") { String(try container.decode(Float.self)) }
            step("past1") { String(describing: try container.decodeIfPresent(String.self)) }
            step("past2") { String(describing: try container.decodeIfPresent(Int.self)) }
            step("pastGeneric") { String(describing: try container.decodeIfPresent([Int].self)) }
            step("pastNil") { String(try container.decodeNil()) }
            step("pastDecode") { String(try container.decode(Int.self)) }
            step("pastKeyed") { String(describing: try container.nestedContainer(keyedBy: Keys.self).codingPath.count) }
            step("pastUnkeyed") { String(describing: try container.nestedUnkeyedContainer().count) }
            step("pastSuper") { String(describing: try container.superDecoder().codingPath.count) }
        }
    }

    @Test(arguments: [
        "[]", "[1]", #"[1,"a",null,true,2.5,{"a":1},[1,2],"sup",5,6,7,null,[1],null,1.5]"#,
        #"[1,"a",null,null,2.5,{},[],null,null,null,null,1,[1],[2],1e39]"#,
        #"["x",1,2,true,"y",[],{},1,1e40,"1",-1,"n",{},[null],"f"]"#, #"[null,null,null,null,null,null,null,null]"#,
        #"[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24]"#,
        #"[170141183460469231731687303715884105728,1,2]"#,
    ])
    func unkeyedScript(_ json: String) {
        assertSameAsJSONDecoder(UnkeyedScript.self, json)
        assertSameAsJSONDecoder(Wrapper<UnkeyedScript>.self, #"{"value":"# + json + "}")
    }

    /// Runs a script of keyed-container operations and logs each result or error.
    struct KeyedScript: Decodable, Equatable {
        var log: [String] = []

        enum Keys: String, CodingKey { case a, b, c, d, e, missing, nested, list }
        enum Inner: CodingKey { case x }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            func step(_ name: String, _ body: () throws -> String) {
                do {
                    log.append("\(name)=\(try body())")
                } catch {
                    log.append("\(name) threw \(describeError(error))")
                }
            }
            for key in [Keys.a, .b, .c, .d, .e, .missing, .nested, .list] {
                step("nil \(key)") { String(try container.decodeNil(forKey: key)) }
                step("int \(key)") { String(try container.decode(Int.self, forKey: key)) }
                step("int? \(key)") { String(describing: try container.decodeIfPresent(Int.self, forKey: key)) }
                step("u8 \(key)") { String(try container.decode(UInt8.self, forKey: key)) }
                step("i128? \(key)") { String(describing: try container.decodeIfPresent(Int128.self, forKey: key)) }
                step("bool \(key)") { String(try container.decode(Bool.self, forKey: key)) }
                step("bool? \(key)") { String(describing: try container.decodeIfPresent(Bool.self, forKey: key)) }
                step("string \(key)") { try container.decode(String.self, forKey: key) }
                step("float? \(key)") { String(describing: try container.decodeIfPresent(Float.self, forKey: key)) }
                step("url? \(key)") { String(describing: try container.decodeIfPresent(URL.self, forKey: key)) }
                step("array \(key)") { String(describing: try container.decode([Int?].self, forKey: key)) }
                step("keyed \(key)") {
                    String(describing: try container.nestedContainer(keyedBy: Inner.self, forKey: key).codingPath.map(\.stringValue))
                }
                step("unkeyed \(key)") { String(describing: try container.nestedUnkeyedContainer(forKey: key).count) }
                step("super \(key)") { String(try container.superDecoder(forKey: key).singleValueContainer().decodeNil()) }
                step("contains \(key)") { String(container.contains(key)) }
            }
            step("super") { String(describing: try container.superDecoder().codingPath.map(\.stringValue)) }
            step("allKeys") { container.allKeys.map(\.stringValue).sorted().joined(separator: ",") }
        }
    }

    @Test(arguments: [
        #"{"a":1,"b":null,"c":"x","d":true,"e":[1,null],"nested":{"x":1},"list":[]}"#,
        #"{"a":-1,"b":256,"c":1.5,"d":"true","e":{},"nested":null,"list":null}"#,
        #"{}"#, #"{"a":null,"a":1}"#, #"{"a":"https://x","b":"","c":1e400,"d":01,"e":"\x"}"#,
        #"{"a":340282366920938463463374607431768211456,"b":-170141183460469231731687303715884105728}"#,
    ])
    func keyedScript(_ json: String) {
        assertSameAsJSONDecoder(KeyedScript.self, json)
        assertSameAsJSONDecoder(KeyedScript.self, json, .snakeCase)
        assertSameAsJSONDecoder([KeyedScript].self, "[" + json + "]")
    }

    /// Single-value containers on every kind of value.
    struct SingleScript: Decodable, Equatable {
        var log: [String] = []

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            func step(_ name: String, _ body: () throws -> String) {
                do {
                    log.append("\(name)=\(try body())")
                } catch {
                    log.append("\(name) threw \(describeError(error))")
                }
            }
            step("nil") { String(container.decodeNil()) }
            step("bool") { String(try container.decode(Bool.self)) }
            step("string") { try container.decode(String.self) }
            step("int8") { String(try container.decode(Int8.self)) }
            step("uint64") { String(try container.decode(UInt64.self)) }
            step("uint128") { String(try container.decode(UInt128.self)) }
            step("double") { String(try container.decode(Double.self)) }
            step("float") { String(try container.decode(Float.self)) }
            step("optional") { String(describing: try container.decode(Int?.self)) }
            step("array") { String(describing: try container.decode([Int].self)) }
            step("dictionary") { String(describing: try container.decode([String: Int].self).sorted(by: { $0.key < $1.key })) }
            step("keyed") { String(describing: try decoder.container(keyedBy: AnyKey.self).allKeys.count) }
            step("unkeyed") { String(describing: try decoder.unkeyedContainer().count) }
            step("path") { decoder.codingPath.map(\.stringValue).joined(separator: ".") }
        }
    }

    @Test(arguments: [
        "null", "true", "false", "0", "-1", "255", "1.5", "1e2", "\"s\"", "\"\\u00e9\"", "[]", "[1,2]", "{}", #"{"a":1}"#,
        "18446744073709551615", "340282366920938463463374607431768211455", "-0", "3.4028235e38", "1e-45",
    ])
    func singleScript(_ json: String) {
        assertSameAsJSONDecoder(SingleScript.self, json)
        assertSameAsJSONDecoder([SingleScript].self, "[" + json + "]")
        assertSameAsJSONDecoder(Wrapper<SingleScript>.self, #"{"value":"# + json + "}")
    }
}
