/* SPDX-License-Identifier: Apache-2.0
 * Tests: unit.src, it.fxprof_sources. */
/* Where a profile's Java files are looked up (`fxprof sources`, the agent's sources=):
 * folders, jars and zips (read with libzip), in a fixed order, the first that holds the file
 * answering. A zip is indexed once: by entry name
 * and by the name after its first folder, which is how the JDK's src.zip stores a module's
 * files ("java.base/java/lang/String.java"). Nothing is guessed: a name matches exactly. */
#include "fx_src.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "fx_alloc.h"

struct zkey {
    const char *key; /* into the zip's own name storage */
    zip_uint64_t index;
};

struct fx_src_place {
    enum fx_src_kind kind;
    char *path;
    zip_t *zip;        /* NULL: a folder */
    struct zkey *keys; /* sorted by key */
    size_t nkeys;
};

static int by_key(const void *a, const void *b)
{
    return strcmp(((const struct zkey *)a)->key, ((const struct zkey *)b)->key);
}

/* The index of the zip's .java entries, by full name and by the name after the first '/'. */
static int index_zip(struct fx_src_place *p)
{
    zip_int64_t n = zip_get_num_entries(p->zip, 0);
    p->keys = fx_calloc(n > 0 ? 2 * (size_t)n : 1, sizeof *p->keys);
    if (!p->keys)
        return FX_ENOMEM;
    for (zip_int64_t i = 0; i < n; i++) {
        const char *name = zip_get_name(p->zip, (zip_uint64_t)i, ZIP_FL_ENC_RAW);
        size_t len = name ? strlen(name) : 0;
        if (len < 6 || strcmp(name + len - 5, ".java"))
            continue;
        p->keys[p->nkeys++] = (struct zkey){name, (zip_uint64_t)i};
        const char *slash = strchr(name, '/');
        if (slash && slash[1])
            p->keys[p->nkeys++] = (struct zkey){slash + 1, (zip_uint64_t)i};
    }
    /* Lookups try the exact name first (zip_name_locate). A stripped name cannot be in two
     * of the JDK's modules: a package belongs to one module. */
    qsort(p->keys, p->nkeys, sizeof *p->keys, by_key);
    return FX_OK;
}

static int add_place(struct fx_src_finder *f, enum fx_src_kind kind, const char *path,
                     struct fx_errbuf *eb)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fx_errbuf_set(eb, "%s: %s", path, strerror(errno));
        return FX_ENOTFOUND;
    }
    struct fx_src_place p = {.kind = kind};
    if (!S_ISDIR(st.st_mode)) {
        int err = 0;
        p.zip = zip_open(path, ZIP_RDONLY, &err);
        if (!p.zip) {
            zip_error_t ze;
            zip_error_init_with_code(&ze, err);
            fx_errbuf_set(eb, "%s is neither a folder nor a jar or zip (%s)", path,
                          zip_error_strerror(&ze));
            zip_error_fini(&ze);
            return FX_EINVAL;
        }
        p.kind = kind == FX_SRC_FOLDER ? FX_SRC_JAR : kind;
    }
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 8;
        struct fx_src_place *np = fx_reallocarray(f->places, cap, sizeof *np);
        if (!np)
            goto out_nomem;
        f->places = np;
        f->cap = cap;
    }
    if (!(p.path = fx_strdup(path)) || (p.zip && index_zip(&p) != FX_OK))
        goto out_nomem;
    f->places[f->n++] = p;
    return FX_OK;
out_nomem:
    fx_free(p.path);
    fx_free(p.keys);
    if (p.zip)
        zip_discard(p.zip);
    fx_errbuf_set(eb, "out of memory opening %s", path);
    return FX_ENOMEM;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* PROJECT/src/main/java for a classes folder or jar under PROJECT/target (Maven) or
 * PROJECT/build (Gradle); nothing when the path has neither. */
static void add_project(struct fx_src_finder *f, const char *entry)
{
    char buf[4096];
    const char *marks[] = {"/target/", "/build/"};
    for (size_t i = 0; i < 2; i++) {
        const char *m = strstr(entry, marks[i]);
        if (!m || snprintf(buf, sizeof buf, "%.*s/src/main/java", (int)(m - entry), entry) >=
                          (int)sizeof buf)
            continue;
        struct fx_errbuf eb;
        if (is_dir(buf))
            add_place(f, FX_SRC_FOLDER, buf, &eb);
    }
}

static int note_missing(char ***list, size_t *n, const char *name)
{
    char **nl = fx_reallocarray(*list, *n + 1, sizeof *nl);
    if (!nl)
        return FX_ENOMEM;
    *list = nl;
    if (!(nl[*n] = fx_strdup(name)))
        return FX_ENOMEM;
    (*n)++;
    return FX_OK;
}

/* One class path entry, made absolute against the JVM's working directory. */
static void add_class_path_entry(struct fx_src_finder *f, const char *cwd, const char *e,
                                 size_t len)
{
    char path[4096], sj[4096 + 16];
    if (len == 0 || (e[0] != '/' && !cwd) ||
        snprintf(path, sizeof path, "%s%s%.*s", e[0] == '/' ? "" : cwd, e[0] == '/' ? "" : "/",
                 (int)len, e) >= (int)sizeof path)
        return;
    size_t pl = strlen(path);
    if (pl > 4 && !strcmp(path + pl - 4, ".jar")) {
        snprintf(sj, sizeof sj, "%.*s-sources.jar", (int)(pl - 4), path);
        struct fx_errbuf eb;
        if (access(sj, R_OK) == 0)
            add_place(f, FX_SRC_JAR, sj, &eb);
        else if (access(path, R_OK) == 0)
            note_missing(&f->jars_without, &f->njars_without, path);
    }
    add_project(f, path);
}

static void add_from_jvm(struct fx_src_finder *f, const struct fx_src_jvm *jvm)
{
    const char *cp = jvm->class_path, *cwd = jvm->cwd;
    for (const char *e = cp; e && *e;) {
        size_t len = strcspn(e, ":");
        add_class_path_entry(f, cwd, e, len);
        e += len + (e[len] == ':');
    }
    const char *home = jvm->java_home;
    char zip[4096];
    if (!home || snprintf(zip, sizeof zip, "%s/lib/src.zip", home) >= (int)sizeof zip)
        return;
    struct fx_errbuf eb;
    if (add_place(f, FX_SRC_JDK, zip, &eb) != FX_OK)
        f->jdk_missing = fx_strdup(zip);
}

int fx_src_finder_init(struct fx_src_finder *f, const char *const *from, size_t nfrom,
                       const struct fx_src_jvm *jvm, struct fx_errbuf *eb)
{
    memset(f, 0, sizeof *f);
    for (size_t i = 0; i < nfrom; i++) {
        int rc = add_place(f, FX_SRC_FOLDER, from[i], eb);
        if (rc != FX_OK) {
            fx_src_finder_destroy(f);
            return rc;
        }
    }
    if (jvm)
        add_from_jvm(f, jvm);
    return FX_OK;
}

void fx_src_finder_destroy(struct fx_src_finder *f)
{
    for (size_t i = 0; i < f->n; i++) {
        fx_free(f->places[i].path);
        fx_free(f->places[i].keys);
        if (f->places[i].zip)
            zip_discard(f->places[i].zip);
    }
    for (size_t i = 0; i < f->njars_without; i++)
        fx_free(f->jars_without[i]);
    fx_free(f->jars_without);
    fx_free(f->places);
    fx_free(f->jdk_missing);
    memset(f, 0, sizeof *f);
}

/* buf (n bytes read, room for a NUL) handed to the caller when the read went well. */
static enum fx_src_found hand_over(char *buf, bool ok, size_t n, char **text, size_t *len)
{
    if (!buf || !ok) {
        fx_free(buf);
        return FX_SRC_UNREADABLE;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return FX_SRC_FOUND;
}

static enum fx_src_found read_fd(int fd, size_t max, char **text, size_t *len)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return FX_SRC_UNREADABLE;
    if ((uint64_t)st.st_size > max)
        return FX_SRC_TOO_LARGE;
    char *buf = fx_malloc((size_t)st.st_size + 1);
    size_t n = 0;
    ssize_t r = 1;
    while (buf && n < (size_t)st.st_size && (r = read(fd, buf + n, (size_t)st.st_size - n)) > 0)
        n += (size_t)r;
    return hand_over(buf, r > 0, n, text, len);
}

static enum fx_src_found in_folder(const struct fx_src_place *p, const char *name, size_t max,
                                   char **text, size_t *len)
{
    int dfd = open(p->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = dfd < 0 ? -1 : openat(dfd, name, O_RDONLY | O_CLOEXEC);
    enum fx_src_found r = fd < 0 ? FX_SRC_MISSING : read_fd(fd, max, text, len);
    if (fd >= 0)
        close(fd);
    if (dfd >= 0)
        close(dfd);
    return r;
}

static enum fx_src_found read_entry(zip_t *z, zip_uint64_t i, size_t max, char **text, size_t *len)
{
    zip_stat_t st;
    if (zip_stat_index(z, i, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
        return FX_SRC_UNREADABLE;
    if (st.size > max)
        return FX_SRC_TOO_LARGE;
    zip_file_t *zf = zip_fopen_index(z, i, 0);
    char *buf = zf ? fx_malloc((size_t)st.size + 1) : NULL;
    zip_int64_t n = buf ? zip_fread(zf, buf, st.size) : -1;
    if (zf)
        zip_fclose(zf);
    return hand_over(buf, n >= 0 && (zip_uint64_t)n == st.size, (size_t)(n > 0 ? n : 0), text, len);
}

static enum fx_src_found in_zip(const struct fx_src_place *p, const char *name, size_t max,
                                char **text, size_t *len)
{
    zip_int64_t i = zip_name_locate(p->zip, name, ZIP_FL_ENC_RAW);
    if (i >= 0)
        return read_entry(p->zip, (zip_uint64_t)i, max, text, len);
    struct zkey k = {.key = name};
    const struct zkey *hit = bsearch(&k, p->keys, p->nkeys, sizeof k, by_key);
    return hit ? read_entry(p->zip, hit->index, max, text, len) : FX_SRC_MISSING;
}

enum fx_src_found fx_src_find(struct fx_src_finder *f, const char *name, size_t max, char **text,
                              size_t *len, enum fx_src_kind *kind)
{
    /* A name that could leave a folder is no Java package path. */
    if (!*name || name[0] == '/' || strstr(name, "..") != NULL)
        return FX_SRC_MISSING;
    for (size_t i = 0; i < f->n; i++) {
        const struct fx_src_place *p = &f->places[i];
        enum fx_src_found r =
                p->zip ? in_zip(p, name, max, text, len) : in_folder(p, name, max, text, len);
        if (r != FX_SRC_MISSING) {
            *kind = p->kind;
            return r;
        }
    }
    return FX_SRC_MISSING;
}
