/// How many of the `count` elements (or members) the JSON holds to reserve room for, at `stride`
/// bytes each: all of them up to 4 MiB; beyond, appending grows the storage as it goes. A server's
/// array of ten million invalid elements fails at the first one, without asking for gigabytes
/// first (which stops the process where the allocation is refused).
func fastJSONReservation(count: Int, stride: Int) -> Int {
    min(count, (4 << 20) / max(stride, 1))
}
