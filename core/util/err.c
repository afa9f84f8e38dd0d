/* SPDX-License-Identifier: Apache-2.0 */
/* Error names and messages, expanded from the one FX_ERR_MAP table; all strings are static so
 * they stay usable when memory is exhausted. */
#include "fx_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *fx_err_name(int err)
{
    switch (err) {
    case FX_OK:
        return "FX_OK";
#define FX_ERR_NAME(name, value, msg) \
    case FX_E##name:                  \
        return "FX_E" #name;
        FX_ERR_MAP(FX_ERR_NAME)
#undef FX_ERR_NAME
    }
    return "FX_E?";
}

const char *fx_strerror(int err)
{
    switch (err) {
    case FX_OK:
        return "success";
#define FX_ERR_MSG(name, value, msg) \
    case FX_E##name:                 \
        return msg;
        FX_ERR_MAP(FX_ERR_MSG)
#undef FX_ERR_MSG
    }
    return "unknown error";
}

/* The message is one line by contract, so any line break a formatted argument brings in (an
 * errno string, a path) is replaced rather than trusted. */
void fx_errbuf_set(struct fx_errbuf *eb, const char *fmt, ...)
{
    if (!eb)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(eb->msg, sizeof(eb->msg), fmt, ap);
    va_end(ap);
    if (n < 0) {
        eb->msg[0] = '\0';
        return;
    }
    size_t len = strlen(eb->msg);
    while (len > 0 && (eb->msg[len - 1] == '\n' || eb->msg[len - 1] == '\r'))
        eb->msg[--len] = '\0';
    for (size_t i = 0; i < len; i++) {
        if (eb->msg[i] == '\n' || eb->msg[i] == '\r')
            eb->msg[i] = ' ';
    }
}
