// The system zlib, as Swift sees it.
//
// deflateInit2 and inflateInit2 are macros (they pass the library version and the size of
// z_stream to deflateInit2_ / inflateInit2_ so zlib can detect a header/library mismatch), and
// Swift cannot import function-like macros. Each wrapper below expands the macro in C.
#ifndef NETWORKING_CZLIB_SHIM_H
#define NETWORKING_CZLIB_SHIM_H

#include <zlib.h>

static inline int networking_deflateInit2(z_streamp stream, int level, int method, int windowBits, int memLevel, int strategy) {
    return deflateInit2(stream, level, method, windowBits, memLevel, strategy);
}

static inline int networking_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

#endif
