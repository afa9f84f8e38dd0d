/* SPDX-License-Identifier: Apache-2.0 */
/* A stand-in for libfxagent.so's attach entry, for fxprof's tests: it answers through the
 * reply file exactly as docs/ATTACH.md asks of the real agent. The file= option picks the
 * behaviour: "...refuse..." returns 7 and writes nothing, "...fail..." writes an error line and
 * returns 1, "...late..." answers from another thread after 1 s, "...fallback..." answers that
 * the file went elsewhere (in the real agent's words), anything else answers at once.
 * It also appends every options string it gets to $FAKE_AGENT_LOG when set. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jni.h>
#include <jvmti.h>

static char late_path[512], late_text[1024];

/* The value of `key=` in a comma list, copied into out ("" if absent). */
static void option(const char *opts, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    out[0] = '\0';
    for (const char *p = opts; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > klen && !strncmp(p, key, klen) && p[klen] == '=') {
            snprintf(out, cap, "%.*s", (int)(len - klen - 1), p + klen + 1);
            return;
        }
        p = end ? end + 1 : NULL;
    }
}

/* As the real agent must: no O_CREAT (fxprof made the file), no symlinks, one write. */
static void reply(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = write(fd, text, strlen(text));
    (void)n;
    close(fd);
}

static void *answer_late(void *arg)
{
    (void)arg;
    struct timespec ts = {1, 0};
    nanosleep(&ts, NULL);
    reply(late_path, late_text);
    return NULL;
}

static void log_options(const char *opts)
{
    const char *log = getenv("FAKE_AGENT_LOG");
    FILE *f = log ? fopen(log, "a") : NULL;
    if (f) {
        fprintf(f, "%s\n", opts);
        fclose(f);
    }
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
    (void)vm, (void)reserved;
    const char *opts = options ? options : "";
    char path[512], file[512], text[1024];
    log_options(opts);
    option(opts, "reply", path, sizeof path);
    option(opts, "file", file, sizeof file);
    size_t action_len = strcspn(opts, ",");
    if (strstr(file, "refuse"))
        return 7;
    if (strstr(file, "fail")) {
        snprintf(text, sizeof text, "error: fake agent: %.*s failed as asked\n", (int)action_len,
                 opts);
        reply(path, text);
        return 1;
    }
    snprintf(text, sizeof text, "ok: fake agent did %.*s%s%s\n", (int)action_len, opts,
             *file ? " to " : "", file);
    if (strstr(file, "fallback"))
        snprintf(
                text, sizeof text,
                "ok: dumped; wrote 5 samples of 1 threads to /tmp/x.json.gz (10 bytes in 1 ms); could not write %s (Permission denied); wrote /tmp/x.json.gz instead\n",
                file);
    if (!strstr(file, "late")) {
        reply(path, text);
        return 0;
    }
    pthread_t t;
    snprintf(late_path, sizeof late_path, "%s", path);
    snprintf(late_text, sizeof late_text, "%s", text);
    if (pthread_create(&t, NULL, answer_late, NULL) != 0)
        return 2;
    pthread_detach(t);
    return 0;
}
