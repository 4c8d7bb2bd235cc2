/* Functions taken from a library loaded at run time with dlopen: libcurl
 * for the container backend (sandbox/container/curl.c), libidn2 for names
 * that are not ASCII (sandbox/netpolicy.c).  */
#ifndef CRUCIBLE_SANDBOX_DYNLOAD_H
#define CRUCIBLE_SANDBOX_DYNLOAD_H

#include <stddef.h>

/* One function to take: its symbol, and the offset of the function
 * pointer it goes into.  */
struct dynload_symbol
{
  const char *name;
  size_t offset;
};

/* clang-format off */
#define DYNLOAD_SYMBOL(sym, type, field) { sym, offsetof (type, field) }
/* clang-format on */

/* Take each of the n symbols from lib into the function pointer at its
 * offset in into.  NULL when every one was found, or the name of the
 * first that was not.  */
const char *dynload_take (void *lib, const struct dynload_symbol *syms,
                          size_t n, void *into);

#endif
