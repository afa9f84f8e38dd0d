/* SPDX-License-Identifier: Apache-2.0 */
/* Error codes of fxagent: one X-macro table generates the enum, the names and the messages,
 * so a code cannot exist without both. Functions return FX_OK (0) or a negative fx_err. */
#ifndef FX_ERR_H
#define FX_ERR_H

#define FX_ERR_MAP(XX)                                \
    XX(NOMEM, -1, "out of memory")                    \
    XX(INVAL, -2, "invalid argument")                 \
    XX(IO, -3, "input/output error")                  \
    XX(RANGE, -4, "value out of range")               \
    XX(FULL, -5, "table or buffer full")              \
    XX(ZLIB, -6, "compression error")                 \
    XX(NOTFOUND, -7, "not found")                     \
    XX(STATE, -8, "not allowed in the current state") \
    XX(UNSUPPORTED, -9, "not supported here")

enum fx_err {
    FX_OK = 0,
#define FX_ERR_ENUM(name, value, msg) FX_E##name = (value),
    FX_ERR_MAP(FX_ERR_ENUM)
#undef FX_ERR_ENUM
};

/* Static strings, safe when memory is exhausted; unknown codes give "FX_E?" / "unknown error". */
const char *fx_err_name(int err);
const char *fx_strerror(int err);

/* One line of context for the caller: names the subject and what is accepted, no trailing
 * period, no newline. */
struct fx_errbuf {
    char msg[256];
};

void fx_errbuf_set(struct fx_errbuf *eb, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

#endif
