/*
 * xnnpack_maxpool_dilation.c - a direct call of the system XNNPACK (Debian 12's 2022-02 snapshot) that shows the max
 * pooling finding of docs/findings.md (XNNPACK, 9) without parity: a dilated max pooling whose ceil-mode window runs
 * past the padded input returns 0 for a window holding -2 and -1.
 *   cc tools/xnnpack_maxpool_dilation.c -o /tmp/probe -lXNNPACK -lpthreadpool -lcpuinfo -lm && /tmp/probe
 * Exit status 1 when XNNPACK's value differs from PyTorch's (the finding is there), 0 when it agrees, 2 on an API
 * failure.
 */
#include <math.h>
#include <stdio.h>
#include <xnnpack.h>

int main(void)
{
    if (xnn_initialize(NULL) != xnn_status_success) return 2;
    /* x [N=1, H=2, W=3, C=1] = {0, 1, 1; -2, 1, -1}; PyTorch's max_pool2d(kernel [3, 4], stride 3, padding top 2,
     * bottom 2, left 0, right 2, dilation 2, ceil_mode) is [1, 1, 2, 1]: output row 0 reads input row 0 (taps at rows
     * -2, 0, 2), row 1 reads input row 1 (taps 1, 3, 5), both at columns 0 and 2 (taps 0, 2, 4, 6): {1, -1}. The
     * ceil-mode row becomes 2 more rows of bottom padding (4 in all) and the column 2 more of right padding (4),
     * which XNNPACK's padded pooling is documented to ignore. */
    const float x[6] = {0, 1, 1, -2, 1, -1}, want[2] = {1, -1};
    float y[2] = {NAN, NAN};
    xnn_operator_t op = NULL;
    if (xnn_create_max_pooling2d_nhwc_f32(2, 4, 4, 0, 3, 4, 3, 3, 2, 2, 1, 1, 1, -INFINITY, INFINITY, 0, &op) !=
            xnn_status_success ||
        xnn_setup_max_pooling2d_nhwc_f32(op, 1, 2, 3, x, y, NULL) != xnn_status_success ||
        xnn_run_operator(op, NULL) != xnn_status_success) {
        fprintf(stderr, "XNNPACK refused the operator\n");
        return 2;
    }
    xnn_delete_operator(op);
    printf("XNNPACK: %g %g; PyTorch: %g %g\n", y[0], y[1], want[0], want[1]);
    return y[0] != want[0] || y[1] != want[1];
}
