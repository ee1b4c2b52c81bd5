/*
 * backend_absent.h - the test table of a built-in backend's test file in a build that left the backend out (its
 * library was absent): the backend must not be registered, and the backend's own tests are reported skipped with
 * the reason, never passed. One definition for every backend that links an optional library.
 *
 *     #else
 *     PAR_TEST_BACKEND_ABSENT("torch", "built without libtorch (make deps installs libtorch-dev)")
 *     #endif
 *     PAR_TEST_MAIN("torch", tests)
 */
#ifndef PAR_TEST_BACKEND_ABSENT_H
#define PAR_TEST_BACKEND_ABSENT_H

#include <string.h>

#include "exec/exec.h"
#include "tmain.h"

#define PAR_TEST_BACKEND_ABSENT(backend_name, why)                                                                   \
    static void test_absent(void)                                                                                    \
    {                                                                                                                \
        int32_t n = 0;                                                                                               \
        const par_backend *const *b = par_builtin_backends(&n);                                                      \
        int found = 0;                                                                                               \
        for (int32_t i = 0; i < n; i++) found |= strcmp(b[i]->name, backend_name) == 0;                             \
        CU_ASSERT_FALSE(found);                                                                                      \
    }                                                                                                                \
    static void test_not_built(void) { PAR_TEST_SKIP(why); }                                                        \
    static const CU_TestInfo tests[] = {                                                                             \
        {"left out of this build: the backend is not registered", test_absent},                                     \
        {"the backend's tests", test_not_built},                                                                     \
        CU_TEST_INFO_NULL,                                                                                           \
    };

#endif
