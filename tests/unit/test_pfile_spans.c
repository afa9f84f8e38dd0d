/* SPDX-License-Identifier: Apache-2.0 */
/* core/convert/pfile_spans.c and what the converters make of it (issue 33 item 4): a track's
 * "TraceSpan" markers sorted, a sample inside a span's range [start, end) carries it and one
 * between spans none, a malformed span is refused; the walk gives a span's samples rows of their
 * own with the span set (every allocation failure an error said), the OTLP conversion writes its
 * Link and labels. The same end to end on a real JVM: it.trace (tests/it/trace_test.sh). */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_convert.h"
#include "fx_err.h"
#include "fx_pfile.h"

/* One thread: stack 1 (main > work) sampled at 1, 2, 3, 4 ms, stack 0 (main) at 5 ms; span a1
 * over [2, 3.001) with tenant=acme, span a2 over [4.5, 5.001) without labels (the agent ends a
 * span 1 us after its last sample), listed out of order, with
 * another marker between. */
static const char *PROFILE =
        "{\"meta\":{\"interval\":1,\"startTime\":1000},\"threads\":[{\"name\":\"w (tid 7)\","
        "\"tid\":7,\"pid\":3,"
        "\"stackTable\":{\"frame\":[0,1],\"prefix\":[null,0],\"length\":2},"
        "\"frameTable\":{\"func\":[0,1],\"line\":[null,null],\"length\":2},"
        "\"funcTable\":{\"name\":[0,1],\"length\":2},\"stringArray\":[\"main\",\"work\"],"
        "\"samples\":{\"stack\":[1,1,1,1,0],\"time\":[1,2,3,4,5],\"length\":5},"
        "\"markers\":{\"data\":["
        "{\"type\":\"TraceSpan\",\"trace_id\":\"0000000000000001000000000000000a\","
        "\"span_id\":\"00000000000000a2\",\"label1\":\"\",\"label2\":\"\",\"label3\":\"\","
        "\"label4\":\"\"},"
        "{\"type\":\"JvmUserMarker\",\"text\":\"x\"},"
        "{\"type\":\"TraceSpan\",\"trace_id\":\"0000000000000001000000000000000a\","
        "\"span_id\":\"00000000000000a1\",\"label1\":\"tenant=acme\",\"label2\":\"\","
        "\"label3\":\"\",\"label4\":\"\"}],"
        "\"name\":[0,0,0],\"startTime\":[4.5,1,2],\"endTime\":[5.001,1,3.001],\"phase\":[1,1,1],"
        "\"category\":[0,0,0],\"length\":3}}]}";

static cJSON *load(const char *text)
{
    cJSON *root = cJSON_Parse(text);
    ck_assert_ptr_nonnull(root);
    return root;
}

static const cJSON *thread0(const cJSON *root)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "threads"), 0);
}

START_TEST(test_pfile_spans_sorted_bounds_included)
{
    cJSON *root = load(PROFILE);
    struct fx_pfile_spans s;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_pfile_spans(thread0(root), &s, &eb), FX_OK);
    ck_assert_uint_eq(s.n, 2);
    ck_assert_str_eq(s.s[0].span_id, "00000000000000a1");
    ck_assert_str_eq(s.s[0].label[0], "tenant=acme");
    ck_assert_ptr_null(s.s[1].label[0]); /* "" is no label */
    ck_assert_int_eq(fx_pfile_span_at(&s, 1.0), -1);
    ck_assert_int_eq(fx_pfile_span_at(&s, 2.0), 0);
    ck_assert_int_eq(fx_pfile_span_at(&s, 3.0004), 0); /* the writer's whole microseconds */
    ck_assert_int_eq(fx_pfile_span_at(&s, 3.001), -1); /* the end is out */
    ck_assert_int_eq(fx_pfile_span_at(&s, 3.01), -1);
    ck_assert_int_eq(fx_pfile_span_at(&s, 4.0), -1);
    ck_assert_int_eq(fx_pfile_span_at(&s, 5.0), 1);
    ck_assert_int_eq(fx_pfile_span_at(&s, 6.0), -1);
    fx_pfile_spans_destroy(&s);
    cJSON_Delete(root);
}
END_TEST

START_TEST(test_pfile_spans_malformed_refused)
{
    cJSON *root = load("{\"markers\":{\"data\":[{\"type\":\"TraceSpan\",\"trace_id\":\"01\"}],"
                       "\"startTime\":[1],\"endTime\":[2],\"length\":1}}");
    struct fx_pfile_spans s;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_pfile_spans(root, &s, &eb), FX_EINVAL);
    ck_assert_uint_eq(s.n, 0);
    ck_assert_ptr_null(s.s);
    ck_assert_ptr_nonnull(strstr(eb.msg, "TraceSpan"));
    cJSON_Delete(root);
}
END_TEST

struct rows {
    double plain[3], in_a1[3], in_a2[3]; /* samples by stack + 1 */
};

static int row(struct fx_walk *k, int32_t stack, const double *v, void *ctx)
{
    struct rows *r = ctx;
    double *col = !k->span                                        ? r->plain
                  : !strcmp(k->span->span_id, "00000000000000a1") ? r->in_a1
                                                                  : r->in_a2;
    col[stack + 1] += v[FX_V_SAMPLES];
    return FX_OK;
}

START_TEST(test_pfile_spans_walk_rows_per_span)
{
    cJSON *root = load(PROFILE);
    struct fx_walk k = {.root = root};
    struct rows r;
    memset(&r, 0, sizeof r);
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_convert_walk(&k, row, &r, &eb), FX_OK);
    ck_assert(r.plain[2] == 2 && r.plain[1] == 0); /* work at 1 and 4 ms */
    ck_assert(r.in_a1[2] == 2);                    /* work at 2 and 3 ms */
    ck_assert(r.in_a2[1] == 1 && r.in_a2[2] == 0); /* main at 5 ms */
    fx_convert_walk_destroy(&k);
    cJSON_Delete(root);
}
END_TEST

/* Every allocation of the walk and the OTLP conversion failing in turn: FX_ENOMEM, said. */
START_TEST(test_pfile_spans_every_allocation_failure)
{
    cJSON *root = load(PROFILE);
    long n;
    for (n = 1;; n++) {
        struct fx_walk k = {.root = root};
        struct rows r;
        memset(&r, 0, sizeof r);
        struct fx_errbuf eb = {{0}};
        fx_alloc_fail_after(n);
        int rc = fx_convert_walk(&k, row, &r, &eb);
        fx_alloc_fail_after(0);
        fx_convert_walk_destroy(&k);
        if (rc == FX_OK)
            break;
        ck_assert_int_eq(rc, FX_ENOMEM);
        ck_assert_ptr_nonnull(strstr(eb.msg, "memory"));
        ck_assert_int_lt(n, 1000);
    }
    ck_assert_int_gt(n, 3); /* the tables, the values, the spans, the pairs */
    cJSON_Delete(root);
}
END_TEST

START_TEST(test_pfile_spans_otlp_link_and_labels)
{
    cJSON *root = load(PROFILE);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    double idle;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_convert_otlp(root, false, f, &idle, &eb), FX_OK);
    fclose(f);
    /* Link{trace_id: 16 bytes, span_id: 8 bytes}, as encoded (fields 1 and 2, length 16, 8) */
    static const unsigned char link[] = {0x0a, 16, 0, 0, 0, 0, 0, 0,    0, 1,
                                         0,    0,  0, 0, 0, 0, 0, 0x0a,           /* trace_id */
                                         0x12, 8,  0, 0, 0, 0, 0, 0,    0, 0xa1}; /* span_id */
    ck_assert_ptr_nonnull(memmem(buf, len, link, sizeof link));
    ck_assert_ptr_nonnull(memmem(buf, len, "tenant", 6));
    ck_assert_ptr_nonnull(memmem(buf, len, "acme", 4));
    free(buf);
    cJSON_Delete(root);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pfile_spans");
    TCase *tc = tcase_create("spans");
    tcase_add_test(tc, test_pfile_spans_sorted_bounds_included);
    tcase_add_test(tc, test_pfile_spans_malformed_refused);
    tcase_add_test(tc, test_pfile_spans_walk_rows_per_span);
    tcase_add_test(tc, test_pfile_spans_every_allocation_failure);
    tcase_add_test(tc, test_pfile_spans_otlp_link_and_labels);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
