import Foundation
import Testing

/// Models decoded from valid and broken inputs: every value or error must match JSONDecoder's.
@Suite struct ModelTests {
    static let bookInputs = [
        #"{"id":1,"title":"T","author":"A","genre":"novel","year":1987,"imageUrl":"https://e.com/1.png","rating":4.5,"available":true,"tags":["a","b"]}"#,
        #"{"id":1,"title":"T","genre":"poetry","available":false}"#,
        #"{"id":1,"title":"T","author":null,"genre":"essay","year":null,"imageUrl":null,"rating":null,"available":true,"tags":null}"#,
        #"{"id":1,"title":"T","genre":"drama","available":true}"#,
        #"{"id":"1","title":"T","genre":"novel","available":true}"#,
        #"{"id":1.5,"title":"T","genre":"novel","available":true}"#,
        #"{"id":1e2,"title":"T","genre":"novel","available":true}"#,
        #"{"id":1.0,"title":"T","genre":"novel","available":true}"#,
        #"{"id":-0,"title":"T","genre":"novel","available":true}"#,
        #"{"id":null,"title":"T","genre":"novel","available":true}"#,
        #"{"title":"T","genre":"novel","available":true}"#,
        #"{"id":1,"genre":"novel","available":true}"#,
        #"{"id":1,"title":5,"genre":"novel","available":true}"#,
        #"{"id":1,"title":"T","genre":"novel","available":"yes"}"#,
        #"{"id":1,"title":"T","genre":"novel","available":null}"#,
        #"{"id":1,"title":"T","genre":"novel","available":1}"#,
        #"{"id":1,"title":"T","genre":"novel","available":true,"tags":[1]}"#,
        #"{"id":1,"title":"T","genre":"novel","available":true,"tags":"a"}"#,
        #"{"id":1,"title":"T","genre":"novel","available":true,"tags":["a",null]}"#,
        #"{"id":1,"title":"T","genre":"novel","available":true,"imageUrl":""}"#,
        #"{"id":1,"title":"T","genre":"novel","available":true,"imageUrl":"a b"}"#,
        #"{"id":1,"title":"T","genre":"novel","available":true,"rating":"4.5"}"#,
        #"{"id":1,"title":"T","genre":"novel","available":true,"rating":1e400}"#,
        #"{"id":1,"title":"T","genre":"novel","available":true,"rating":01}"#,
        #"{"id":1,"title":"T","genre":"novel","available":true,"extra":01}"#,
        #"{"id":1,"title":"T","genre":"novel","available":true,"extra":"\x"}"#,
        #"{"id":1,"title":"T","genre":"novel","available":true,"extra":[1,2,{"a":-}]}"#,
        #"{"id":1,"title":"T\x","genre":"novel","available":true}"#,
        #"{"id":1,"id":2,"title":"T","genre":"novel","available":true}"#,
        #"{"id":1,"title":"T","genre":"novel","available":true,}"#,
        #"{"id":1,"title":"T","genre":"novel","available":true,,}"#,
        #"{"id":1,"title":"T","genre":"novel","available":true"#,
        #"{"id":1,"title":"T","genre":"novel","available":true}}"#,
        #"{"id":1,"title":"T","genre":"novel","available":true} x"#,
        #"  {"id":1,"title":"T","genre":"novel","available":true}  "#,
        #"{"id":1,"title":"T","genre":"novel","available":tru}"#,
        #"{"id":1 "title":"T","genre":"novel","available":true}"#,
        #"{"id":1,"title":"T","genre":"novel","available":true,"\u0069d":3}"#,
        #"{"\u0069d":1,"title":"T","genre":"novel","available":true}"#,
        #"{"id":1,"title":"T","genre":"novel","available":true,"bad\u12":3}"#,
        #"{"id":1,"title":"T","genre":"novel","available":true,"bad\q":3}"#,
        #"[]"#, #"null"#, #"1"#, #""book""#, "", " ", "{", "[", "{}",
        #"{"id":9223372036854775807,"title":"T","genre":"novel","available":true}"#,
        #"{"id":9223372036854775808,"title":"T","genre":"novel","available":true}"#,
        #"{"id":-9223372036854775808,"title":"T","genre":"novel","available":true}"#,
        #"{"id":1,"title":"T","genre":"NOVEL","available":true}"#,
        #"{"id":1,"title":"T","genre":null,"available":true}"#,
    ]

    @Test(arguments: bookInputs)
    func book(_ json: String) {
        assertSameAsJSONDecoder(Book.self, json)
        assertSameAsJSONDecoder([Book].self, "[" + json + "]")
        assertSameAsJSONDecoder(Envelope<Book>.self, #"{"data":"# + json + "}")
    }

    @Test(arguments: [
        #"{"items":[{"id":1,"title":"a","genre":"novel","available":true},{"id":2,"title":"b","genre":"essay","available":false,"tags":[]}],"total":2,"next":null}"#,
        #"{"items":[{"id":1,"title":"a","genre":"novel","available":true},{"id":"2","title":"b","genre":"essay","available":false}],"total":2}"#,
        #"{"items":[{"id":1,"title":"a","genre":"novel","available":true},{"id":2,"genre":"essay","available":false}],"total":2}"#,
        #"{"items":[{"id":1,"title":"a","genre":"novel","available":true},null],"total":2}"#,
        #"{"items":{},"total":2}"#,
        #"{"items":[],"total":"2"}"#,
        #"{"items":[]}"#,
    ])
    func page(_ json: String) {
        assertSameAsJSONDecoder(Page<Book>.self, json)
        assertSameAsJSONDecoder(Envelope<Page<Book>>.self, #"{"data":"# + json + #","meta":{"a":"b"}}"#)
    }

    @Test(arguments: [
        #"{"name":"Ann","age":30,"friends":[{"name":"Bob","age":31,"address":{"street":"Main","city":"X"}}]}"#,
        #"{"name":"Ann","age":30,"friends":[{"name":"Bob","age":31,"address":{"street":"Main"}}]}"#,
        #"{"name":"Ann","age":30,"friends":[{"name":"Bob","age":31,"friends":[{"name":"C","age":"x"}]}]}"#,
        #"{"name":"Ann","age":30,"address":null,"email":"a@b.c"}"#,
        #"{"name":"Ann","age":30,"address":[]}"#,
        #"{"name":"Ann","age":30,"friends":[null]}"#,
        #"{"name":"Ann","age":30,"friends":null}"#,
    ])
    func person(_ json: String) {
        assertSameAsJSONDecoder(Person.self, json)
        assertSameAsJSONDecoder(Person.self, json, .snakeCase)
    }

    @Test(arguments: [
        #"{"circle":{"radius":2}}"#, #"{"rectangle":{"width":1,"height":2.5}}"#, #"{"point":{}}"#,
        #"{"circle":{}}"#, #"{"square":{}}"#, #"{"circle":{"radius":2},"point":{}}"#, #"{}"#, #"[]"#,
        #"{"circle":null}"#, #"{"circle":{"radius":"x"}}"#,
    ])
    func enumWithAssociatedValues(_ json: String) {
        assertSameAsJSONDecoder(Shape.self, json)
        assertSameAsJSONDecoder([Shape].self, "[" + json + "]")
    }

    @Test(arguments: ["1", "2", "3", "4", "0", "1.0", "\"1\"", "null", "-1", "1e0"])
    func intEnum(_ json: String) {
        assertSameAsJSONDecoder(Priority.self, json)
        assertSameAsJSONDecoder(Wrapper<Priority>.self, #"{"value":"# + json + "}")
        assertSameAsJSONDecoder(OptionalWrapper<Priority>.self, #"{"value":"# + json + "}")
    }

    @Test(arguments: [
        "[[1,2],[3]]", "[[],[]]", "[[1,null]]", "[[1],2]", "[[[1]]]", "[1]", "[]", "[[1,2],[3],]", "[[1,2,],[3]]",
        "[[1,2] [3]]", "[[1,2],[\"3\"]]", "[[1,2],null]",
    ])
    func arraysOfArrays(_ json: String) {
        assertSameAsJSONDecoder([[Int]].self, json)
        assertSameAsJSONDecoder([[Int?]].self, json)
        assertSameAsJSONDecoder([[Int]?].self, json)
        assertSameAsJSONDecoder([[[Int]]].self, json)
        assertSameAsJSONDecoder([[String]].self, json)
    }

    @Test(arguments: [
        #"{"byString":{"a":1,"b":2}}"#, #"{"byString":{"a":1,"a":2}}"#, #"{"byString":{"a":"x"}}"#,
        #"{"byInt":{"1":"a","2":"b"}}"#, #"{"byInt":{"1":"a","x":"b"}}"#, #"{"byInt":{"01":"a"}}"#, #"{"byInt":{"-3":"a"," 4":"b"}}"#,
        #"{"byInt":["1","a"]}"#, #"{"byInt":[1,"a"]}"#, #"{"byInt":{"1":"a","1":"b"}}"#,
        #"{"byStatus":{"active":1}}"#, #"{"byStatus":{"active":1,"other":2}}"#, #"{"byStatus":["active",1]}"#,
        #"{"byColor":["red",1,"green",2]}"#, #"{"byColor":["red",1,"green"]}"#, #"{"byColor":{"red":1}}"#, #"{"byColor":["blue",1]}"#,
        #"{"nested":{"a":{"x":1.5,"y":-0.0},"b":{}}}"#, #"{"nested":{"a":{"x":"1"}}}"#, #"{"nested":{"a":null}}"#,
        #"{"byString":null,"byInt":null}"#, #"{"byString":[]}"#, #"{"snake_key":{}}"#,
        #"{"byString":{"snake_case":1,"camelCase":2,"a__b":3}}"#,
    ])
    func dictionaries(_ json: String) {
        assertSameAsJSONDecoder(Dictionaries.self, json)
        assertSameAsJSONDecoder(Dictionaries.self, json, .snakeCase)
        // With default keys JSONDecoder visits dictionary keys in hash order, so when several
        // entries are wrong, which error it reports varies from run to run; with a key strategy it
        // reads the object in document order.
        assertSameAsJSONDecoder([String: [String: Int]].self, json, .snakeCase)
        assertSameAsJSONDecoder([String: JSONAnyValue].self, json, .snakeCase)
    }

    @Test(arguments: [
        #"{"a":1,"b":"x","c":"cee","list":[1,null,3],"nested":{"x":5,"y":[1]},"super":7}"#,
        #"{"a":1,"b":null}"#, #"{"b":"x"}"#, #"{}"#, #"{"a":"1"}"#, #"{"a":1,"list":[1,"x"]}"#,
        #"{"a":1,"nested":{"y":[]}}"#, #"{"a":1,"nested":null}"#, #"{"a":1,"nested":[]}"#, #"{"a":1,"list":{}}"#,
        #"{"a":1,"list":null}"#, #"{"super":null,"c":5}"#, #"{"a":1,"a":2,"super":{"x":1}}"#,
    ])
    func manualContainers(_ json: String) {
        assertSameAsJSONDecoder(Manual.self, json)
        assertSameAsJSONDecoder(Manual.self, json, .snakeCase)
        assertSameAsJSONDecoder([Manual].self, "[" + json + "]")
    }

    @Test(arguments: [
        #"{"name":"Rex","legs":4,"breed":"lab"}"#, #"{"super":{"name":"Rex","legs":4},"breed":"lab"}"#,
        #"{"breed":"lab"}"#, #"{"super":null,"breed":"lab"}"#, #"{"super":{"name":"Rex"},"breed":"lab"}"#,
        #"{"super":[],"breed":"lab"}"#,
    ])
    func superDecoder(_ json: String) {
        assertSameAsJSONDecoder(Dog.self, json)
        assertSameAsJSONDecoder([String: Dog].self, #"{"d":"# + json + "}")
    }

    @Test(arguments: [
        #"{"indoor":true,"animal":{"name":"Tom","legs":4}}"#, #"{"indoor":true}"#, #"{"indoor":true,"animal":{"name":1,"legs":4}}"#,
        #"{"indoor":true,"animal":null}"#,
    ])
    func superDecoderForKey(_ json: String) {
        assertSameAsJSONDecoder(Cat.self, json)
        assertSameAsJSONDecoder(Wrapper<Cat>.self, #"{"value":"# + json + "}")
    }

    @Test(arguments: [
        #"["h",[1,2],{"n":3},"a",null,"b"]"#, #"["h",[1,2],{"n":3}]"#, #"["h",[1,2]]"#, #"["h"]"#, #"[]"#,
        #"[1,[1,2],{"n":3}]"#, #"["h",{},{"n":3}]"#, #"["h",[1,2],[]]"#, #"["h",[1,"2"],{"n":3}]"#, #"["h",[1,2],{"n":3},1]"#,
        #"[null,[],{"n":3}]"#, #"["h",null,{"n":3}]"#, #"["h",[],null]"#,
    ])
    func unkeyedNesting(_ json: String) {
        assertSameAsJSONDecoder(Tuple.self, json)
        assertSameAsJSONDecoder(Wrapper<Tuple>.self, #"{"value":"# + json + "}")
    }

    @Test(arguments: [
        #"{"a":{"b":[1,{"c":null}]},"d":[[]]}"#, #"[1,[2,[3,{"x":[4]}]]]"#, #"{"x":1}"#, "1", "[]",
    ])
    func codingPaths(_ json: String) {
        assertSameAsJSONDecoder(PathRecorder.self, json)
        assertSameAsJSONDecoder(PathRecorder.self, json, .snakeCase)
    }

    @Test(arguments: [
        #"{"first":1,"second":"b"}"#, #"{"first":1}"#, #"{"first":"1","second":"b"}"#, #"{"second":"b","first":1}"#,
    ])
    func nestedGenerics(_ json: String) {
        assertSameAsJSONDecoder(Pair<Int, String>.self, json)
        assertSameAsJSONDecoder(Wrapper<Pair<Int, String>>.self, #"{"value":"# + json + "}")
        assertSameAsJSONDecoder([Pair<Int, String>?].self, "[" + json + ",null]")
        assertSameAsJSONDecoder(Envelope<[String: Pair<Int, String>]>.self, #"{"data":{"k":"# + json + "}}")
        assertSameAsJSONDecoder(Pair<Pair<Int, String>, [Int?]>.self, #"{"first":"# + json + #","second":[1,null]}"#)
    }
}
