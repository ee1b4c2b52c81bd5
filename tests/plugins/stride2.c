/* stride2.c - the test plugin tp_stride2: offbyone.c whose planted bug is conv2d's right edge at a horizontal stride
 * of 2 (the input's last column is left out where a window reaches it). The failure groups must name s=[2,2]. */
#define OB_BUG BUG_STRIDE2
#define OB_NAME "tp_stride2"
#define OB_DESCRIPTION "test plugin: conv2d at stride 2 leaves out the input's last column"
#include "offbyone.c"
