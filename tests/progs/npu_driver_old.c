/* SPDX-License-Identifier: GPL-2.0-only */
/* The stand-in driver as a kernel before 6.11 has it: no ivpu_hw_ip_db_set,
 * so only the submit ioctl says a job was submitted (tests/bpf/npu.sh). */
#define NPU_DRIVER_NO_DOORBELL 1
#include "npu_driver.c"
