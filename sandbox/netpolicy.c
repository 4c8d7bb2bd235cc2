/* What the host-owned proxy lets a confined command reach: authorities,
 * names, addresses and the upstream proxy (sandbox/netpolicy.h).  */
#include <config.h>

#include "sandbox/netpolicy.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <idn2.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"

/* --- authorities ---------------------------------------------------- */

/* Whether c may appear in a host name as received: letters, digits, '-',
 * '.', '_' and UTF-8 bytes (an IDN, checked when normalised).  Everything
 * else a URI allows in a reg-name (sub-delims, percent-encoding) is
 * refused: no resolver reads it, and each is a way to make two readers
 * disagree about the name.  */
static bool
netpolicy_host_char (unsigned char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
         || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_'
         || c >= 0x80;
}

/* Parse the port text s[0..len) into *port: 1..65535, digits only.  */
static int
netpolicy_port_parse (const char *s, size_t len, uint16_t *port,
                      struct cr_error **err)
{
  unsigned long v = 0;
  if (len == 0)
    return cr_error_set (err, 0, "the authority's port is empty");
  if (len > 5)
    return cr_error_set (err, 0, "the authority's port is out of range");
  for (size_t i = 0; i < len; i++)
    {
      if (s[i] < '0' || s[i] > '9')
        return cr_error_set (err, 0, "the authority's port is not a number");
      v = v * 10 + (unsigned long) (s[i] - '0');
    }
  if (v == 0 || v > 65535)
    return cr_error_set (err, 0, "the authority's port is out of range");
  *port = (uint16_t) v;
  return 0;
}

/* Parse a bracketed IPv6 host `[...]` at s[0..len) (len counts through the
 * closing bracket) into out->host.  */
static int
netpolicy_authority_v6 (const char *s, size_t len,
                        struct netpolicy_authority *out, struct cr_error **err)
{
  char text[INET6_ADDRSTRLEN + 1];
  struct in6_addr a;
  size_t n = len - 2;
  if (n == 0 || n >= sizeof text)
    return cr_error_set (err, 0, "the authority's bracketed host is not an "
                                 "IPv6 address");
  memcpy (text, s + 1, n);
  text[n] = '\0';
  /* A zone (`%eth0`) names an interface of this host: never a destination
   * the proxy's commands may pick.  */
  if (memchr (text, '%', n) != NULL)
    return cr_error_set (err, 0, "the authority's IPv6 address has a zone");
  if (inet_pton (AF_INET6, text, &a) != 1)
    return cr_error_set (err, 0, "the authority's bracketed host is not an "
                                 "IPv6 address");
  memcpy (out->host, text, n + 1);
  out->bracketed = true;
  return 0;
}

/* Parse a host name or IPv4 literal s[0..len) into out->host.  */
static int
netpolicy_authority_name (const char *s, size_t len,
                          struct netpolicy_authority *out,
                          struct cr_error **err)
{
  if (len == 0)
    return cr_error_set (err, 0, "the authority's host is empty");
  if (len > NETPOLICY_HOST_MAX)
    return cr_error_set (err, 0, "the authority's host is too long");
  for (size_t i = 0; i < len; i++)
    if (!netpolicy_host_char ((unsigned char) s[i]))
      return cr_error_set (err, 0, "the authority's host holds a character "
                                   "no host name has");
  memcpy (out->host, s, len);
  out->host[len] = '\0';
  out->bracketed = false;
  return 0;
}

int
netpolicy_authority_parse (const char *s, size_t len, uint16_t default_port,
                           struct netpolicy_authority *out,
                           struct cr_error **err)
{
  size_t host_len;
  memset (out, 0, sizeof *out);
  if (memchr (s, '@', len) != NULL)
    return cr_error_set (err, 0, "the authority carries userinfo");
  if (len > 0 && s[0] == '[')
    {
      const char *close = memchr (s, ']', len);
      if (close == NULL)
        return cr_error_set (err, 0, "the authority's bracket is not closed");
      host_len = (size_t) (close - s) + 1;
      if (netpolicy_authority_v6 (s, host_len, out, err) < 0)
        return -1;
      if (host_len < len && s[host_len] != ':')
        return cr_error_set (err, 0, "the authority has text after its "
                                     "bracketed host");
    }
  else
    {
      const char *colon = memchr (s, ':', len);
      if (memchr (s, '[', len) != NULL || memchr (s, ']', len) != NULL)
        return cr_error_set (err, 0, "the authority's brackets are misplaced");
      host_len = colon != NULL ? (size_t) (colon - s) : len;
      if (colon != NULL && memchr (colon + 1, ':', len - host_len - 1) != NULL)
        return cr_error_set (err, 0, "the authority's IPv6 address is not in "
                                     "brackets");
      if (netpolicy_authority_name (s, host_len, out, err) < 0)
        return -1;
    }
  if (host_len < len)
    return netpolicy_port_parse (s + host_len + 1, len - host_len - 1,
                                 &out->port, err);
  if (default_port == 0)
    return cr_error_set (err, 0, "the authority has no port");
  out->port = default_port;
  return 0;
}

/* --- names ---------------------------------------------------------- */

/* Whether s is pure ASCII.  */
static bool
netpolicy_ascii (const char *s)
{
  for (; *s; s++)
    if ((unsigned char) *s >= 0x80)
      return false;
  return true;
}

/* Check a lower-case ASCII name: labels of letters, digits, '-' and '_',
 * 1..63 bytes each, 253 in all.  */
static int
netpolicy_name_check (const char *name, struct cr_error **err)
{
  size_t label = 0, total = strlen (name);
  if (total == 0)
    return cr_error_set (err, 0, "the host name is empty");
  if (total > 253)
    return cr_error_set (err, 0, "the host name is longer than 253 bytes");
  for (const char *p = name;; p++)
    {
      if (*p == '.' || *p == '\0')
        {
          if (label == 0)
            return cr_error_set (err, 0, "the host name has an empty label");
          if (label > 63)
            return cr_error_set (err, 0, "a label of the host name is longer "
                                         "than 63 bytes");
          if (*p == '\0')
            return 0;
          label = 0;
          continue;
        }
      if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'
            || *p == '_'))
        return cr_error_set (err, 0, "the host name holds a character no "
                                     "host name has");
      label++;
    }
}

/* The canonical text of a literal address in s (brackets allowed around
 * IPv6), or NULL when s is not one.  */
static char *
netpolicy_literal_text (const char *s)
{
  char text[INET6_ADDRSTRLEN + 1];
  unsigned char a[sizeof (struct in6_addr)];
  size_t n = strlen (s);
  if (inet_pton (AF_INET, s, a) == 1)
    return xstrdup (inet_ntop (AF_INET, a, text, sizeof text));
  if (n >= 2 && s[0] == '[' && s[n - 1] == ']' && n - 2 < sizeof text)
    {
      memcpy (text, s + 1, n - 2);
      text[n - 2] = '\0';
      if (inet_pton (AF_INET6, text, a) != 1)
        return NULL;
    }
  else if (inet_pton (AF_INET6, s, a) != 1)
    return NULL;
  return xstrdup (inet_ntop (AF_INET6, a, text, sizeof text));
}

/* Turn a (possibly UTF-8) name to lower-case ASCII: an IDN becomes its
 * A-label (IDNA2008, TR46 non-transitional: `faß.de` is `xn--fa-hia.de`,
 * not `fass.de`, as browsers now resolve it).  */
static int
netpolicy_name_ascii (const char *name, char **out, struct cr_error **err)
{
  char *ascii = NULL;
  if (netpolicy_ascii (name))
    ascii = xstrdup (name);
  else
    {
      int rc = idn2_to_ascii_8z (name, &ascii,
                                 IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
      if (rc != IDN2_OK)
        return cr_error_set (err, 0, "the host name is not a valid "
                                     "internationalised name (%s)",
                             idn2_strerror (rc));
      /* idn2 allocates with malloc: hand the caller an xalloc'd copy.  */
      char *copy = xstrdup (ascii);
      idn2_free (ascii);
      ascii = copy;
    }
  for (char *p = ascii; *p; p++)
    if (*p >= 'A' && *p <= 'Z')
      *p = (char) (*p - 'A' + 'a');
  *out = ascii;
  return 0;
}

int
netpolicy_name_normalise (const char *host, char **out, struct cr_error **err)
{
  cleanup_free char *name = NULL;
  struct in_addr v4;
  size_t n = strlen (host);
  *out = NULL;
  if (n == 0)
    return cr_error_set (err, 0, "the host name is empty");
  if ((*out = netpolicy_literal_text (host)) != NULL)
    return 0;
  if (n > NETPOLICY_HOST_MAX)
    return cr_error_set (err, 0, "the host name is too long");
  name = xstrndup (host, host[n - 1] == '.' ? n - 1 : n);
  if (name[0] == '\0')
    return cr_error_set (err, 0, "the host name is empty");
  /* The forms inet_aton reads as an address (and so getaddrinfo does,
   * without asking DNS) but inet_pton does not: a name check must not be
   * passable by writing an address another way.  */
  if (inet_aton (name, &v4) != 0)
    return cr_error_set (err, 0, "the host is an IPv4 address written other "
                                 "than as four decimal numbers");
  cleanup_free char *ascii = NULL;
  if (netpolicy_name_ascii (name, &ascii, err) < 0)
    return -1;
  if (netpolicy_name_check (ascii, err) < 0)
    return -1;
  *out = steal_pointer (&ascii);
  return 0;
}

struct netpolicy_names
{
  char **exact;  /* normalised names and literal addresses */
  size_t n_exact;
  char **suffix; /* ".example.com" for `*.example.com` */
  size_t n_suffix;
};

/* Add one configured entry to names.  */
static int
netpolicy_names_add (struct netpolicy_names *names, const char *entry,
                     struct cr_error **err)
{
  bool wild = strncmp (entry, "*.", 2) == 0;
  const char *rest = wild ? entry + 2 : entry;
  cleanup_free char *norm = NULL;
  if (strchr (rest, '*') != NULL)
    return cr_error_set (err, 0, "domain `%s`: a wildcard is only `*.` "
                                 "before a name", entry);
  if (!wild && strchr (rest, ':') != NULL
      && !netpolicy_host_literal (rest, 0, NULL, NULL))
    return cr_error_set (err, 0, "domain `%s`: a domain is a name, without "
                                 "a scheme or a port", entry);
  if (netpolicy_name_normalise (rest, &norm, err) < 0)
    return cr_error_prefix (err, "domain `%s`", entry);
  if (wild && netpolicy_host_literal (norm, 0, NULL, NULL))
    return cr_error_set (err, 0, "domain `%s`: a wildcard is only `*.` "
                                 "before a name", entry);
  if (wild)
    {
      names->suffix = xrealloc (names->suffix, (names->n_suffix + 1)
                                                   * sizeof *names->suffix);
      names->suffix[names->n_suffix++] = xasprintf (".%s", norm);
      return 0;
    }
  names->exact
      = xrealloc (names->exact, (names->n_exact + 1) * sizeof *names->exact);
  names->exact[names->n_exact++] = steal_pointer (&norm);
  return 0;
}

int
netpolicy_names_new (char *const *domains, size_t n_domains,
                     struct netpolicy_names **out, struct cr_error **err)
{
  struct netpolicy_names *names = xcalloc (1, sizeof *names);
  for (size_t i = 0; i < n_domains; i++)
    if (netpolicy_names_add (names, domains[i], err) < 0)
      {
        netpolicy_names_free (names);
        return -1;
      }
  *out = names;
  return 0;
}

void
netpolicy_names_free (struct netpolicy_names *names)
{
  if (names == NULL)
    return;
  for (size_t i = 0; i < names->n_exact; i++)
    free (names->exact[i]);
  for (size_t i = 0; i < names->n_suffix; i++)
    free (names->suffix[i]);
  free (names->exact);
  free (names->suffix);
  free (names);
}

/* Whether the normalised name ends in suffix (".example.com") with at
 * least one label before it.  */
static bool
netpolicy_suffix_match (const char *name, const char *suffix)
{
  size_t n = strlen (name), s = strlen (suffix);
  return n > s && strcmp (name + n - s, suffix) == 0;
}

bool
netpolicy_name_allowed (const struct netpolicy_names *names, const char *host)
{
  cleanup_free char *norm = NULL;
  struct cr_error *err = NULL;
  if (names == NULL)
    return false;
  if (netpolicy_name_normalise (host, &norm, &err) < 0)
    {
      cr_error_free (err);
      return false;
    }
  for (size_t i = 0; i < names->n_exact; i++)
    if (strcmp (names->exact[i], norm) == 0)
      return true;
  if (netpolicy_host_literal (norm, 0, NULL, NULL))
    return false;
  for (size_t i = 0; i < names->n_suffix; i++)
    if (netpolicy_suffix_match (norm, names->suffix[i]))
      return true;
  return false;
}

bool
netpolicy_host_literal (const char *host, uint16_t port,
                        struct sockaddr_storage *out, socklen_t *out_len)
{
  cleanup_free char *text = netpolicy_literal_text (host);
  struct sockaddr_storage ss;
  if (text == NULL)
    return false;
  memset (&ss, 0, sizeof ss);
  if (strchr (text, ':') == NULL)
    {
      struct sockaddr_in *sin = (struct sockaddr_in *) &ss;
      sin->sin_family = AF_INET;
      sin->sin_port = htons (port);
      inet_pton (AF_INET, text, &sin->sin_addr);
      if (out_len != NULL)
        *out_len = sizeof *sin;
    }
  else
    {
      struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) &ss;
      sin6->sin6_family = AF_INET6;
      sin6->sin6_port = htons (port);
      inet_pton (AF_INET6, text, &sin6->sin6_addr);
      if (out_len != NULL)
        *out_len = sizeof *sin6;
    }
  if (out != NULL)
    *out = ss;
  return true;
}
