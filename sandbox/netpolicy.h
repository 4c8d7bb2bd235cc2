/* What the host-owned proxy lets a confined command reach (issue 13):
 * authorities, names, addresses and the upstream proxy, decided from text
 * alone.  Pure: no event loop and no I/O, except getifaddrs(3) in
 * netpolicy_local_refresh.
 *
 * A connection is allowed in two steps.  The name the request asks for must
 * be listed (netpolicy_name_allowed: exact names, `*.example.com` for every
 * name below it, literal addresses only as listed); then every address it
 * resolves to is classified (netpolicy_addr_classify), and only an address
 * that is NETPOLICY_ADDR_ALLOWED is connected to.  The second step is what
 * defeats DNS rebinding: an allowed name that resolves to loopback, a
 * metadata service or this host's own interfaces is refused all the same.  */
#ifndef CRUCIBLE_SANDBOX_NETPOLICY_H
#define CRUCIBLE_SANDBOX_NETPOLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "lib/error.h"

/* The loopback port inside the command's network namespace where the
 * broker listens and relays to the host's proxy.  */
#define NETWORK_INSIDE_PORT 3128

/* The longest host an authority may carry, in bytes as received (a UTF-8
 * name is longer than its A-label; DNS itself stops at 253).  */
#define NETPOLICY_HOST_MAX 1023

/* --- authorities ---------------------------------------------------- */

/* A parsed `host:port` or `[v6]:port`.  */
struct netpolicy_authority
{
  /* The host as received, brackets removed; NUL-terminated; not yet
   * normalised (netpolicy_name_normalise does that).  */
  char host[NETPOLICY_HOST_MAX + 1];
  uint16_t port;  /* 1..65535 */
  bool bracketed; /* written `[v6]`: host is an IPv6 literal */
};

/* Parse the len bytes at s as an authority.  default_port 0: the port is
 * required (CONNECT's authority-form); otherwise it is the port when none
 * is written (80 for an absolute-form http target).  Refused, -1 with *err
 * saying why: userinfo (`user@`), an empty host, bad or unbalanced
 * brackets, an IPv6 literal without brackets or with a zone, a bracketed
 * text that is not IPv6, characters no host name holds, a port that is
 * empty, not digits, 0 or above 65535.  */
int netpolicy_authority_parse (const char *s, size_t len, uint16_t default_port,
                               struct netpolicy_authority *out,
                               struct cr_error **err);

/* --- names ---------------------------------------------------------- */

/* Normalise a host for comparison and display: lower case, one trailing
 * dot removed, an IDN turned to its punycode A-label (libidn2, IDNA2008
 * with TR46 non-transitional processing), a literal IPv4 or IPv6 address
 * (with or without brackets) to its canonical text (inet_ntop; IPv6
 * without brackets).  Refused, -1 with *err: an empty name, a name that is
 * not a valid IDNA2008 host name, a numeric form getaddrinfo would read as
 * an IPv4 address but that is not dotted-quad (`127.1`, `0x7f.0.0.1`,
 * `2130706433`: else a name check could be passed by an address).  *out is
 * the caller's to free.  */
int netpolicy_name_normalise (const char *host, char **out,
                              struct cr_error **err);

/* The configured list of names a command may reach.  */
struct netpolicy_names;

/* Make the list from sandbox.network.domains as configured: `name` exact,
 * `*.name` every name at any depth below name (never name itself), a
 * literal IPv4 or IPv6 address (IPv6 with or without brackets) that
 * address only.  Each entry is normalised as above.  An entry that is not
 * one of these (empty, `*`, `*x.com`, `a.*.com`, a port, a URL) is -1
 * with *err naming it.  The list owns copies; free with
 * netpolicy_names_free.  */
int netpolicy_names_new (char *const *domains, size_t n_domains,
                         struct netpolicy_names **out, struct cr_error **err);
void netpolicy_names_free (struct netpolicy_names *names);

/* Whether host (as received, or normalised: it is normalised here) is
 * allowed.  A host that does not normalise is not allowed.  A literal
 * address matches only a listed literal of the same address; a wildcard
 * never matches a literal.  */
bool netpolicy_name_allowed (const struct netpolicy_names *names,
                             const char *host);

/* When host (normalised or not) is a literal IPv4 or IPv6 address, fill
 * *out (port in network order) and *out_len and return true; else false,
 * and the host is a name to resolve.  */
bool netpolicy_host_literal (const char *host, uint16_t port,
                             struct sockaddr_storage *out, socklen_t *out_len);

/* --- addresses ------------------------------------------------------ */

/* Where an address leads, as far as the proxy cares.  Every value but
 * ALLOWED is a refusal.  */
enum netpolicy_addr_class
{
  NETPOLICY_ADDR_ALLOWED,
  NETPOLICY_ADDR_LOOPBACK,        /* 127/8, ::1 */
  NETPOLICY_ADDR_UNSPECIFIED,     /* 0/8 ("this network"), ::, any family
                                     but AF_INET and AF_INET6 */
  NETPOLICY_ADDR_LINK_LOCAL,      /* 169.254/16 (cloud metadata), fe80::/10 */
  NETPOLICY_ADDR_MULTICAST,       /* 224/4, ff00::/8 */
  NETPOLICY_ADDR_BROADCAST,       /* 255.255.255.255 */
  NETPOLICY_ADDR_CGNAT,           /* 100.64/10 (another cloud's metadata) */
  NETPOLICY_ADDR_METADATA,        /* fd00:ec2::254 */
  NETPOLICY_ADDR_PRIVATE,         /* 10/8, 172.16/12, 192.168/16, fc00::/7,
                                     fec0::/10, 64:ff9b:1::/48 */
  NETPOLICY_ADDR_LOCAL_INTERFACE, /* an address of this host's interfaces */
};

/* This host's own interface addresses (and their broadcast addresses), as
 * getifaddrs(3) last reported them.  */
struct netpolicy_local;

/* An empty set; netpolicy_local_refresh fills it.  */
struct netpolicy_local *netpolicy_local_new (void);
void netpolicy_local_free (struct netpolicy_local *local);

/* Read the interface addresses again (interfaces come and go: call it
 * before a batch of checks, or on a timer).  On failure the previous set
 * is kept and -1 is returned with *err.  */
int netpolicy_local_refresh (struct netpolicy_local *local,
                             struct cr_error **err);

/* Add one address to the set by hand (tests; an address the caller knows
 * is its own).  The port is ignored.  */
void netpolicy_local_add (struct netpolicy_local *local,
                          const struct sockaddr *sa);

/* Classify sa (AF_INET or AF_INET6; any other family is UNSPECIFIED).
 * An IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96) or NAT64
 * (64:ff9b::/96) address is classified by the IPv4 address inside it.
 * allow_private lets PRIVATE through (sandbox.network.allowPrivateAddresses)
 * and nothing else.  local may be NULL (no interface check).  The order of
 * checks puts METADATA before PRIVATE, so fd00:ec2::254 stays refused
 * under allow_private.  */
enum netpolicy_addr_class
netpolicy_addr_classify (const struct sockaddr *sa, bool allow_private,
                         const struct netpolicy_local *local);

/* The journal's word for a class: "allowed", "loopback", "unspecified",
 * "link-local", "multicast", "broadcast", "cgnat", "metadata", "private",
 * "local-interface".  Static text.  */
const char *netpolicy_addr_class_name (enum netpolicy_addr_class c);

/* The journal's word for a connection refused because its name is not
 * allowed (listed neither as a name nor as a literal address).  */
#define NETPOLICY_REFUSED_NAME "name"

/* The body of the 403 the proxy answers with, in words a model can act on
 * (doc/strings.md, "The network proxy's refusals"): reason is
 * NETPOLICY_REFUSED_NAME or a class word of netpolicy_addr_class_name.
 * host is shown normalised (punycode) when it normalises, else with every
 * byte outside printable ASCII as '?'.  Ends with a newline; the caller
 * frees it.  */
char *netpolicy_refusal_text (const char *host, const char *reason);

/* --- the upstream proxy --------------------------------------------- */

enum netpolicy_upstream_scheme
{
  NETPOLICY_UPSTREAM_NONE,            /* connect directly */
  NETPOLICY_UPSTREAM_HTTP,            /* CONNECT through host:port */
  NETPOLICY_UPSTREAM_HTTPS,           /* not supported: answer 502 */
  NETPOLICY_UPSTREAM_SOCKS_PASSED_BY, /* socks://, socks4://, socks5://:
                                         connect directly (spec) */
  NETPOLICY_UPSTREAM_SOCKS_REFUSED,   /* socks4a://, socks5h://: answer 502 */
  NETPOLICY_UPSTREAM_INVALID,         /* the URL does not parse, or names
                                         another scheme: answer 502 */
};

/* The upstream a connection leaves through.  */
struct netpolicy_upstream
{
  enum netpolicy_upstream_scheme scheme;
  const char *variable; /* the environment variable it came from (static
                           text), NULL for NONE when none was set */
  char *host;           /* normalised host (IPv6 without brackets), owned */
  uint16_t port;        /* default 1080 socks, 80 http, 443 https */
  /* `Basic base64(user:password)` from the URL's percent-decoded userinfo
   * (the value of a Proxy-Authorization header), owned; NULL without
   * userinfo.  */
  char *credential;
};

/* Choose the upstream for one connection from env (a NULL-terminated
 * `NAME=value` array: crucible's own environment).  connect: the request
 * is a CONNECT (https_proxy, then HTTPS_PROXY), else an absolute-form
 * request (http_proxy, then HTTP_PROXY); then all_proxy, then ALL_PROXY;
 * the first that is set ends the search (set and empty: no upstream).
 * host (as in netpolicy_authority.host) listed by no_proxy, else NO_PROXY,
 * as libcurl 7.88 reads it, means no upstream.  Returns 0, or -1 when the
 * variable's URL does not parse (scheme INVALID, variable set).  Clear
 * *out with netpolicy_upstream_clear.  */
int netpolicy_upstream_from_env (char *const *env, bool connect,
                                 const char *host,
                                 struct netpolicy_upstream *out);
void netpolicy_upstream_clear (struct netpolicy_upstream *u);

/* Whether host is listed by the no_proxy text, read as libcurl 7.88's
 * Curl_check_noproxy reads it: `*` alone matches everything; entries
 * separated by commas and blanks; one leading and one trailing dot of an
 * entry ignored, one trailing dot of host ignored; a name matches itself
 * and every name below it on a label boundary, case-insensitively; an
 * IPv4 or IPv6 host matches entries as addresses or CIDR prefixes
 * (`10.0.0.0/8`, `2001:db8::/32`), never as names.  A host written with
 * `:port` or brackets is taken without them.  */
bool netpolicy_no_proxy_match (const char *no_proxy, const char *host);

/* `Basic base64(user:password)`: the value of an (Proxy-)Authorization
 * header.  The caller frees it.  */
char *netpolicy_basic_credential (const char *user, size_t user_len,
                                  const char *password, size_t password_len);

#endif
