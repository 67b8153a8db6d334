import Foundation

// Models used by the differential tests: the shapes real API clients decode.

struct Book: Decodable, Equatable {
    enum Genre: String, Decodable, Equatable { case novel, poetry, essay, fiction }
    let id: Int
    let title: String
    let author: String?
    let genre: Genre
    let year: Int?
    let imageUrl: URL?
    let rating: Double?
    let available: Bool
    let tags: [String]?
}

struct Page<Item: Decodable & Equatable>: Decodable, Equatable {
    let items: [Item]
    let total: Int
    let next: String?
}

struct Envelope<Payload: Decodable & Equatable>: Decodable, Equatable {
    let data: Payload
    let meta: [String: String]?
}

struct Pair<A: Decodable & Equatable, B: Decodable & Equatable>: Decodable, Equatable {
    let first: A
    let second: B
}

struct Wrapper<Value: Decodable & Equatable>: Decodable, Equatable {
    let value: Value
}

struct OptionalWrapper<Value: Decodable & Equatable>: Decodable, Equatable {
    let value: Value?
}

struct Person: Decodable, Equatable {
    let name: String
    let age: Int
    let email: String?
    let friends: [Person]?
    let address: Address?

    struct Address: Decodable, Equatable {
        let street: String
        let city: String
        let zip: String?
    }
}

enum Priority: Int, Decodable, Equatable {
    case low = 1
    case medium = 2
    case high = 3
}

enum Shape: Decodable, Equatable {
    case circle(radius: Double)
    case rectangle(width: Double, height: Double)
    case point
}

struct Integers: Decodable, Equatable {
    let int: Int
    let int8: Int8
    let int16: Int16
    let int32: Int32
    let int64: Int64
    let uint: UInt
    let uint8: UInt8
    let uint16: UInt16
    let uint32: UInt32
    let uint64: UInt64
}

struct OptionalIntegers: Decodable, Equatable {
    let int: Int?
    let int8: Int8?
    let int16: Int16?
    let int32: Int32?
    let int64: Int64?
    let uint: UInt?
    let uint8: UInt8?
    let uint16: UInt16?
    let uint32: UInt32?
    let uint64: UInt64?
    let float: Float?
    let double: Double?
    let bool: Bool?
    let string: String?
}

struct Special: Decodable, Equatable {
    let url: URL
    let decimal: Decimal
    let uuid: UUID
    let date: Date
    let data: Data
}

struct OptionalSpecial: Decodable, Equatable {
    let url: URL?
    let decimal: Decimal?
    let uuid: UUID?
    let date: Date?
    let data: Data?
}

enum Status: String, Decodable, Equatable, CodingKeyRepresentable, Hashable { case active, inactive }
enum Color: String, Decodable, Equatable, Hashable { case red, green }

struct Dictionaries: Decodable, Equatable {
    let byString: [String: Int]?
    let byInt: [Int: String]?
    let byStatus: [Status: Int]?
    let byColor: [Color: Int]?
    let nested: [String: [String: Double]]?
}

/// Reads everything through hand-written container calls.
struct Manual: Decodable, Equatable {
    var log: [String] = []

    enum Keys: String, CodingKey {
        case a, b, c, list, nested, missing
        // swift-format-ignore: AlwaysUseLowerCamelCase
        case super_ = "super"
    }
    enum Inner: String, CodingKey { case x, y }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        log.append("path=\(container.codingPath.map(\.stringValue))")
        log.append("keys=\(container.allKeys.map(\.stringValue).sorted())")
        log.append("contains a=\(container.contains(.a)) missing=\(container.contains(.missing))")
        log.append("a=\(String(describing: try container.decodeIfPresent(Int.self, forKey: .a)))")
        log.append("bNil=\(String(describing: try? container.decodeNil(forKey: .b)))")
        log.append("b=\(String(describing: try container.decodeIfPresent(String.self, forKey: .b)))")
        if container.contains(.nested) {
            let nested = try container.nestedContainer(keyedBy: Inner.self, forKey: .nested)
            log.append("nested.path=\(nested.codingPath.map(\.stringValue))")
            log.append("nested.x=\(try nested.decode(Int.self, forKey: .x))")
            log.append("nested.y=\(String(describing: try nested.decodeIfPresent([Int].self, forKey: .y)))")
        }
        if container.contains(.list) {
            var list = try container.nestedUnkeyedContainer(forKey: .list)
            log.append("list.count=\(String(describing: list.count)) atEnd=\(list.isAtEnd)")
            while !list.isAtEnd {
                if try list.decodeNil() {
                    log.append("nil@\(list.currentIndex)")
                } else {
                    log.append("item=\(try list.decode(Int.self))@\(list.currentIndex)")
                }
            }
            log.append("past=\(String(describing: try list.decodeIfPresent(Int.self))) index=\(list.currentIndex)")
        }
        let superDecoder = try container.superDecoder()
        log.append("super.path=\(superDecoder.codingPath.map(\.stringValue))")
        let superValue = try superDecoder.singleValueContainer()
        log.append("super.nil=\(superValue.decodeNil())")
        let cDecoder = try container.superDecoder(forKey: .c)
        log.append("c.path=\(cDecoder.codingPath.map(\.stringValue))")
        log.append("c=\(String(describing: try? cDecoder.singleValueContainer().decode(String.self)))")
    }
}

class Animal: Decodable {
    let name: String
    let legs: Int

    enum Keys: CodingKey { case name, legs }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        name = try container.decode(String.self, forKey: .name)
        legs = try container.decode(Int.self, forKey: .legs)
    }
}

final class Dog: Animal, Equatable {
    let breed: String

    enum DogKeys: CodingKey { case breed }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DogKeys.self)
        breed = try container.decode(String.self, forKey: .breed)
        try super.init(from: container.superDecoder())
    }

    static func == (a: Dog, b: Dog) -> Bool { a.name == b.name && a.legs == b.legs && a.breed == b.breed }
}

final class Cat: Animal, Equatable {
    let indoor: Bool

    enum CatKeys: CodingKey { case indoor, animal }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CatKeys.self)
        indoor = try container.decode(Bool.self, forKey: .indoor)
        try super.init(from: container.superDecoder(forKey: .animal))
    }

    static func == (a: Cat, b: Cat) -> Bool { a.name == b.name && a.legs == b.legs && a.indoor == b.indoor }
}

/// Uses an unkeyed container's superDecoder and nested containers.
struct Tuple: Decodable, Equatable {
    let head: String
    let point: [Int]
    let named: Int
    let rest: [String?]

    enum Keys: CodingKey { case n }

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        head = try container.superDecoder().singleValueContainer().decode(String.self)
        var point = try container.nestedUnkeyedContainer()
        var values: [Int] = []
        while !point.isAtEnd { values.append(try point.decode(Int.self)) }
        self.point = values
        named = try container.nestedContainer(keyedBy: Keys.self).decode(Int.self, forKey: .n)
        var rest: [String?] = []
        while !container.isAtEnd { rest.append(try container.decodeIfPresent(String.self)) }
        self.rest = rest
    }
}

/// Records the coding paths a decoder reports on the way down.
struct PathRecorder: Decodable, Equatable {
    let paths: [String]

    init(from decoder: any Decoder) throws {
        var paths = [decoder.codingPath.map { $0.intValue.map { "#\($0)" } ?? $0.stringValue }.joined(separator: ".")]
        if let container = try? decoder.container(keyedBy: AnyKey.self) {
            for key in container.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                paths += try container.decode(PathRecorder.self, forKey: key).paths
            }
        } else if var container = try? decoder.unkeyedContainer() {
            while !container.isAtEnd { paths += try container.decode(PathRecorder.self).paths }
        }
        self.paths = paths
    }
}

/// Reads `userInfo` and the coding path inside a model.
struct UserInfoReader: Decodable, Equatable {
    static let key = CodingUserInfoKey(rawValue: "fastjson.test")!
    let info: String
    let value: Int

    enum Keys: CodingKey { case value }

    init(from decoder: any Decoder) throws {
        info = String(describing: decoder.userInfo[Self.key] ?? "none")
        value = try decoder.container(keyedBy: Keys.self).decode(Int.self, forKey: .value)
    }
}
