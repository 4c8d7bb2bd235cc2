/* Functions taken from a library loaded at run time with dlopen: libcurl
 * for the container backend (sandbox/container/curl.c), libidn2 for names
 * that are not ASCII (sandbox/netpolicy.c).  */
#ifndef CRUCIBLE_SANDBOX_DYNLOAD_H
#define CRUCIBLE_SANDBOX_DYNLOAD_H

#include <stddef.h>

/* Why dynload_open refuses to search: an entry of LD_LIBRARY_PATH that
 * is not an absolute directory.  */
#define DYNLOAD_RELATIVE_PATH                                                  \
  "LD_LIBRARY_PATH has an entry that is not an absolute directory (an "        \
  "empty one, or one such as `lib`, is looked in from the current "            \
  "directory, the workspace, whose files a command may write); it was not "    \
  "searched"

/* dlopen soname (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE: loaded once and
 * kept), unless the search would look in the current directory: crucible
 * runs in the workspace, and loads such a library when a command has
 * already run there, so a library a command wrote in it would run on the
 * host.  NULL with *why (dlerror's reason, or DYNLOAD_RELATIVE_PATH) when
 * it is not loaded.  */
void *dynload_open (const char *soname, const char **why);

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
