import Foundation

/// The option, in ``RequestContext/options``, naming the temporary file a call's body was staged
/// in (to compute its ``ContentDigests`` when it could not be read twice: a gzipped or streamed
/// body), which the request now sends and the library removes when the call ends.
///
/// A step that keeps a request past its call — an offline queue writing it to disk — must keep
/// the file's bytes, not its path: the path is gone once the call returns. The library sets it,
/// and removes a value an endpoint or a caller gave.
public enum StagedBodyFileKey: RequestOptionKey {
    /// No staged file: the body is what the endpoint gave.
    public static let defaultValue: URL? = nil
}
