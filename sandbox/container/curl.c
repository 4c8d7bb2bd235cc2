/* libcurl loaded at run time (sandbox/container/curl.h).  */
#include <config.h>

#include "sandbox/container/curl.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#include "sandbox/dynload.h"

/* The sonames tried, in order: the OpenSSL build first (the one the
 * libcurl4-openssl-dev header describes), then the GnuTLS one, whose
 * interface is the same.  */
static const char *const engine_curl_sonames[]
    = { "libcurl.so.4", "libcurl-gnutls.so.4" };

#define ENGINE_CURL_SYM(sym, field)                                            \
  DYNLOAD_SYMBOL (sym, struct engine_curl, field)

static const struct dynload_symbol engine_curl_symbols[] = {
  ENGINE_CURL_SYM ("curl_global_init", global_init),
  ENGINE_CURL_SYM ("curl_global_cleanup", global_cleanup),
  ENGINE_CURL_SYM ("curl_easy_init", easy_init),
  ENGINE_CURL_SYM ("curl_easy_setopt", easy_setopt),
  ENGINE_CURL_SYM ("curl_easy_perform", easy_perform),
  ENGINE_CURL_SYM ("curl_easy_getinfo", easy_getinfo),
  ENGINE_CURL_SYM ("curl_easy_cleanup", easy_cleanup),
  ENGINE_CURL_SYM ("curl_easy_strerror", easy_strerror),
  ENGINE_CURL_SYM ("curl_easy_recv", easy_recv),
  ENGINE_CURL_SYM ("curl_easy_send", easy_send),
  ENGINE_CURL_SYM ("curl_slist_append", slist_append),
  ENGINE_CURL_SYM ("curl_slist_free_all", slist_free_all),
  ENGINE_CURL_SYM ("curl_version_info", version_info),
};

/* Open the first soname that loads; on failure say what each said.  */
static int
engine_curl_open (struct engine_curl *c, struct cr_error **err)
{
  const char *why = NULL;
  for (size_t i = 0;
       i < sizeof engine_curl_sonames / sizeof *engine_curl_sonames; i++)
    {
      /* RTLD_LOCAL (dynload_open): libcurl's symbols serve only these
       * pointers.  RTLD_NODELETE: once loaded it stays, because its TLS
       * library keeps thread-local state and exit handlers that must not
       * outlive its code (unloading it crashed the exit of a sanitizer
       * build).  */
      c->lib = dynload_open (engine_curl_sonames[i], &why);
      if (c->lib != NULL)
        return 0;
    }
  return cr_error_set (err, 0,
                       "loading libcurl for the container backend: %s "
                       "(on Debian: apt-get install libcurl4)",
                       why != NULL ? why : "not found");
}

/* Take each function of the table into the struct.  */
static int
engine_curl_take (struct engine_curl *c, struct cr_error **err)
{
  const char *missing = dynload_take (
      c->lib, engine_curl_symbols,
      sizeof engine_curl_symbols / sizeof *engine_curl_symbols, c);
  if (missing != NULL)
    return cr_error_set (err, 0, "loading libcurl: no %s in it", missing);
  return 0;
}

int
engine_curl_load (struct engine_curl *c, struct cr_error **err)
{
  memset (c, 0, sizeof *c);
  if (engine_curl_open (c, err) < 0)
    return -1;
  if (engine_curl_take (c, err) < 0)
    goto fail;
  curl_version_info_data *v = c->version_info (CURLVERSION_NOW);
  if (v == NULL || v->version_num < ENGINE_CURL_MIN_VERSION)
    {
      cr_error_set (err, 0,
                    "loading libcurl: version %s is older than 7.85, which "
                    "the container backend needs",
                    v != NULL ? v->version : "unknown");
      goto fail;
    }
  c->version = v->version;
  /* libcurl counts its initialisations, so each load pairs with the
   * cleanup of engine_curl_unload.  */
  if (c->global_init (CURL_GLOBAL_DEFAULT) != CURLE_OK)
    {
      cr_error_set (err, 0, "initialising libcurl %s failed", v->version);
      goto fail;
    }
  return 0;
fail:
  dlclose (c->lib);
  memset (c, 0, sizeof *c);
  return -1;
}

void
engine_curl_unload (struct engine_curl *c)
{
  if (c->lib == NULL)
    return;
  c->global_cleanup ();
  dlclose (c->lib);
  memset (c, 0, sizeof *c);
}
