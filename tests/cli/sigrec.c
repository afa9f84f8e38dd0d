/* SPDX-License-Identifier: Apache-2.0 */
/* A target that is not a JVM, for fxprof's misuse tests: it catches every catchable signal
 * (SIGQUIT included, so fxprof's "does it handle SIGQUIT?" check would let a signal through)
 * and appends its number to LOG, then writes "ready" to LOG.ready and sleeps.
 *   usage: fxprof_sigrec LOG [--undumpable] [--map FILE]
 * --undumpable makes /proc/PID/maps unreadable to its own user (PR_SET_DUMPABLE 0), as a setuid
 * or hardened process is; --map FILE maps FILE read-only, as a copy tool or scanner reading a
 * libjvm.so would. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

static int log_fd = -1;

static void record(int sig)
{
    char b[8];
    int n = 0;
    if (sig >= 10)
        b[n++] = (char)('0' + sig / 10);
    b[n++] = (char)('0' + sig % 10);
    b[n++] = '\n';
    ssize_t w = write(log_fd, b, (size_t)n);
    (void)w;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s LOG [--undumpable] [--map FILE]\n", argv[0]);
        return 2;
    }
    log_fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) {
        perror(argv[1]);
        return 1;
    }
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--undumpable") && prctl(PR_SET_DUMPABLE, 0) != 0) {
            perror("prctl");
            return 1;
        }
        if (!strcmp(argv[i], "--map") && i + 1 < argc) {
            int fd = open(argv[++i], O_RDONLY | O_CLOEXEC);
            if (fd < 0 || mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
                perror(argv[i]);
                return 1;
            }
        }
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = record;
    sigemptyset(&sa.sa_mask);
    for (int s = 1; s < 32; s++)
        if (s != SIGKILL && s != SIGSTOP && s != SIGTERM && s != SIGCHLD)
            sigaction(s, &sa, NULL); /* SIGTERM stays deadly: the test ends the target with it */
    char ready[4096];
    snprintf(ready, sizeof ready, "%s.ready", argv[1]);
    int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, "ready\n", 6) != 6)
        return 1;
    close(fd);
    for (;;)
        pause();
}
