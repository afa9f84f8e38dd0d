/* SPDX-License-Identifier: Apache-2.0 */
/* Line reading for /proc text files (maps, kallsyms): one growing fx_malloc buffer, line numbers
 * for messages, and a read error never mistaken for the end of the file.
 * Tests: unit.kallsyms, unit.textmap. */
#include "fx_lines.h"

#include <errno.h>
#include <string.h>

#include "fx_alloc.h"

int fx_lines_open(struct fx_lines *l, const char *path, struct fx_errbuf *eb)
{
    memset(l, 0, sizeof(*l));
    l->f = fopen(path, "re");
    if (!l->f) {
        fx_errbuf_set(eb, "%s: %s", path, strerror(errno));
        return FX_EIO;
    }
    l->path = path;
    return FX_OK;
}

static int grow(struct fx_lines *l, struct fx_errbuf *eb)
{
    size_t cap = l->cap ? l->cap * 2 : 4096;
    if (cap > FX_LINES_MAX + 1) {
        fx_errbuf_set(eb, "%s:%zu: line longer than %u bytes", l->path, l->lineno + 1,
                      FX_LINES_MAX);
        return FX_ERANGE;
    }
    char *buf = fx_reallocarray(l->buf, cap, 1);
    if (!buf) {
        fx_errbuf_set(eb, "%s:%zu: out of memory for a line", l->path, l->lineno + 1);
        return FX_ENOMEM;
    }
    l->buf = buf;
    l->cap = cap;
    return FX_OK;
}

int fx_lines_next(struct fx_lines *l, char **line, size_t *len, struct fx_errbuf *eb)
{
    size_t n = 0;
    for (;;) {
        if (l->cap - n < 2) {
            int rc = grow(l, eb);
            if (rc != FX_OK)
                return rc;
        }
        if (!fgets(l->buf + n, (int)(l->cap - n), l->f))
            break;
        n += strlen(l->buf + n);
        if (n > 0 && l->buf[n - 1] == '\n')
            break;
    }
    if (ferror(l->f)) {
        fx_errbuf_set(eb, "%s:%zu: read error: %s", l->path, l->lineno + 1, strerror(errno));
        return FX_EIO;
    }
    if (n == 0)
        return FX_ENOTFOUND;
    if (l->buf[n - 1] == '\n')
        l->buf[--n] = '\0';
    l->lineno++;
    *line = l->buf;
    *len = n;
    return FX_OK;
}

void fx_lines_close(struct fx_lines *l)
{
    if (l->f)
        fclose(l->f);
    fx_free(l->buf);
    memset(l, 0, sizeof(*l));
}
