/*
 * torch_lib.h - the contract between the built-in `torch` backend (torch.c, C, linked into parity) and its library
 * object libparity_torch.so (torch_*.cpp, C++ over libtorch), which torch.c opens with dlopen so that no parity
 * process or test links libtorch: the library exports one C function, PAR_TORCH_ENTRY_SYMBOL, returning a complete
 * par_backend table (core/parity_backend.h) whose set_knob takes mode=, qengine= and threads= (torch.c keeps lib=).
 *
 * It must not include anything but core/parity_backend.h: both sides, C and C++, include it.
 */
#ifndef PAR_TORCH_LIB_H
#define PAR_TORCH_LIB_H

#include "core/parity_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's one export: const par_backend *parity_torch_backend(void). */
#define PAR_TORCH_ENTRY_SYMBOL "parity_torch_backend"
typedef const par_backend *(*par_torch_entry_fn)(void);

/* The library's file name, looked for in build/lib beside the executable and in the installed library folder. */
#define PAR_TORCH_LIB_NAME "libparity_torch.so"

#ifdef __cplusplus
}
#endif

#endif
