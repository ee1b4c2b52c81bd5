/*
 * tmain.h - the main() of a CUnit test program: one program per module. A file defines its tests and
 *     static const CU_TestInfo tests[] = { {"name", fn}, ..., CU_TEST_INFO_NULL };
 *     PAR_TEST_MAIN("module", tests)
 * It runs the tests quietly (no CUnit banner, no per-test line) and prints only what needs reading: one line per
 * failed assertion, one line per skipped test, and a closing line that tools/check_sum.sh adds up for `make check`:
 *     FAIL <test>: <file>:<line>: <assertion>
 *     SKIP <test>: <reason>
 *     test_graph: 12 passed, 0 failed[, 1 skipped]
 * A test that cannot run here (the CPU lacks the ISA it checks) calls PAR_TEST_SKIP("reason"), which returns from
 * the calling function: it is counted as skipped, never as passed (a skipped test that also failed an assertion
 * counts as failed). PAR_TEST_NIGHTLY() at the top of a test too slow for every `make check` (a whole model's
 * float64 reference, tens of seconds of CPU) skips it, saying so, unless PAR_TEST_NIGHTLY=1 is set, as `make nightly`
 * does (tools/nightly.sh runs every program that has such a test with it set). PAR_TEST_NOTE(fmt, ...) prints
 * informational measurements only with PAR_TEST_VERBOSE=1 set.
 * Exit status: 0 all passed or skipped, 1 some test failed, 3 the registry could not be set up or no assertion
 * ran although some test passed (a program that checks nothing must not pass; one whose every test was skipped on
 * this CPU is a skip). It must not print anything else on success.
 */
#ifndef PAR_TMAIN_H
#define PAR_TMAIN_H

#include <CUnit/CUnit.h>
#include <CUnit/TestRun.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per-program state of the handlers (each test program is one translation unit including this header). */
static unsigned par_tm_passed_, par_tm_failed_, par_tm_skipped_;
static int par_tm_skip_flag_;
static char par_tm_skip_reason_[256];

static inline void par_test_skip_(const char *reason)
{
    par_tm_skip_flag_ = 1;
    snprintf(par_tm_skip_reason_, sizeof par_tm_skip_reason_, "%s", reason ? reason : "skipped");
}

/* 1 when the environment variable is set to anything but "" or "0". */
static inline int par_test_env_(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

static inline int par_test_verbose_(void) { return par_test_env_("PAR_TEST_VERBOSE"); }

/* Declares the current test skipped and returns from the calling (void) function. */
#define PAR_TEST_SKIP(reason)                                                                                        \
    do {                                                                                                             \
        par_test_skip_(reason);                                                                                      \
        return;                                                                                                      \
    } while (0)

/* A test of the nightly job only: a skip, never a pass, unless PAR_TEST_NIGHTLY=1. */
#define PAR_TEST_NIGHTLY()                                                                                           \
    do {                                                                                                             \
        if (!par_test_env_("PAR_TEST_NIGHTLY")) PAR_TEST_SKIP("slow: run by make nightly (PAR_TEST_NIGHTLY=1)");     \
    } while (0)

/* Measurements worth seeing when working on a module, not on every `make check`. */
#define PAR_TEST_NOTE(...)                                                                                           \
    do {                                                                                                             \
        if (par_test_verbose_()) fprintf(stderr, __VA_ARGS__);                                                       \
    } while (0)

static void par_tm_start_(const CU_pTest test, const CU_pSuite suite)
{
    (void)test, (void)suite;
    par_tm_skip_flag_ = 0;
    par_tm_skip_reason_[0] = 0;
}

/* CUnit hands the test's first failure record; the rest of the list belongs to the same test (tests run one after
 * the other). */
static void par_tm_complete_(const CU_pTest test, const CU_pSuite suite, const CU_pFailureRecord failure)
{
    (void)suite;
    const char *name = test && test->pName ? test->pName : "?";
    unsigned n = 0;
    for (CU_pFailureRecord f = failure; f; f = f->pNext) {
        if (f->pTest != test) continue;
        n++;
        printf("FAIL %s: %s:%u: %s\n", name, f->strFileName ? f->strFileName : "?", f->uiLineNumber,
               f->strCondition ? f->strCondition : "?");
    }
    if (n) {
        par_tm_failed_++;
    } else if (par_tm_skip_flag_) {
        par_tm_skipped_++;
        printf("SKIP %s: %s\n", name, par_tm_skip_reason_);
    } else {
        par_tm_passed_++;
    }
    fflush(stdout);
}

static inline const char *par_tm_basename_(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : (path ? path : "test");
}

#define PAR_TEST_MAIN(suite_name, test_array)                                                                       \
    int main(int argc, char **argv)                                                                                 \
    {                                                                                                               \
        (void)argc;                                                                                                 \
        const char *prog = par_tm_basename_(argv[0]);                                                               \
        if (CU_initialize_registry() != CUE_SUCCESS) return 3;                                                      \
        CU_SuiteInfo suites[] = {{suite_name, NULL, NULL, NULL, NULL, (CU_TestInfo *)(test_array)},                \
                                 CU_SUITE_INFO_NULL};                                                               \
        if (CU_register_suites(suites) != CUE_SUCCESS) return 3;                                                    \
        CU_set_test_start_handler(par_tm_start_);                                                                   \
        CU_set_test_complete_handler(par_tm_complete_);                                                             \
        if (CU_run_all_tests() != CUE_SUCCESS) {                                                                    \
            fprintf(stderr, "%s: CUnit could not run the tests: %s\n", prog, CU_get_error_msg());                  \
            CU_cleanup_registry();                                                                                  \
            return 3;                                                                                               \
        }                                                                                                           \
        unsigned asserts = CU_get_number_of_asserts();                                                              \
        CU_cleanup_registry();                                                                                      \
        /* tests that passed without checking anything (or no test at all); every test skipped is a skip */       \
        const int vacuous = asserts == 0 && (par_tm_passed_ > 0 || par_tm_skipped_ == 0);                          \
        if (vacuous) {                                                                                              \
            printf("FAIL %s: no assertion ran\n", prog);                                                            \
            par_tm_failed_++;                                                                                       \
        }                                                                                                           \
        if (par_tm_failed_ || par_test_verbose_()) fputc('\n', stderr); /* diagnostics may end mid-line */         \
        if (par_tm_skipped_)                                                                                        \
            printf("%s: %u passed, %u failed, %u skipped\n", prog, par_tm_passed_, par_tm_failed_,                 \
                   par_tm_skipped_);                                                                                \
        else                                                                                                        \
            printf("%s: %u passed, %u failed\n", prog, par_tm_passed_, par_tm_failed_);                            \
        return vacuous ? 3 : par_tm_failed_ ? 1 : 0;                                                               \
    }

#endif
