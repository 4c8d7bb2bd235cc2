/* What the host-owned proxy lets a confined command reach: authorities,
 * names, addresses and the upstream proxy (sandbox/netpolicy.h).  */
#include <config.h>

#include "sandbox/netpolicy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <idn2.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "sandbox/dynload.h"

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
    return cr_error_set (err, 0,
                         "the authority's bracketed host is not an "
                         "IPv6 address");
  memcpy (text, s + 1, n);
  text[n] = '\0';
  /* A zone (`%eth0`) names an interface of this host: never a destination
   * the proxy's commands may pick.  */
  if (memchr (text, '%', n) != NULL)
    return cr_error_set (err, 0, "the authority's IPv6 address has a zone");
  if (inet_pton (AF_INET6, text, &a) != 1)
    return cr_error_set (err, 0,
                         "the authority's bracketed host is not an "
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
      return cr_error_set (err, 0,
                           "the authority's host holds a character "
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
        return cr_error_set (err, 0,
                             "the authority has text after its "
                             "bracketed host");
    }
  else
    {
      const char *colon = memchr (s, ':', len);
      if (memchr (s, '[', len) != NULL || memchr (s, ']', len) != NULL)
        return cr_error_set (err, 0, "the authority's brackets are misplaced");
      host_len = colon != NULL ? (size_t) (colon - s) : len;
      if (colon != NULL && memchr (colon + 1, ':', len - host_len - 1) != NULL)
        return cr_error_set (err, 0,
                             "the authority's IPv6 address is not in "
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
            return cr_error_set (err, 0,
                                 "a label of the host name is longer "
                                 "than 63 bytes");
          if (*p == '\0')
            return 0;
          label = 0;
          continue;
        }
      if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'
            || *p == '_'))
        return cr_error_set (err, 0,
                             "the host name holds a character no "
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

/* libidn2, loaded the first time a name is not ASCII (as libcurl is for
 * the container backend): linked, it and the libunistring it needs were
 * two of the three shared objects every start of crucible mapped and
 * relocated (about 0.3 ms of an unconfined `crucible run -- true`), for
 * names almost no policy has.  Loaded once, for every thread (the
 * proxy's normalise names too), and kept.  */
struct netpolicy_idn2
{
  int (*to_ascii_8z) (const char *input, char **output, int flags);
  const char *(*strerror) (int rc);
  void (*free) (void *ptr);
};

static struct netpolicy_idn2 netpolicy_idn2;
static char netpolicy_idn2_why[512]; /* why it did not load, or "" */
static pthread_once_t netpolicy_idn2_once = PTHREAD_ONCE_INIT;

static const struct dynload_symbol netpolicy_idn2_symbols[] = {
  DYNLOAD_SYMBOL ("idn2_to_ascii_8z", struct netpolicy_idn2, to_ascii_8z),
  DYNLOAD_SYMBOL ("idn2_strerror", struct netpolicy_idn2, strerror),
  DYNLOAD_SYMBOL ("idn2_free", struct netpolicy_idn2, free),
};

static void
netpolicy_idn2_load (void)
{
  struct netpolicy_idn2 taken;
  const char *why;
  void *lib = dynload_open ("libidn2.so.0", &why);
  if (lib == NULL)
    {
      snprintf (netpolicy_idn2_why, sizeof netpolicy_idn2_why, "%s", why);
      return;
    }
  const char *missing = dynload_take (
      lib, netpolicy_idn2_symbols,
      sizeof netpolicy_idn2_symbols / sizeof *netpolicy_idn2_symbols, &taken);
  if (missing != NULL)
    {
      snprintf (netpolicy_idn2_why, sizeof netpolicy_idn2_why,
                "libidn2.so.0 has no %s", missing);
      return;
    }
  /* All or nothing: to_ascii_8z set means the other two are.  */
  netpolicy_idn2 = taken;
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
      pthread_once (&netpolicy_idn2_once, netpolicy_idn2_load);
      if (netpolicy_idn2.to_ascii_8z == NULL)
        return cr_error_set (err, 0,
                             "the host name is not ASCII, and libidn2, which "
                             "turns it into its ASCII form, could not be "
                             "loaded: %s (on Debian: apt-get install "
                             "libidn2-0)",
                             netpolicy_idn2_why);
      int rc = netpolicy_idn2.to_ascii_8z (
          name, &ascii, IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
      if (rc != IDN2_OK || ascii == NULL)
        return cr_error_set (err, 0,
                             "the host name is not a valid "
                             "internationalised name (%s)",
                             netpolicy_idn2.strerror (rc));
      /* idn2 allocates with malloc: hand the caller an xalloc'd copy.  */
      char *copy = xstrdup (ascii);
      netpolicy_idn2.free (ascii);
      ascii = copy;
    }
  for (char *p = ascii; *p; p++)
    if (*p >= 'A' && *p <= 'Z')
      *p = (char) (*p - 'A' + 'a');
  *out = ascii;
  return 0;
}

/* The last step of normalising: ascii (lower case, after IDNA mapping)
 * is an address, a numeric form getaddrinfo would read as one, or a name
 * to check.  Done after the mapping, since TR46 maps `\uff11\uff12\uff17.1`
 * (full-width digits) and `\u00b31` to ASCII digits.  */
static int
netpolicy_name_finish (char *ascii, char **out, struct cr_error **err)
{
  struct in_addr v4;
  if ((*out = netpolicy_literal_text (ascii)) != NULL)
    return 0;
  /* The forms inet_aton reads as an address (and so getaddrinfo does,
   * without asking DNS) but inet_pton does not: a name check must not be
   * passable by writing an address another way.  */
  if (inet_aton (ascii, &v4) != 0)
    return cr_error_set (err, 0,
                         "the host is an IPv4 address written other "
                         "than as four decimal numbers");
  if (netpolicy_name_check (ascii, err) < 0)
    return -1;
  *out = xstrdup (ascii);
  return 0;
}

int
netpolicy_name_normalise (const char *host, char **out, struct cr_error **err)
{
  cleanup_free char *name = NULL;
  cleanup_free char *ascii = NULL;
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
  if (netpolicy_name_ascii (name, &ascii, err) < 0 || ascii == NULL)
    return -1;
  return netpolicy_name_finish (ascii, out, err);
}

struct netpolicy_names
{
  char **exact; /* normalised names and literal addresses */
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
    return cr_error_set (err, 0,
                         "domain `%s`: a wildcard is only `*.` "
                         "before a name",
                         entry);
  if (!wild && strchr (rest, ':') != NULL
      && !netpolicy_host_literal (rest, 0, NULL, NULL))
    return cr_error_set (err, 0,
                         "domain `%s`: a domain is a name, without "
                         "a scheme or a port",
                         entry);
  if (netpolicy_name_normalise (rest, &norm, err) < 0)
    return cr_error_prefix (err, "domain `%s`", entry);
  if (wild && netpolicy_host_literal (norm, 0, NULL, NULL))
    return cr_error_set (err, 0,
                         "domain `%s`: a wildcard is only `*.` "
                         "before a name",
                         entry);
  if (wild)
    {
      names->suffix = xrealloc (names->suffix,
                                (names->n_suffix + 1) * sizeof *names->suffix);
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

/* --- addresses ------------------------------------------------------ */

/* One address of this host, as raw bytes (4 for IPv4, 16 for IPv6).  */
struct netpolicy_local_addr
{
  int family;
  unsigned char bytes[16];
};

struct netpolicy_local
{
  struct netpolicy_local_addr *addrs;
  size_t n;
};

struct netpolicy_local *
netpolicy_local_new (void)
{
  return xcalloc (1, sizeof (struct netpolicy_local));
}

void
netpolicy_local_free (struct netpolicy_local *local)
{
  if (local == NULL)
    return;
  free (local->addrs);
  free (local);
}

/* Append the address of sa (AF_INET or AF_INET6; others ignored) to the
 * array *addrs of *n.  */
static void
netpolicy_local_push (struct netpolicy_local_addr **addrs, size_t *n,
                      const struct sockaddr *sa)
{
  struct netpolicy_local_addr a = { .family = sa->sa_family };
  if (sa->sa_family == AF_INET)
    memcpy (a.bytes, &((const struct sockaddr_in *) sa)->sin_addr, 4);
  else if (sa->sa_family == AF_INET6)
    memcpy (a.bytes, &((const struct sockaddr_in6 *) sa)->sin6_addr, 16);
  else
    return;
  *addrs = xrealloc (*addrs, (*n + 1) * sizeof **addrs);
  (*addrs)[(*n)++] = a;
}

void
netpolicy_local_add (struct netpolicy_local *local, const struct sockaddr *sa)
{
  netpolicy_local_push (&local->addrs, &local->n, sa);
}

int
netpolicy_local_refresh (struct netpolicy_local *local, struct cr_error **err)
{
  struct ifaddrs *ifs = NULL;
  struct netpolicy_local_addr *addrs = NULL;
  size_t n = 0;
  if (getifaddrs (&ifs) < 0)
    return cr_error_set (err, errno, "read this host's interface addresses");
  for (struct ifaddrs *i = ifs; i != NULL; i = i->ifa_next)
    {
      if (i->ifa_addr != NULL)
        netpolicy_local_push (&addrs, &n, i->ifa_addr);
      /* A subnet's broadcast address reaches every neighbour at once.  */
      if ((i->ifa_flags & IFF_BROADCAST) && i->ifa_broadaddr != NULL)
        netpolicy_local_push (&addrs, &n, i->ifa_broadaddr);
    }
  freeifaddrs (ifs);
  free (local->addrs);
  local->addrs = addrs;
  local->n = n;
  return 0;
}

/* Whether the address (family, bytes) is one of local's.  */
static bool
netpolicy_local_has (const struct netpolicy_local *local, int family,
                     const unsigned char *bytes)
{
  size_t len = family == AF_INET ? 4 : 16;
  if (local == NULL)
    return false;
  for (size_t i = 0; i < local->n; i++)
    if (local->addrs[i].family == family
        && memcmp (local->addrs[i].bytes, bytes, len) == 0)
      return true;
  return false;
}

/* Whether the IPv4 address a (host order) is in net/bits.  */
static bool
netpolicy_in4 (uint32_t a, uint32_t net, unsigned bits)
{
  uint32_t mask = bits == 0 ? 0 : 0xffffffffu << (32 - bits);
  return (a & mask) == (net & mask);
}

/* The class of the IPv4 address at bytes.  */
static enum netpolicy_addr_class
netpolicy_classify4 (const unsigned char *bytes, bool allow_private,
                     const struct netpolicy_local *local)
{
  uint32_t a = (uint32_t) bytes[0] << 24 | (uint32_t) bytes[1] << 16
               | (uint32_t) bytes[2] << 8 | bytes[3];
  if (netpolicy_in4 (a, 0x00000000, 8))
    return NETPOLICY_ADDR_UNSPECIFIED;
  if (netpolicy_in4 (a, 0x7f000000, 8))
    return NETPOLICY_ADDR_LOOPBACK;
  if (netpolicy_in4 (a, 0xa9fe0000, 16))
    return NETPOLICY_ADDR_LINK_LOCAL;
  if (netpolicy_in4 (a, 0xe0000000, 4))
    return NETPOLICY_ADDR_MULTICAST;
  if (a == 0xffffffffu)
    return NETPOLICY_ADDR_BROADCAST;
  if (netpolicy_in4 (a, 0x64400000, 10))
    return NETPOLICY_ADDR_CGNAT;
  /* Before the private ranges: this host's own 192.168.x address stays
   * refused when private addresses are allowed.  */
  if (netpolicy_local_has (local, AF_INET, bytes))
    return NETPOLICY_ADDR_LOCAL_INTERFACE;
  if (!allow_private
      && (netpolicy_in4 (a, 0x0a000000, 8) || netpolicy_in4 (a, 0xac100000, 12)
          || netpolicy_in4 (a, 0xc0a80000, 16)))
    return NETPOLICY_ADDR_PRIVATE;
  return NETPOLICY_ADDR_ALLOWED;
}

/* Whether the first n bytes of a equal p's.  */
static bool
netpolicy_prefix6 (const unsigned char *a, const unsigned char *p, size_t n)
{
  return memcmp (a, p, n) == 0;
}

/* The IPv4 address an IPv6 one carries in its last 32 bits and is
 * delivered to (IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96, NAT64
 * 64:ff9b::/96), or NULL.  */
static const unsigned char *
netpolicy_embedded4 (const unsigned char *a)
{
  static const unsigned char mapped[12]
      = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
  static const unsigned char compat[12] = { 0 };
  static const unsigned char nat64[12] = { 0, 0x64, 0xff, 0x9b };
  if (netpolicy_prefix6 (a, mapped, 12) || netpolicy_prefix6 (a, compat, 12)
      || netpolicy_prefix6 (a, nat64, 12))
    return a + 12;
  return NULL;
}

/* The class of the IPv6 address at a.  */
static enum netpolicy_addr_class
netpolicy_classify6 (const unsigned char *a, bool allow_private,
                     const struct netpolicy_local *local)
{
  static const unsigned char zero[16] = { 0 };
  static const unsigned char one[16] = { [15] = 1 };
  static const unsigned char metadata[16]
      = { 0xfd, 0x00, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54 };
  static const unsigned char nat64_local[6] = { 0, 0x64, 0xff, 0x9b, 0, 1 };
  const unsigned char *v4;
  if (memcmp (a, zero, 16) == 0)
    return NETPOLICY_ADDR_UNSPECIFIED;
  if (memcmp (a, one, 16) == 0)
    return NETPOLICY_ADDR_LOOPBACK;
  /* An IPv4 address wrapped in IPv6 reaches that IPv4 address: the kernel
   * delivers ::ffff:127.0.0.1 to loopback, and a NAT64 gateway forwards
   * 64:ff9b::a9fe:a9fe to the metadata service.  */
  if ((v4 = netpolicy_embedded4 (a)) != NULL)
    return netpolicy_classify4 (v4, allow_private, local);
  /* A 6to4 address (2002::/16) is carried to the IPv4 address in its
   * bits 16..47: refused where that address would be.  */
  if (a[0] == 0x20 && a[1] == 0x02)
    {
      enum netpolicy_addr_class c
          = netpolicy_classify4 (a + 2, allow_private, local);
      if (c != NETPOLICY_ADDR_ALLOWED)
        return c;
    }
  if (memcmp (a, metadata, 16) == 0)
    return NETPOLICY_ADDR_METADATA;
  if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
    return NETPOLICY_ADDR_LINK_LOCAL;
  if (a[0] == 0xff)
    return NETPOLICY_ADDR_MULTICAST;
  if (netpolicy_local_has (local, AF_INET6, a))
    return NETPOLICY_ADDR_LOCAL_INTERFACE;
  /* fc00::/7 (unique local), fec0::/10 (the deprecated site-local) and
   * 64:ff9b:1::/48 (local-use NAT64, whose IPv4 address is not at a fixed
   * place): all lead into a private network.  */
  if (!allow_private
      && ((a[0] & 0xfe) == 0xfc || (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0)
          || netpolicy_prefix6 (a, nat64_local, 6)))
    return NETPOLICY_ADDR_PRIVATE;
  return NETPOLICY_ADDR_ALLOWED;
}

enum netpolicy_addr_class
netpolicy_addr_classify (const struct sockaddr *sa, bool allow_private,
                         const struct netpolicy_local *local)
{
  if (sa == NULL)
    return NETPOLICY_ADDR_UNSPECIFIED;
  if (sa->sa_family == AF_INET)
    return netpolicy_classify4 (
        (const unsigned char *) &((const struct sockaddr_in *) sa)->sin_addr,
        allow_private, local);
  if (sa->sa_family == AF_INET6)
    return netpolicy_classify6 (
        (const unsigned char *) &((const struct sockaddr_in6 *) sa)->sin6_addr,
        allow_private, local);
  return NETPOLICY_ADDR_UNSPECIFIED;
}

/* The journal's word and the refusal text's description of each class. */
static const struct
{
  const char *word;
  const char *desc;
} netpolicy_classes[] = {
  [NETPOLICY_ADDR_ALLOWED] = { "allowed", NULL },
  [NETPOLICY_ADDR_LOOPBACK] = { "loopback", "loopback (127/8, ::1)" },
  [NETPOLICY_ADDR_UNSPECIFIED] = { "unspecified", "unspecified (0/8, ::)" },
  [NETPOLICY_ADDR_LINK_LOCAL]
  = { "link-local", "link-local (169.254/16, fe80::/10; the cloud metadata "
                    "address 169.254.169.254 is one)" },
  [NETPOLICY_ADDR_MULTICAST] = { "multicast", "multicast (224/4, ff00::/8)" },
  [NETPOLICY_ADDR_BROADCAST] = { "broadcast", "broadcast (255.255.255.255)" },
  [NETPOLICY_ADDR_CGNAT]
  = { "cgnat", "shared address space (100.64/10, where a cloud's metadata "
               "service can be)" },
  [NETPOLICY_ADDR_METADATA]
  = { "metadata", "the cloud metadata address fd00:ec2::254" },
  [NETPOLICY_ADDR_PRIVATE] = { "private", NULL },
  [NETPOLICY_ADDR_LOCAL_INTERFACE]
  = { "local-interface", "one of this host's own interface addresses" },
};

const char *
netpolicy_addr_class_name (enum netpolicy_addr_class c)
{
  if ((size_t) c >= sizeof netpolicy_classes / sizeof netpolicy_classes[0])
    return "unspecified";
  return netpolicy_classes[c].word;
}

/* The host as the refusal shows it: normalised, else printable ASCII with
 * every other byte as '?' (the text goes to a model and a terminal).  */
static char *
netpolicy_refusal_host (const char *host)
{
  char *norm = NULL;
  struct cr_error *err = NULL;
  if (netpolicy_name_normalise (host, &norm, &err) == 0)
    return norm;
  cr_error_free (err);
  norm = xstrndup (host, NETPOLICY_HOST_MAX);
  for (char *p = norm; *p; p++)
    if ((unsigned char) *p <= 0x20 || (unsigned char) *p >= 0x7f)
      *p = '?';
  return norm;
}

char *
netpolicy_refusal_text (const char *host, const char *reason)
{
  cleanup_free char *h = netpolicy_refusal_host (host);
  if (strcmp (reason, NETPOLICY_REFUSED_NAME) == 0)
    return xasprintf ("crucible refused the connection to %s: it is not "
                      "among the domains this command may reach. Adding "
                      "\"%s\" to sandbox.network.domains in the home "
                      "configuration (~/.crucible/config.json) allows it; "
                      "run the command again after that.\n",
                      h, h);
  if (strcmp (reason, "private") == 0)
    return xasprintf ("crucible refused the connection to %s: the address "
                      "it leads to is private (10/8, 172.16/12, 192.168/16, "
                      "fc00::/7). Setting "
                      "sandbox.network.allowPrivateAddresses to true in the "
                      "home configuration (~/.crucible/config.json) allows "
                      "private addresses; run the command again after "
                      "that.\n",
                      h);
  for (size_t i = 0; i < sizeof netpolicy_classes / sizeof netpolicy_classes[0];
       i++)
    if (netpolicy_classes[i].desc != NULL
        && strcmp (reason, netpolicy_classes[i].word) == 0)
      return xasprintf ("crucible refused the connection to %s: the address "
                        "it leads to is %s, which the proxy never connects "
                        "to, whatever the configuration.\n",
                        h, netpolicy_classes[i].desc);
  return xasprintf ("crucible refused the connection to %s.\n", h);
}

/* --- the upstream proxy --------------------------------------------- */

/* The value of name in env, or NULL when it is not set.  */
static const char *
netpolicy_env_get (char *const *env, const char *name)
{
  size_t n = strlen (name);
  if (env == NULL)
    return NULL;
  for (; *env != NULL; env++)
    if (strncmp (*env, name, n) == 0 && (*env)[n] == '=')
      return *env + n + 1;
  return NULL;
}

/* Whether c is a blank as curl's ISBLANK reads it.  */
static bool
netpolicy_blank (char c)
{
  return c == ' ' || c == '\t';
}

/* Whether the IPv4 text host is in the CIDR entry (`a.b.c.d[/bits]`); bits
 * 0 or absent means the address itself, as curl 7.88 has it.  */
static bool
netpolicy_cidr4 (const char *host, const char *net, unsigned bits)
{
  unsigned char a[4], c[4];
  if (bits > 32 || inet_pton (AF_INET, host, a) != 1
      || inet_pton (AF_INET, net, c) != 1)
    return false;
  if (bits == 0)
    bits = 32;
  return netpolicy_in4 ((uint32_t) a[0] << 24 | (uint32_t) a[1] << 16
                            | (uint32_t) a[2] << 8 | a[3],
                        (uint32_t) c[0] << 24 | (uint32_t) c[1] << 16
                            | (uint32_t) c[2] << 8 | c[3],
                        bits);
}

/* Whether the IPv6 text host is in the CIDR entry; bits 0 or absent means
 * 128.  (curl 7.88's partial-byte compare is inverted, so a prefix that is
 * not a multiple of 8 never matches there; here it matches as written.)  */
static bool
netpolicy_cidr6 (const char *host, const char *net, unsigned bits)
{
  unsigned char a[16], c[16];
  if (bits == 0)
    bits = 128;
  if (bits > 128 || inet_pton (AF_INET6, host, a) != 1
      || inet_pton (AF_INET6, net, c) != 1)
    return false;
  if (memcmp (a, c, bits / 8) != 0)
    return false;
  if (bits % 8 == 0)
    return true;
  unsigned char mask = (unsigned char) (0xff << (8 - bits % 8));
  return ((a[bits / 8] ^ c[bits / 8]) & mask) == 0;
}

/* Whether one no_proxy entry tok[0..n) lists the name (n_name bytes, a
 * trailing dot already dropped).  */
static bool
netpolicy_no_proxy_name (const char *tok, size_t n, const char *name,
                         size_t n_name)
{
  if (n > 0 && tok[n - 1] == '.')
    n--;
  if (n > 0 && tok[0] == '.')
    {
      tok++;
      n--;
    }
  if (n == n_name)
    return n > 0 && strncasecmp (tok, name, n) == 0;
  return n > 0 && n < n_name && name[n_name - n - 1] == '.'
         && strncasecmp (tok, name + n_name - n, n) == 0;
}

/* Whether one no_proxy entry tok[0..n) lists the address text host.  */
static bool
netpolicy_no_proxy_addr (const char *tok, size_t n, const char *host, bool v6)
{
  char check[128];
  unsigned bits = 0;
  if (n >= sizeof check)
    return false;
  memcpy (check, tok, n);
  check[n] = '\0';
  char *slash = strchr (check, '/');
  if (slash != NULL)
    {
      /* atoi as curl has it: leading digits, a bad value refused below. */
      long v = strtol (slash + 1, NULL, 10);
      bits = v < 0 || v > 1024 ? 1024 : (unsigned) v;
      *slash = '\0';
    }
  return v6 ? netpolicy_cidr6 (host, check, bits)
            : netpolicy_cidr4 (host, check, bits);
}

/* Copy host without brackets or a `:port` suffix into buf.  */
static void
netpolicy_no_proxy_host (const char *host, char *buf, size_t size)
{
  size_t n = strlen (host);
  const char *colon;
  if (host[0] == '[')
    {
      const char *close = strchr (host, ']');
      n = close != NULL ? (size_t) (close - host) - 1 : n - 1;
      host++;
    }
  else if ((colon = strchr (host, ':')) != NULL
           && strchr (colon + 1, ':') == NULL)
    n = (size_t) (colon - host);
  if (n >= size)
    n = size - 1;
  memcpy (buf, host, n);
  buf[n] = '\0';
}

bool
netpolicy_no_proxy_match (const char *no_proxy, const char *host)
{
  char name[NETPOLICY_HOST_MAX + 1];
  unsigned char a[16];
  bool v4, v6;
  size_t n_name;
  if (no_proxy == NULL || no_proxy[0] == '\0' || host == NULL || !host[0])
    return false;
  if (strcmp (no_proxy, "*") == 0)
    return true;
  netpolicy_no_proxy_host (host, name, sizeof name);
  n_name = strlen (name);
  if (n_name == 0)
    return false;
  v4 = inet_pton (AF_INET, name, a) == 1;
  v6 = !v4 && inet_pton (AF_INET6, name, a) == 1;
  if (!v4 && !v6 && name[n_name - 1] == '.')
    n_name--;
  for (const char *p = no_proxy; *p;)
    {
      while (netpolicy_blank (*p) || *p == ',')
        p++;
      const char *tok = p;
      while (*p && !netpolicy_blank (*p) && *p != ',')
        p++;
      size_t n = (size_t) (p - tok);
      if (n == 0)
        continue;
      if ((v4 || v6) ? netpolicy_no_proxy_addr (tok, n, name, v6)
                     : netpolicy_no_proxy_name (tok, n, name, n_name))
        return true;
    }
  return false;
}

char *
netpolicy_basic_credential (const char *user, size_t user_len,
                            const char *password, size_t password_len)
{
  static const char b64[]
      = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t n = user_len + 1 + password_len;
  cleanup_free unsigned char *in = xmalloc (n);
  struct buf out = BUF_INIT;
  memcpy (in, user, user_len);
  in[user_len] = ':';
  memcpy (in + user_len + 1, password, password_len);
  buf_puts (&out, "Basic ");
  for (size_t i = 0; i < n; i += 3)
    {
      uint32_t v = (uint32_t) in[i] << 16;
      if (i + 1 < n)
        v |= (uint32_t) in[i + 1] << 8;
      if (i + 2 < n)
        v |= in[i + 2];
      buf_putc (&out, b64[v >> 18 & 63]);
      buf_putc (&out, b64[v >> 12 & 63]);
      buf_putc (&out, i + 1 < n ? b64[v >> 6 & 63] : '=');
      buf_putc (&out, i + 2 < n ? b64[v & 63] : '=');
    }
  return buf_steal (&out, NULL);
}

/* The value of the hex digit c, or -1.  */
static int
netpolicy_hex (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Percent-decode s[0..n) into a fresh string (*len its length); NULL when
 * an escape is malformed.  */
static char *
netpolicy_pct_decode (const char *s, size_t n, size_t *len)
{
  char *out = xmalloc (n + 1);
  size_t o = 0;
  for (size_t i = 0; i < n; i++)
    {
      int hi, lo;
      if (s[i] != '%')
        {
          out[o++] = s[i];
          continue;
        }
      if (i + 2 >= n)
        hi = lo = -1;
      else
        {
          hi = netpolicy_hex (s[i + 1]);
          lo = netpolicy_hex (s[i + 2]);
        }
      if (hi < 0 || lo < 0)
        {
          free (out);
          return NULL;
        }
      out[o++] = (char) (hi << 4 | lo);
      i += 2;
    }
  out[o] = '\0';
  *len = o;
  return out;
}

/* The scheme of an upstream URL, from its text before "://" (none: http),
 * and the default port it implies.  */
static enum netpolicy_upstream_scheme
netpolicy_upstream_scheme (const char *s, size_t n, uint16_t *port)
{
  static const struct
  {
    const char *name;
    enum netpolicy_upstream_scheme scheme;
    uint16_t port;
  } schemes[] = {
    { "http", NETPOLICY_UPSTREAM_HTTP, 80 },
    { "https", NETPOLICY_UPSTREAM_HTTPS, 443 },
    { "socks", NETPOLICY_UPSTREAM_SOCKS_PASSED_BY, 1080 },
    { "socks4", NETPOLICY_UPSTREAM_SOCKS_PASSED_BY, 1080 },
    { "socks5", NETPOLICY_UPSTREAM_SOCKS_PASSED_BY, 1080 },
    { "socks4a", NETPOLICY_UPSTREAM_SOCKS_REFUSED, 1080 },
    { "socks5h", NETPOLICY_UPSTREAM_SOCKS_REFUSED, 1080 },
  };
  for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
    if (strlen (schemes[i].name) == n
        && strncasecmp (s, schemes[i].name, n) == 0)
      {
        *port = schemes[i].port;
        return schemes[i].scheme;
      }
  return NETPOLICY_UPSTREAM_INVALID;
}

/* Take the userinfo u[0..n) (`user[:password]`, percent-encoded) as out's
 * Basic credential.  */
static int
netpolicy_upstream_userinfo (const char *u, size_t n,
                             struct netpolicy_upstream *out)
{
  const char *colon = memchr (u, ':', n);
  size_t nu = colon != NULL ? (size_t) (colon - u) : n;
  size_t lu, lp = 0;
  cleanup_free char *user = netpolicy_pct_decode (u, nu, &lu);
  cleanup_free char *pass
      = colon != NULL ? netpolicy_pct_decode (colon + 1, n - nu - 1, &lp)
                      : xstrdup ("");
  if (user == NULL || pass == NULL)
    return -1;
  out->credential = netpolicy_basic_credential (user, lu, pass, lp);
  return 0;
}

/* Parse an upstream URL into out (its variable already set).  */
static int
netpolicy_upstream_parse (const char *url, struct netpolicy_upstream *out)
{
  const char *sep = strstr (url, "://");
  const char *auth = sep != NULL ? sep + 3 : url;
  uint16_t port = 80;
  struct netpolicy_authority a;
  struct cr_error *err = NULL;
  out->scheme
      = sep != NULL
            ? netpolicy_upstream_scheme (url, (size_t) (sep - url), &port)
            : NETPOLICY_UPSTREAM_HTTP;
  if (out->scheme == NETPOLICY_UPSTREAM_INVALID)
    return -1;
  size_t n = strcspn (auth, "/?#");
  const char *at = NULL;
  for (size_t i = 0; i < n; i++)
    if (auth[i] == '@')
      at = auth + i;
  if (at != NULL
      && netpolicy_upstream_userinfo (auth, (size_t) (at - auth), out) < 0)
    return -1;
  if (at != NULL)
    {
      n -= (size_t) (at + 1 - auth);
      auth = at + 1;
    }
  if (netpolicy_authority_parse (auth, n, port, &a, &err) < 0
      || netpolicy_name_normalise (a.host, &out->host, &err) < 0)
    {
      cr_error_free (err);
      return -1;
    }
  out->port = a.port;
  return 0;
}

/* The first of names set in env (its name in *which), or NULL.  */
static const char *
netpolicy_env_first (char *const *env, const char *const *names,
                     const char **which)
{
  for (; *names != NULL; names++)
    {
      const char *v = netpolicy_env_get (env, *names);
      if (v != NULL)
        {
          *which = *names;
          return v;
        }
    }
  return NULL;
}

int
netpolicy_upstream_from_env (char *const *env, bool connect, const char *host,
                             struct netpolicy_upstream *out)
{
  static const char *const https_vars[]
      = { "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", NULL };
  static const char *const http_vars[]
      = { "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", NULL };
  static const char *const no_vars[] = { "no_proxy", "NO_PROXY", NULL };
  const char *which = NULL, *no_which = NULL;
  const char *url
      = netpolicy_env_first (env, connect ? https_vars : http_vars, &which);
  memset (out, 0, sizeof *out);
  out->scheme = NETPOLICY_UPSTREAM_NONE;
  if (url == NULL || url[0] == '\0')
    return 0;
  if (netpolicy_no_proxy_match (netpolicy_env_first (env, no_vars, &no_which),
                                host))
    return 0;
  out->variable = which;
  if (netpolicy_upstream_parse (url, out) < 0)
    {
      netpolicy_upstream_clear (out);
      out->variable = which;
      out->scheme = NETPOLICY_UPSTREAM_INVALID;
      return -1;
    }
  return 0;
}

void
netpolicy_upstream_clear (struct netpolicy_upstream *u)
{
  free (u->host);
  free (u->credential);
  memset (u, 0, sizeof *u);
  u->scheme = NETPOLICY_UPSTREAM_NONE;
}
