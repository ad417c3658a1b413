/* test_harness_attrib.c: kernel attribution without a GPU (attrib.h):
 * library classification of real kernel names (as nvcc 13 mangles CUB's,
 * Thrust's and plain kernels), the shortened names a report shows, the
 * tally (sums, counts, aggregation by name, top kernels by time), the JSON
 * round trip and the text lines, the worker report's and results.json's
 * members, the eval table's and summary.md's attribution section; and the
 * candidate return codes' report text (dkb__cand_status_text). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "harness/adapter.h"
#include "harness/attrib.h"
#include "harness/protocol.h"
#include "harness/report.h"
#include "test_check.h"

/* names as CUPTI reports them (from a cubin built by nvcc 13.0 for sm_90) */
#define CUB_SORT                                                                                                        \
    "_ZN3cub17CUB_300001_SM_9006detail10radix_sort29DeviceRadixSortOnesweepKernelINS1_5radix10policy_hubIiNS0_8NullTy" \
    "peEyE10Policy1000ELNS0_9SortOrderE0EiS6_yiiNS1_21identity_decomposer_tEEEvPT5_SC_PT3_PKSD_PT1_PKSH_PT2_PKSL_T4_iiT6_"
#define CUB_REDUCE                                                                                                      \
    "_ZN3cub17CUB_300001_SM_9006detail6reduce18DeviceReduceKernelINS2_10policy_hubIijN4cuda3std3__44plusIvEEE10Policy1" \
    "000EPijS9_iNS7_10__identityEEEvT0_PT3_T1_NS0_13GridEvenShareISH_EET2_T4_"
#define CUB_EMPTY "_ZN3cub17CUB_300001_SM_9006detail11EmptyKernelIvEEvv"
#define ANON_K "_ZN36_GLOBAL__N__30ebad1e_4_t_cu_f87836b66anon_kEPi"
#define MY_SCAN "_Z7my_scanPKli"
#define TEMPLATED "_Z2tkILi128EEvPf"

static void test_library(void) {
    CHECK(dkb__attrib_library(CUB_SORT) && !strcmp(dkb__attrib_library(CUB_SORT), "cub"));
    CHECK(dkb__attrib_library(CUB_REDUCE) && !strcmp(dkb__attrib_library(CUB_REDUCE), "cub"));
    CHECK(dkb__attrib_library(CUB_EMPTY) && !strcmp(dkb__attrib_library(CUB_EMPTY), "cub"));
    const char *thrust = "_ZN6thrust20THRUST_300001_SM_9008cuda_cub4core6detail13_kernel_agentIvEEvv";
    CHECK(dkb__attrib_library(thrust) && !strcmp(dkb__attrib_library(thrust), "thrust"));
    const char *libcu = "_ZN4cuda3std3__46detail1kEv";
    CHECK(dkb__attrib_library(libcu) && !strcmp(dkb__attrib_library(libcu), "libcu++"));
    const char *torch = "_ZN2at6native29vectorized_elementwise_kernelILi4EEEviT_";
    CHECK(dkb__attrib_library(torch) && !strcmp(dkb__attrib_library(torch), "torch"));
    /* torch's own copy of CUB (namespace at_cuda_detail::cub), seen on the H200 */
    const char *torch_cub = "_ZN14at_cuda_detail3cub6detail10radix_sort30DeviceRadixSortOnesweepKernelEv";
    CHECK(dkb__attrib_library(torch_cub) && !strcmp(dkb__attrib_library(torch_cub), "torch"));
    CHECK(dkb__attrib_library("cublasLt_gemm_kernel") && !strcmp(dkb__attrib_library("cublasLt_gemm_kernel"), "cublas"));
    CHECK(dkb__attrib_library("_ZN8cublasLt6detail4gemmEv") && !strcmp(dkb__attrib_library("_ZN8cublasLt6detail4gemmEv"), "cublas"));
    CHECK(dkb__attrib_library("nvjet_tst_128x64") && !strcmp(dkb__attrib_library("nvjet_tst_128x64"), "cublas"));
    /* the candidate's own: global, templated, static, unnamed namespace,
     * extern "C", its own namespaces (even ones that look like a library's
     * but are not: "cubby", "thrusters", "at_"), a kernel templated on a
     * CUB type */
    const char *own[] = {MY_SCAN, TEMPLATED, "_Z8static_kPi", "_ZL8static_kPi", ANON_K, "c_kernel", "q06_scan",
                         "_ZN5cubby1kEv", "_ZN9thrusters1kEv", "_ZN3at_1kEv", "_Z6reduceIN3cub3SumEEvPi",
                         "_ZN3q066detail4scanEPKli", "", "_Z", "_ZN", "_ZN99cub", "(unnamed)"};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        CHECK(dkb__attrib_library(own[i]) == NULL, "%s: %s", own[i], dkb__attrib_library(own[i]));
    CHECK(dkb__attrib_library(NULL) == NULL);
}

/* A demangler for the shortening rules, independent of the C++ runtime. */
static char *fake_demangle(const char *m, char *buf, size_t *len, int *status) {
    (void)buf, (void)len;
    static const char *const map[][2] = {
        {CUB_SORT, "void cub::CUB_300001_SM_900::detail::radix_sort::DeviceRadixSortOnesweepKernel<cub::CUB_300001_SM_900::"
                   "detail::radix::policy_hub<int, cub::CUB_300001_SM_900::NullType, unsigned long long>::Policy1000, "
                   "(cub::CUB_300001_SM_900::SortOrder)0, int>(int*, int*, unsigned long long*)"},
        {CUB_REDUCE, "void cub::CUB_300001_SM_900::detail::reduce::DeviceReduceKernel<cub::CUB_300001_SM_900::detail::"
                     "reduce::policy_hub<int, unsigned int, cuda::std::__4::plus<void> >::Policy1000, int*>(int*, int*)"},
        {ANON_K, "(anonymous namespace)::anon_k(int*)"},
        {MY_SCAN, "my_scan(long const*, int)"},
        {TEMPLATED, "void tk<128>(float*)"},
        {"_ZN4cuda3std3__46detail1kEv", "cuda::std::__4::detail::k()"},
        {"_ZN6thrust20THRUST_300001_SM_900_NS4coreEv", "thrust::THRUST_300001_SM_900_NS::core::kern()"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(m, map[i][0])) {
            *status = 0;
            return strdup(map[i][1]);
        }
    *status = -2;
    return NULL;
}

static void test_short_name(void) {
    char b[DKB_ATTRIB_NAME];
    static const char *const want[][2] = {
        {CUB_SORT, "cub::detail::radix_sort::DeviceRadixSortOnesweepKernel<...>"},
        {CUB_REDUCE, "cub::detail::reduce::DeviceReduceKernel<...>"},
        {ANON_K, "(anonymous namespace)::anon_k"},
        {MY_SCAN, "my_scan"},
        {TEMPLATED, "tk<...>"},
        {"_ZN4cuda3std3__46detail1kEv", "cuda::std::detail::k"},
        {"_ZN6thrust20THRUST_300001_SM_900_NS4coreEv", "thrust::core::kern"},
        {"c_kernel", "c_kernel"},          /* not mangled: as it is */
        {"_Zunknown", "_Zunknown"},        /* the demangler fails: as it is */
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        dkb__attrib_short_name(want[i][0], fake_demangle, b, sizeof b);
        CHECK(!strcmp(b, want[i][1]), "%s -> '%s', expected '%s'", want[i][0], b, want[i][1]);
    }
    /* no demangler: the mangled name, truncated to the buffer */
    dkb__attrib_short_name(CUB_SORT, NULL, b, 16);
    CHECK(strlen(b) == 15 && !strncmp(b, CUB_SORT, 15), "%s", b);
    dkb__attrib_short_name(NULL, NULL, b, sizeof b);
    CHECK(b[0] == 0);
    /* a short output buffer never overflows */
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    dkb__attrib_short_name(CUB_SORT, fake_demangle, tiny, sizeof tiny);
    CHECK(memchr(tiny, 0, sizeof tiny) != NULL);
    /* the C++ runtime's demangler, when this program has one, gives the same */
    dkb_demangle_fn dm = dkb__attrib_demangler();
    if (dm) {
        dkb__attrib_short_name(CUB_SORT, dm, b, sizeof b);
        CHECK(!strcmp(b, "cub::detail::radix_sort::DeviceRadixSortOnesweepKernel<...>"), "%s", b);
        dkb__attrib_short_name(ANON_K, dm, b, sizeof b);
        CHECK(!strcmp(b, "(anonymous namespace)::anon_k"), "%s", b);
        dkb__attrib_short_name(MY_SCAN, dm, b, sizeof b);
        CHECK(!strcmp(b, "my_scan"), "%s", b);
    } else {
        printf("test_harness_attrib: no __cxa_demangle in this program: its check skipped\n");
    }
}

static void test_tally(void) {
    dkb_attrib_tally t;
    dkb__attrib_tally_init(&t, fake_demangle);
    dkb__attrib_tally_kernel(&t, MY_SCAN, 0.5);
    dkb__attrib_tally_kernel(&t, CUB_SORT, 0.2);
    dkb__attrib_tally_kernel(&t, CUB_SORT, 0.1);   /* same kernel: one entry, two launches */
    dkb__attrib_tally_kernel(&t, CUB_REDUCE, 0.05);
    dkb__attrib_tally_kernel(&t, TEMPLATED, 0.01);
    dkb__attrib_tally_kernel(&t, ANON_K, 0.02);
    dkb__attrib_tally_kernel(&t, "c_kernel", 0.03);
    dkb__attrib_tally_kernel(&t, "q06_bad", NAN);   /* a bad duration counts 0 */
    dkb__attrib_tally_copy(&t, 0.004);
    dkb__attrib_tally_copy(&t, 0.006);
    dkb__attrib_tally_memset(&t, 0.001);
    dkb_attribution a;
    dkb__attrib_tally_finish(&t, &a);
    CHECK(a.recorded);
    CHECK(a.kernels == 8 && a.own_kernels == 5 && a.library_kernels == 3, "%d %d %d", a.kernels, a.own_kernels,
          a.library_kernels);
    CHECK(fabs(a.own_ms - 0.56) < 1e-12, "%.17g", a.own_ms);
    CHECK(fabs(a.library_ms - 0.35) < 1e-12, "%.17g", a.library_ms);
    CHECK(fabs(a.copy_ms - 0.01) < 1e-12 && a.copies == 2);
    CHECK(fabs(a.memset_ms - 0.001) < 1e-12 && a.memsets == 1);
    CHECK(fabs(dkb__attrib_own_share(&a) - 0.56 / 0.91) < 1e-12);
    CHECK(!strcmp(a.libraries, "cub"), "%s", a.libraries);
    CHECK(a.ntop == DKB_ATTRIB_TOP);
    CHECK(!strcmp(a.top[0].name, "my_scan") && !a.top[0].library[0] && a.top[0].launches == 1);
    CHECK(!strcmp(a.top[1].name, "cub::detail::radix_sort::DeviceRadixSortOnesweepKernel<...>") &&
              !strcmp(a.top[1].library, "cub") && a.top[1].launches == 2 && fabs(a.top[1].ms - 0.3) < 1e-12,
          "%s %s %d %g", a.top[1].name, a.top[1].library, a.top[1].launches, a.top[1].ms);
    CHECK(!strcmp(a.top[2].name, "cub::detail::reduce::DeviceReduceKernel<...>"));
    CHECK(!strcmp(a.top[3].name, "c_kernel") && !strcmp(a.top[4].name, "(anonymous namespace)::anon_k"));
    for (int i = 1; i < a.ntop; i++) CHECK(a.top[i - 1].ms >= a.top[i].ms);

    /* a Python candidate's call: a mangled kernel no namespace places is torch's, a plain one (Triton's) its own */
    static const char ANON_TORCH[] = "_ZN12_GLOBAL__N_128elementwise_kernel_with_indexIiEEvv";
    for (int py = 0; py < 2; py++) {
        dkb_attrib_tally pt;
        dkb__attrib_tally_init(&pt, NULL);
        pt.python = py;
        dkb__attrib_tally_kernel(&pt, ANON_TORCH, 0.002);
        dkb__attrib_tally_kernel(&pt, "q06_partials", 0.01);
        dkb_attribution pa;
        dkb__attrib_tally_finish(&pt, &pa);
        CHECK(pa.own_kernels == (py ? 1 : 2) && pa.library_kernels == (py ? 1 : 0), "python %d: own %d library %d", py,
              pa.own_kernels, pa.library_kernels);
        CHECK(!strcmp(pa.libraries, py ? "torch" : ""), "%s", pa.libraries);
    }

    /* library kernels fill the list: the largest own kernel still takes its last place */
    dkb_attrib_tally lt;
    dkb__attrib_tally_init(&lt, fake_demangle);
    const char *libs[] = {"cublasGemv", "cublasDot", "cudnnConv", "nvjet_a", "nvjet_b", "nvjet_c"};
    for (int i = 0; i < 6; i++) dkb__attrib_tally_kernel(&lt, libs[i], 1.0 + i);
    dkb__attrib_tally_kernel(&lt, "tiny_own", 0.001);
    dkb__attrib_tally_kernel(&lt, "tinier_own", 0.0005);
    dkb_attribution la;
    dkb__attrib_tally_finish(&lt, &la);
    CHECK(la.ntop == DKB_ATTRIB_TOP && !strcmp(la.top[DKB_ATTRIB_TOP - 1].name, "tiny_own") &&
              !la.top[DKB_ATTRIB_TOP - 1].library[0] && !strcmp(la.top[0].name, "nvjet_c"),
          "%s %s", la.top[0].name, la.top[DKB_ATTRIB_TOP - 1].name);

    /* the text */
    char line[512];
    dkb__attrib_line(&a, line, sizeof line);
    CHECK(!strcmp(line, "own 0.560 ms, library 0.350 ms (cub), copies 0.010 ms, memsets 0.001 ms; 8 kernels; own share 61.5%"),
          "%s", line);
    dkb__attrib_top_line(&a, 2, line, sizeof line);
    CHECK(!strcmp(line, "my_scan 0.500 ms, cub::detail::radix_sort::DeviceRadixSortOnesweepKernel<...> [cub] 0.300 ms x2"),
          "%s", line);
    char small[20];
    dkb__attrib_top_line(&a, 5, small, sizeof small);
    CHECK(strlen(small) < sizeof small);

    /* the JSON round trip */
    a.wall_s = 1.25;
    cJSON *o = cJSON_CreateObject();
    CHECK(dkb__attrib_add_json(o, "attribution", &a) == 0);
    char *text = cJSON_PrintUnformatted(o);
    CHECK(text && strstr(text, "\"attribution_note\":null"), "%s", text ? text : "");
    CHECK(text && strstr(text, "\"libraries\":[\"cub\"]"), "%s", text ? text : "");
    CHECK(text && strstr(text, "\"library\":null"), "%s", text ? text : "");
    cJSON *back = text ? cJSON_Parse(text) : NULL;
    dkb_attribution b;
    dkb__attrib_from_json(back, "attribution", &b);
    CHECK(b.recorded && b.kernels == 8 && b.own_kernels == 5 && b.library_kernels == 3 && b.copies == 2 && b.memsets == 1);
    CHECK(fabs(b.own_ms - a.own_ms) < 1e-12 && fabs(b.library_ms - a.library_ms) < 1e-12);
    CHECK(b.ntop == a.ntop && !strcmp(b.top[1].name, a.top[1].name) && !strcmp(b.top[1].library, "cub") &&
          b.top[1].launches == 2 && !b.top[0].library[0]);
    CHECK(!strcmp(b.libraries, "cub"), "%s", b.libraries);
    CHECK(b.wall_s == 1.25);
    free(text);
    cJSON_Delete(o);
    cJSON_Delete(back);

    /* not recorded, with a note: null and the note */
    dkb_attribution n;
    dkb__attrib_init(&n);
    snprintf(n.note, sizeof n.note, "not available in this build");
    CHECK(isnan(dkb__attrib_own_share(&n)));
    o = cJSON_CreateObject();
    CHECK(dkb__attrib_add_json(o, "attribution", &n) == 0);
    text = cJSON_PrintUnformatted(o);
    CHECK(text && !strcmp(text, "{\"attribution_note\":\"not available in this build\",\"attribution\":null}"), "%s", text ? text : "");
    back = text ? cJSON_Parse(text) : NULL;
    dkb__attrib_from_json(back, "attribution", &b);
    CHECK(!b.recorded && !strcmp(b.note, "not available in this build"));
    dkb__attrib_line(&b, line, sizeof line);
    CHECK(!strcmp(line, "not available in this build"));
    dkb__attrib_top_line(&b, 3, line, sizeof line);
    CHECK(line[0] == 0);
    free(text);
    cJSON_Delete(o);
    cJSON_Delete(back);
    /* absent, or malformed: not recorded */
    back = cJSON_Parse("{\"attribution\": 3, \"attribution_note\": 5}");
    dkb__attrib_from_json(back, "attribution", &b);
    CHECK(!b.recorded && !b.note[0]);
    cJSON_Delete(back);
    dkb__attrib_from_json(NULL, "attribution", &b);
    CHECK(!b.recorded);
    back = cJSON_Parse("{\"attribution\": {\"kernels\": -4, \"top\": [1, {\"name\": \"k\", \"ms\": \"x\"}], \"libraries\": 7}}");
    dkb__attrib_from_json(back, "attribution", &b);
    CHECK(b.recorded && b.kernels == 0 && b.ntop == 1 && !strcmp(b.top[0].name, "k") && b.top[0].ms == 0);
    CHECK(isnan(dkb__attrib_own_share(&b)));
    cJSON_Delete(back);

    /* an empty call: recorded, no kernels, own share unknown */
    dkb__attrib_tally_init(&t, NULL);
    dkb__attrib_tally_finish(&t, &a);
    CHECK(a.recorded && a.kernels == 0 && a.ntop == 0 && isnan(dkb__attrib_own_share(&a)));
    dkb__attrib_line(&a, line, sizeof line);
    CHECK(strstr(line, "0 kernels; own share -"), "%s", line);

    /* many distinct kernels and several libraries */
    dkb__attrib_tally_init(&t, NULL);
    char name[32];
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof name, "k%03d", i);
        dkb__attrib_tally_kernel(&t, name, i * 0.001);
    }
    dkb__attrib_tally_kernel(&t, "_ZN6thrust1kEv", 1);
    dkb__attrib_tally_kernel(&t, CUB_EMPTY, 1);
    dkb__attrib_tally_kernel(&t, "_ZN6thrust1kEv", 1);
    dkb__attrib_tally_finish(&t, &a);
    CHECK(a.kernels == 303 && a.ntop == DKB_ATTRIB_TOP && !strcmp(a.top[2].name, "k299"), "%s", a.top[2].name);
    CHECK(!strcmp(a.libraries, "thrust, cub"), "%s", a.libraries);
}


/* A recorded attribution for the report tests. */
static dkb_attribution sample(void) {
    dkb_attrib_tally t;
    dkb__attrib_tally_init(&t, fake_demangle);
    dkb__attrib_tally_kernel(&t, MY_SCAN, 0.75);
    dkb__attrib_tally_kernel(&t, CUB_SORT, 0.25);
    dkb__attrib_tally_copy(&t, 0.01);
    dkb_attribution a;
    dkb__attrib_tally_finish(&t, &a);
    a.window_ms = 1.25, a.busy_ms = 1.0, a.lead_ms = 0.05; /* as dkb__attrib_busy leaves them */
    return a;
}

/* The worker's report carries it (and a note) through JSON. */
static void test_worker_report(void) {
    dkb_report r, back;
    dkb__report_init(&r);
    r.verdict = DKB_VERDICT_OK;
    r.attribution = sample();
    char *line = dkb__report_json(&r);
    CHECK(line && strstr(line, "\"attribution\":{") && strstr(line, "\"attribution_note\":null"), "%s", line ? line : "");
    dkb_error err = {0};
    CHECK(line && dkb__report_parse(line, &back, &err) == 0, "%s", err.msg);
    CHECK(back.attribution.recorded && back.attribution.kernels == 2 && fabs(back.attribution.own_ms - 0.75) < 1e-12);
    CHECK(back.attribution.ntop == 2 && !strcmp(back.attribution.top[1].library, "cub"));
    free(line);
    dkb__report_free(&back);
    /* CPU rows: nothing, no note */
    dkb__report_init(&r);
    r.verdict = DKB_VERDICT_OK;
    line = dkb__report_json(&r);
    CHECK(line && strstr(line, "\"attribution_note\":null,\"attribution\":null"), "%s", line ? line : "");
    CHECK(line && dkb__report_parse(line, &back, &err) == 0 && !back.attribution.recorded && !back.attribution.note[0]);
    free(line);
    dkb__report_free(&back);
    /* a report without the members (an older worker): not recorded */
    CHECK(dkb__report_parse("{\"verdict\":\"ok\"}", &back, &err) == 0 && !back.attribution.recorded);
    dkb__report_free(&back);
}

/* results.json, the eval table and summary.md of a CUDA evaluation. */
static void test_results(void) {
    dkb_eval_results res;
    memset(&res, 0, sizeof res);
    res.opts.backend = "cuda";
    res.opts.threshold = 1.0;
    res.opts.modes = 1u << DKB_MODE_FULL;
    dkb_eval_item items[3];
    memset(items, 0, sizeof items);
    const char *names[3] = {"q06", "q13", "q14"};
    for (int i = 0; i < 3; i++) {
        dkb_eval_item *it = &items[i];
        snprintf(it->query, sizeof it->query, "%s", names[i]);
        it->qnum = 6 + i;
        it->mode = DKB_MODE_FULL;
        it->verdict = DKB_VERDICT_OK;
        it->baseline.median = it->baseline.min = it->baseline.max = 2.0;
        it->baseline.runs = 10;
        it->candidate.median = it->candidate.min = it->candidate.max = 1.0;
        it->candidate.runs = 10;
        it->floor_ms = it->bytes_read = it->bandwidth_gbs = NAN;
    }
    items[0].attribution = sample();
    snprintf(items[1].attribution.note, sizeof items[1].attribution.note, "not available in this build");
    items[2].verdict = DKB_VERDICT_WRONG_ANSWER;
    items[2].candidate.runs = 0;
    items[2].candidate.median = NAN;
    res.items = items;
    res.n = 3;
    dkb_error err = {0};
    CHECK(dkb__eval_score(&res, &err) == 0, "%s", err.msg);

    cJSON *doc = dkb__results_json(&res);
    const cJSON *rows = doc ? cJSON_GetObjectItemCaseSensitive(doc, "candidates") : NULL;
    CHECK(cJSON_GetArraySize(rows) == 3);
    const cJSON *a0 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rows, 0), "attribution");
    CHECK(cJSON_IsObject(a0) && cJSON_GetObjectItemCaseSensitive(a0, "own_share") &&
          fabs(cJSON_GetObjectItemCaseSensitive(a0, "own_share")->valuedouble - 0.75) < 1e-12);
    const cJSON *n1 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rows, 1), "attribution_note");
    CHECK(cJSON_IsString(n1) && !strcmp(n1->valuestring, "not available in this build"));
    CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rows, 1), "attribution")));
    cJSON_Delete(doc);

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f && dkb__results_print(&res, DKB_RESULTS_TABLE, f, &err) == 0);
    if (f) fclose(f);
    CHECK(text && strstr(text, "kernel attribution (one untimed call on seed 0, CUPTI; device ms):"), "%s", text ? text : "");
    CHECK(text && strstr(text, "q06   full      0.750      0.250     0.010     0.000       2     75.0%    0.250    0.050  my_scan 0.750 ms, "
                               "cub::detail::radix_sort::DeviceRadixSortOnesweepKernel<...> [cub] 0.2...\n"),
          "%s", text ? text : "");
    CHECK(text && strstr(text, "q13   full          -          -         -         -       -         -        -        -  not recorded: not "
                               "available in this build"),
          "%s", text ? text : "");
    CHECK(text && strstr(text, "not recorded (wrong_answer)"), "%s", text ? text : "");
    free(text);

    text = NULL;
    f = open_memstream(&text, &len);
    CHECK(f && dkb__results_print(&res, DKB_RESULTS_MARKDOWN, f, &err) == 0);
    if (f) fclose(f);
    CHECK(text && strstr(text, "## Kernel attribution"), "%s", text ? text : "");
    CHECK(text && strstr(text, "| q06 | full | 0.750 | 0.250 | 0.010 | 0.000 | 2 | 75.0% | 0.250 | 0.050 | my_scan 0.750 ms, "),
          "%s", text ? text : "");
    CHECK(text && strstr(text, "| q13 | full | - | - | - | - | - | - | - | - | not recorded: not available in this build |"),
          "%s", text ? text : "");
    free(text);

    /* a CPU evaluation: no section */
    res.opts.backend = "cpu";
    dkb__attrib_init(&items[0].attribution);
    dkb__attrib_init(&items[1].attribution);
    text = NULL;
    f = open_memstream(&text, &len);
    CHECK(f && dkb__results_print(&res, DKB_RESULTS_MARKDOWN, f, &err) == 0 &&
          dkb__results_print(&res, DKB_RESULTS_TABLE, f, &err) == 0);
    if (f) fclose(f);
    CHECK(text && !strstr(text, "ttribution"), "%s", text ? text : "");
    free(text);
}

static void test_cand_status(void) {
    char b[160];
    CHECK(!strcmp(dkb__cand_status_text(4, b, sizeof b), "returned 4 (DKB_CAND_ECAP: an output is over its cap)"), "%s", b);
    CHECK(!strcmp(dkb__cand_status_text(DKB_CAND_ENOMEM, b, sizeof b), "returned 2 (DKB_CAND_ENOMEM: out of memory (host or device))"),
          "%s", b);
    CHECK(!strncmp(dkb__cand_status_text(DKB_CAND_EINVAL, b, sizeof b), "returned 1 (DKB_CAND_EINVAL: bad input", 38), "%s", b);
    CHECK(!strcmp(dkb__cand_status_text(DKB_CAND_ECUDA, b, sizeof b), "returned 3 (DKB_CAND_ECUDA: a CUDA call failed)"), "%s", b);
    CHECK(!strncmp(dkb__cand_status_text(5, b, sizeof b), "returned 5 (DKB_CAND_EINTERNAL: ", 32), "%s", b);
    /* any other value: the number alone */
    CHECK(!strcmp(dkb__cand_status_text(17, b, sizeof b), "returned 17"), "%s", b);
    CHECK(!strcmp(dkb__cand_status_text(7, b, sizeof b), "returned 7"), "%s", b);
    CHECK(!strcmp(dkb__cand_status_text(-1, b, sizeof b), "returned -1"), "%s", b);
    CHECK(!strcmp(dkb__cand_status_text(0, b, sizeof b), "returned 0"), "%s", b);
    /* truncation, and no buffer */
    char s[12];
    CHECK(!strcmp(dkb__cand_status_text(4, s, sizeof s), "returned 4 "), "%s", s);
    CHECK(!strcmp(dkb__cand_status_text(4, NULL, 0), ""));
    CHECK(dkb__cand_status_name(4) && !strcmp(dkb__cand_status_name(4), "DKB_CAND_ECAP"));
    CHECK(dkb__cand_status_name(0) && !strcmp(dkb__cand_status_name(0), "DKB_CAND_OK"));
    CHECK(dkb__cand_status_name(6) && !strcmp(dkb__cand_status_name(6), "DKB_CAND_ERANKS"));
    CHECK(dkb__cand_status_name(7) == NULL && dkb__cand_status_name(-3) == NULL);
    /* the enum's values are the table's */
    CHECK(DKB_CAND_OK == 0 && DKB_CAND_EINVAL == 1 && DKB_CAND_ENOMEM == 2 && DKB_CAND_ECUDA == 3 && DKB_CAND_ECAP == 4 &&
          DKB_CAND_EINTERNAL == 5 && DKB_CAND_ERANKS == 6);
}

/* The device's busy time in a window: the union of intervals, clipped. */
static void test_busy(void) {
    dkb_attribution a;
    dkb__attrib_init(&a);
    CHECK(isnan(a.window_ms) && isnan(a.busy_ms) && isnan(a.lead_ms));
    /* window 1000..11000 ns; out of order, overlapping, nested, one
     * starting before the window and one ending after it, one outside */
    uint64_t iv[][2] = {{5000, 6000}, {800, 1500}, {3000, 5500}, {3100, 3200}, {10500, 12000}, {20000, 21000}};
    dkb__attrib_busy(iv, 6, 1000, 11000, &a);
    /* busy: 1000..1500, 3000..6000, 10500..11000 = 500 + 3000 + 500 ns */
    CHECK(fabs(a.window_ms - 0.010) < 1e-12 && fabs(a.busy_ms - 0.004) < 1e-12, "%g %g", a.window_ms, a.busy_ms);
    CHECK(fabs(a.lead_ms) < 1e-12, "%g", a.lead_ms);
    uint64_t late[][2] = {{4000, 4500}};
    dkb__attrib_busy(late, 1, 1000, 11000, &a);
    CHECK(fabs(a.lead_ms - 0.003) < 1e-12 && fabs(a.busy_ms - 0.0005) < 1e-12, "%g %g", a.lead_ms, a.busy_ms);
    dkb__attrib_busy(NULL, 0, 1000, 3000, &a);
    CHECK(fabs(a.window_ms - 0.002) < 1e-12 && a.busy_ms == 0 && isnan(a.lead_ms));
    /* through JSON and back */
    cJSON *o = cJSON_CreateObject();
    a.recorded = true;
    CHECK(dkb__attrib_add_json(o, "attribution", &a) == 0);
    dkb_attribution b;
    dkb__attrib_from_json(o, "attribution", &b);
    CHECK(fabs(b.window_ms - 0.002) < 1e-12 && b.busy_ms == 0 && isnan(b.lead_ms));
    cJSON_Delete(o);
}

int main(void) {
    test_busy();
    test_library();
    test_short_name();
    test_tally();
    test_worker_report();
    test_results();
    test_cand_status();
    if (failures) {
        fprintf(stderr, "test_harness_attrib: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_harness_attrib: ok\n");
    return 0;
}
