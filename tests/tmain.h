/*
 * tmain.h - the main() of a CUnit test program: one program per module. A file defines its tests and
 *     static const CU_TestInfo tests[] = { {"name", fn}, ..., CU_TEST_INFO_NULL };
 *     PAR_TEST_MAIN("module", tests)
 * The exit status is the number of failures (CU_basic_run_tests returns success even when tests fail).
 */
#ifndef PAR_TMAIN_H
#define PAR_TMAIN_H

#include <CUnit/Basic.h>
#include <stdio.h>

#define PAR_TEST_MAIN(suite_name, test_array)                                                                       \
    int main(void)                                                                                                  \
    {                                                                                                               \
        if (CU_initialize_registry() != CUE_SUCCESS) return 3;                                                      \
        CU_SuiteInfo suites[] = {{suite_name, NULL, NULL, NULL, NULL, (CU_TestInfo *)(test_array)},                \
                                 CU_SUITE_INFO_NULL};                                                               \
        if (CU_register_suites(suites) != CUE_SUCCESS) return 3;                                                    \
        CU_basic_set_mode(CU_BRM_NORMAL);                                                                           \
        CU_basic_run_tests();                                                                                       \
        unsigned failures = CU_get_number_of_failures();                                                            \
        unsigned asserts = CU_get_number_of_asserts();                                                              \
        CU_cleanup_registry();                                                                                      \
        if (asserts == 0) {                                                                                         \
            fprintf(stderr, "%s: no assertion ran\n", suite_name);                                                   \
            return 3;                                                                                               \
        }                                                                                                           \
        return failures ? 1 : 0;                                                                                    \
    }

#endif
