/* SPDX-License-Identifier: Apache-2.0 */
/* core/util/push.c and the push options: URLs (http accepted, https and others refused with one
 * line), the protocol from the path, labels, Pyroscope's target URL-encoded, the back-off, and
 * one POST against sockets made here: a 200 read, a refused connection, and a server that
 * accepts and never answers, which costs the time-out and no more. */
#include <check.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_options.h"
#include "fx_push.h"

START_TEST(test_push_urls)
{
    struct fx_push_url u;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_push_url_parse("http://127.0.0.1:4040/ingest", &u, &eb), FX_OK);
    ck_assert_str_eq(u.host, "127.0.0.1");
    ck_assert_str_eq(u.port, "4040");
    ck_assert_str_eq(u.path, "/ingest");
    ck_assert_int_eq(fx_push_format_of(&u, FX_PUSH_AUTO), FX_PUSH_PYROSCOPE);
    ck_assert_int_eq(fx_push_url_parse("http://collector/v1development/profiles", &u, &eb), FX_OK);
    ck_assert_str_eq(u.port, "80");
    ck_assert_int_eq(fx_push_format_of(&u, FX_PUSH_AUTO), FX_PUSH_OTLP);
    ck_assert_int_eq(fx_push_format_of(&u, FX_PUSH_PYROSCOPE), FX_PUSH_PYROSCOPE);
    ck_assert_int_eq(fx_push_url_parse("http://h/other", &u, &eb), FX_OK);
    ck_assert_int_eq(fx_push_format_of(&u, FX_PUSH_AUTO), FX_PUSH_AUTO);
    ck_assert_int_eq(fx_push_url_parse("https://h/ingest", &u, &eb), FX_EINVAL);
    ck_assert_ptr_nonnull(strstr(eb.msg, "only http:// is supported"));
    ck_assert_int_eq(fx_push_url_parse("ftp://h/x", &u, &eb), FX_EINVAL);
    ck_assert_int_eq(fx_push_url_parse("http://:80/x", &u, &eb), FX_EINVAL);
    ck_assert_int_eq(fx_push_url_parse("http://h:8x/x", &u, &eb), FX_EINVAL);
}
END_TEST

START_TEST(test_push_labels_and_target)
{
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_push_labels_check("env=prod;region=eu-1", &eb), FX_OK);
    ck_assert_int_eq(fx_push_labels_check("env", &eb), FX_EINVAL);
    ck_assert_int_eq(fx_push_labels_check("env=", &eb), FX_EINVAL);
    ck_assert_int_eq(fx_push_labels_check("=x", &eb), FX_EINVAL);
    ck_assert_int_eq(fx_push_labels_check("a=b{", &eb), FX_EINVAL);
    struct fx_push_url u;
    ck_assert_int_eq(fx_push_url_parse("http://h:1/ingest", &u, &eb), FX_OK);
    char t[512];
    ck_assert_int_eq(fx_push_pyroscope_target(&u, "my app", "env=prod;dc=x", 10, 12, t, sizeof t),
                     FX_OK);
    ck_assert_str_eq(t, "/ingest?name=my%20app%7Benv%3Dprod%2Cdc%3Dx%7D&from=10&until=12"
                        "&format=pprof&spyName=fxagent");
    ck_assert_int_eq(fx_push_pyroscope_target(&u, "app", NULL, 1, 2, t, 20), FX_ERANGE);
    ck_assert_int_eq(fx_push_verdict_of(200), FX_PUSH_DELIVERED);
    ck_assert_int_eq(fx_push_verdict_of(204), FX_PUSH_DELIVERED);
    ck_assert_int_eq(fx_push_verdict_of(503), FX_PUSH_RETRY);
    ck_assert_int_eq(fx_push_verdict_of(429), FX_PUSH_RETRY);
    ck_assert_int_eq(fx_push_verdict_of(400), FX_PUSH_REFUSED);
    ck_assert_int_eq(fx_push_verdict_of(404), FX_PUSH_REFUSED);
    ck_assert_int_eq(fx_push_verdict_of(301), FX_PUSH_REFUSED);
    ck_assert_int_eq(fx_push_backoff_ms(1), 1000);
    ck_assert_int_eq(fx_push_backoff_ms(3), 4000);
    ck_assert_int_eq(fx_push_backoff_ms(40), 30000);
}
END_TEST

START_TEST(test_push_options)
{
    struct fx_options o;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_options_parse("push=http://h:9/ingest,service=app,labels=a=b;c=d", &o, &eb),
                     FX_OK);
    ck_assert_str_eq(o.push, "http://h:9/ingest");
    ck_assert_str_eq(o.service, "app");
    ck_assert_str_eq(o.labels, "a=b;c=d");
    fx_options_destroy(&o);
    ck_assert_int_eq(fx_options_parse("push=http://h/x", &o, &eb), FX_EINVAL);
    ck_assert_ptr_nonnull(strstr(eb.msg, "push_format=pyroscope or push_format=otlp"));
    ck_assert_int_eq(fx_options_parse("push_format=otlp,push=http://h/x", &o, &eb), FX_OK);
    ck_assert_int_eq(o.push_format, FX_PUSH_OTLP);
    fx_options_destroy(&o);
    ck_assert_int_eq(fx_options_parse("push=https://h/ingest", &o, &eb), FX_EINVAL);
    ck_assert_int_eq(fx_options_parse("labels=x", &o, &eb), FX_EINVAL);
}
END_TEST

START_TEST(test_push_queue_drops_the_oldest)
{
    struct fx_push_queue q = {0};
    uint64_t seq, first;
    char path[32];
    ck_assert_ptr_null(fx_push_queue_peek(&q, &seq));
    for (int i = 1; i <= FX_PUSH_QUEUE + 2; i++) {
        snprintf(path, sizeof path, "p-%d", i);
        ck_assert_int_eq(fx_push_queue_add(&q, path), FX_OK);
        if (i == 1)
            ck_assert_ptr_nonnull(fx_push_queue_peek(&q, &first));
    }
    ck_assert_uint_eq(q.count, FX_PUSH_QUEUE);
    ck_assert_uint_eq(q.dropped, 2); /* p-1 and p-2 went */
    ck_assert_str_eq(fx_push_queue_peek(&q, &seq), "p-3");
    fx_push_queue_done(&q, first); /* p-1 was being sent when it was dropped: nothing happens */
    ck_assert_str_eq(fx_push_queue_peek(&q, &seq), "p-3");
    fx_push_queue_done(&q, seq);
    ck_assert_str_eq(fx_push_queue_peek(&q, &seq), "p-4");
    ck_assert_uint_eq(q.count, FX_PUSH_QUEUE - 1);
    fx_alloc_fail_after(1);
    ck_assert_int_eq(fx_push_queue_add(&q, "p-x"), FX_ENOMEM);
    fx_alloc_fail_after(0);
    ck_assert_uint_eq(q.dropped, 3); /* not queued: counted as dropped */
    fx_push_queue_destroy(&q);
    ck_assert_uint_eq(q.count, 0);
}
END_TEST

/* A listening socket on 127.0.0.1; its port in *port. */
static int listener(char port[8])
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(s, 4), 0);
    getsockname(s, (struct sockaddr *)&a, &l);
    snprintf(port, 8, "%d", ntohs(a.sin_port));
    return s;
}

static void *answer_200(void *arg)
{
    int c = accept(*(int *)arg, NULL, NULL);
    char buf[4096];
    ssize_t n = recv(c, buf, sizeof buf, 0); /* head and the small body */
    (void)n;
    const char r[] = "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n";
    ssize_t w = send(c, r, sizeof r - 1, 0);
    (void)w;
    close(c);
    return NULL;
}

START_TEST(test_push_post)
{
    struct fx_push_url u = {.host = "127.0.0.1", .path = "/v1development/profiles"};
    struct fx_errbuf eb = {{0}};
    int status = 0;
    /* answered */
    int s = listener(u.port);
    pthread_t t;
    pthread_create(&t, NULL, answer_200, &s);
    ck_assert_int_eq(fx_push_post(&u, u.path, "application/x-protobuf", "gzip", "abc", 3, 2000,
                                  &status, &eb),
                     FX_OK);
    ck_assert_int_eq(status, 204);
    pthread_join(t, NULL);
    /* accepted (in the backlog) and never answered: the time-out, not more */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_int_eq(fx_push_post(&u, u.path, "x", NULL, "abc", 3, 300, &status, &eb), FX_EIO);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    ck_assert_double_ge(ms, 250);
    ck_assert_ptr_nonnull(strstr(eb.msg, "no answer within the time-out"));
    close(s);
    /* refused: the port is closed now */
    ck_assert_int_eq(fx_push_post(&u, u.path, "x", NULL, "abc", 3, 2000, &status, &eb), FX_EIO);
    ck_assert_ptr_nonnull(strstr(eb.msg, "refused"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("push");
    TCase *tc = tcase_create("push");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_push_urls);
    tcase_add_test(tc, test_push_labels_and_target);
    tcase_add_test(tc, test_push_options);
    tcase_add_test(tc, test_push_post);
    tcase_add_test(tc, test_push_queue_drops_the_oldest);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
