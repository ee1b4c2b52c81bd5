/* chan8.c - the test plugin tp_chan8: offbyone.c whose planted bug is conv2d's channel remainder (the input's last
 * channel is left out when the channel count is not a multiple of 8). The failure groups must name C % 8 != 0. */
#define OB_BUG BUG_C8
#define OB_NAME "tp_chan8"
#define OB_DESCRIPTION "test plugin: conv2d leaves out the last input channel when C % 8 != 0"
#include "offbyone.c"
