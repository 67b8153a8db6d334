// The system libcurl, as Swift sees it.
//
// curl_easy_setopt, curl_multi_setopt and curl_easy_getinfo are C variadic functions, which Swift
// cannot call. Each wrapper below fixes one argument type, so every call from Swift is typed.
// Macros Swift cannot import are re-exported as constants.
#ifndef NETWORKING_CCURL_SHIM_H
#define NETWORKING_CCURL_SHIM_H

#include <curl/curl.h>

static const long networking_curl_global_default = CURL_GLOBAL_DEFAULT;
static const long networking_curl_pipe_multiplex = CURLPIPE_MULTIPLEX;
static const int networking_curl_error_size = CURL_ERROR_SIZE;
static const size_t networking_curl_readfunc_abort = CURL_READFUNC_ABORT;
static const size_t networking_curl_readfunc_pause = CURL_READFUNC_PAUSE;
static const size_t networking_curl_writefunc_pause = CURL_WRITEFUNC_PAUSE;
static const int networking_curlpause_cont = CURLPAUSE_CONT;
static const int networking_seekfunc_cantseek = CURL_SEEKFUNC_CANTSEEK;
static const int networking_curl_seekfunc_ok = CURL_SEEKFUNC_OK;
static const int networking_curl_seekfunc_fail = CURL_SEEKFUNC_FAIL;

// MARK: easy options

static inline CURLcode networking_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode networking_curl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode networking_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode networking_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

// A blob option (a certificate or key in memory): libcurl copies the bytes, so they need to live
// only through the call.
static inline CURLcode networking_curl_easy_setopt_blob(CURL *handle, CURLoption option, const void *data, size_t length) {
    static const char empty = 0;
    struct curl_blob blob = { (void *)(data ? data : &empty), length, CURL_BLOB_COPY };
    return curl_easy_setopt(handle, option, &blob);
}

static inline CURLcode networking_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode networking_curl_easy_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode networking_curl_easy_setopt_read_function(CURL *handle, curl_read_callback value) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, value);
}

static inline CURLcode networking_curl_easy_setopt_seek_function(CURL *handle, curl_seek_callback value) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, value);
}

// MARK: easy information

static inline CURLcode networking_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode networking_curl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode networking_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

// MARK: multi options

static inline CURLMcode networking_curl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

#endif
