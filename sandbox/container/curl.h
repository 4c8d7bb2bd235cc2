/* libcurl, loaded with dlopen only when the container backend is used:
 * linking it would cost every other start of crucible the loading of
 * libcurl and its TLS stack (~4 ms measured here), so only its header is
 * found at build time and the library is opened on first use.  The struct
 * holds the functions crucible calls; engine_curl_load fills it and
 * engine_curl_unload releases it.  */
#ifndef CRUCIBLE_SANDBOX_CONTAINER_CURL_H
#define CRUCIBLE_SANDBOX_CONTAINER_CURL_H

#include <curl/curl.h>

#include "lib/error.h"

/* The oldest libcurl crucible accepts: 7.85 has CURLOPT_PROTOCOLS_STR.  */
#define ENGINE_CURL_MIN_VERSION 0x075500

struct engine_curl
{
  void *lib; /* the dlopen handle, or NULL when not loaded */
  const char *version;
  CURLcode (*global_init) (long flags);
  void (*global_cleanup) (void);
  CURL *(*easy_init) (void);
  CURLcode (*easy_setopt) (CURL *curl, CURLoption option, ...);
  CURLcode (*easy_perform) (CURL *curl);
  CURLcode (*easy_getinfo) (CURL *curl, CURLINFO info, ...);
  void (*easy_cleanup) (CURL *curl);
  const char *(*easy_strerror) (CURLcode code);
  CURLcode (*easy_recv) (CURL *curl, void *buf, size_t len, size_t *n);
  CURLcode (*easy_send) (CURL *curl, const void *buf, size_t len, size_t *n);
  struct curl_slist *(*slist_append) (struct curl_slist *l, const char *s);
  void (*slist_free_all) (struct curl_slist *l);
  curl_version_info_data *(*version_info) (CURLversion v);
};

/* Open libcurl (the first of the sonames Debian ships that loads), take
 * every function above, check its version, and initialise it.  */
int engine_curl_load (struct engine_curl *c, struct cr_error **err);

/* Release what engine_curl_load took; a struct never loaded is left be.  */
void engine_curl_unload (struct engine_curl *c);

#endif
