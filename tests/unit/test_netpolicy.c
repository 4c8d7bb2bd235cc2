/* Tests for sandbox/netpolicy.c: authorities, names (wildcards, case,
 * trailing dots, IDN), every refused address class in its IPv4, IPv6,
 * IPv4-mapped and NAT64 forms, NO_PROXY as libcurl 7.88 reads it, the
 * upstream from the environment, and the refusal texts (doc/strings.md). */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/dynload.h"
#include "sandbox/netpolicy.h"

/* --- authorities ---------------------------------------------------- */

/* Parse s as an authority, requiring success, and check host and port. */
static void
expect_authority (const char *s, uint16_t def, const char *host, uint16_t port,
                  bool bracketed)
{
  struct netpolicy_authority a;
  struct cr_error *err = NULL;
  if (netpolicy_authority_parse (s, strlen (s), def, &a, &err) < 0)
    fail_msg ("authority `%s`: %s", s, err->msg);
  assert_string_equal (a.host, host);
  assert_int_equal (a.port, port);
  assert_int_equal (a.bracketed, bracketed);
}

/* Parse s as an authority, requiring a refusal whose message holds
 * want.  */
static void
refuse_authority (const char *s, uint16_t def, const char *want)
{
  struct netpolicy_authority a;
  struct cr_error *err = NULL;
  if (netpolicy_authority_parse (s, strlen (s), def, &a, &err) == 0)
    fail_msg ("authority `%s` was accepted", s);
  if (strstr (err->msg, want) == NULL)
    fail_msg ("authority `%s`: `%s` does not say `%s`", s, err->msg, want);
  cr_error_free (err);
}

static void
test_authority (void **state)
{
  expect_authority ("example.com:443", 0, "example.com", 443, false);
  expect_authority ("Example.COM:1", 0, "Example.COM", 1, false);
  expect_authority ("example.com:65535", 0, "example.com", 65535, false);
  expect_authority ("example.com", 80, "example.com", 80, false);
  expect_authority ("example.com:8080", 80, "example.com", 8080, false);
  expect_authority ("192.0.2.10:443", 0, "192.0.2.10", 443, false);
  expect_authority ("[2001:db8::10]:443", 0, "2001:db8::10", 443, true);
  expect_authority ("[::1]", 80, "::1", 80, true);
  expect_authority ("[::ffff:127.0.0.1]:80", 0, "::ffff:127.0.0.1", 80, true);
  expect_authority ("b\xc3\xbc\x63her.example:443", 0,
                    "b\xc3\xbc\x63her.example", 443, false);
  expect_authority ("under_score.example:1", 0, "under_score.example", 1,
                    false);
  expect_authority ("example.com.:443", 0, "example.com.", 443, false);
}

static void
test_authority_refused (void **state)
{
  refuse_authority ("example.com", 0, "no port");
  refuse_authority ("example.com:", 0, "port is empty");
  refuse_authority ("example.com:", 80, "port is empty");
  refuse_authority ("example.com:0", 0, "out of range");
  refuse_authority ("example.com:65536", 0, "out of range");
  refuse_authority ("example.com:100000", 0, "out of range");
  refuse_authority ("example.com:-1", 0, "not a number");
  refuse_authority ("example.com:+1", 0, "not a number");
  refuse_authority ("example.com:44 3", 0, "not a number");
  refuse_authority ("example.com:0x1bb", 0, "not a number");
  refuse_authority ("user@example.com:443", 0, "userinfo");
  refuse_authority ("user:pw@example.com:443", 0, "userinfo");
  refuse_authority (":443", 0, "empty");
  refuse_authority ("", 80, "empty");
  refuse_authority ("[]:443", 0, "not an IPv6");
  refuse_authority ("[::1:443", 0, "not closed");
  refuse_authority ("::1]:443", 0, "brackets");
  refuse_authority ("[::1]x:443", 0, "text after");
  refuse_authority ("[::1]]:443", 0, "text after");
  refuse_authority ("[example.com]:443", 0, "not an IPv6");
  refuse_authority ("[127.0.0.1]:443", 0, "not an IPv6");
  refuse_authority ("[fe80::1%eth0]:443", 0, "zone");
  refuse_authority ("[fe80::1%25eth0]:443", 0, "zone");
  refuse_authority ("2001:db8::1:443", 0, "not in brackets");
  refuse_authority ("::1", 80, "not in brackets");
  refuse_authority ("exa mple.com:443", 0, "character");
  refuse_authority ("example.com%2e:443", 0, "character");
  refuse_authority ("exa\\mple.com:443", 0, "character");
  refuse_authority ("example.com/:443", 0, "character");
  refuse_authority ("example.com\r:443", 0, "character");
  /* One byte past the longest host.  */
  char long_host[NETPOLICY_HOST_MAX + 8];
  memset (long_host, 'a', NETPOLICY_HOST_MAX + 1);
  memcpy (long_host + NETPOLICY_HOST_MAX + 1, ":1", 3);
  refuse_authority (long_host, 0, "too long");
  /* At the longest.  */
  struct netpolicy_authority a;
  struct cr_error *err = NULL;
  memcpy (long_host + NETPOLICY_HOST_MAX, ":1", 3);
  assert_int_equal (
      netpolicy_authority_parse (long_host, strlen (long_host), 0, &a, &err),
      0);
  assert_int_equal (strlen (a.host), NETPOLICY_HOST_MAX);
}

/* --- names ---------------------------------------------------------- */

/* Normalise host, requiring success and the text want.  */
static void
expect_norm (const char *host, const char *want)
{
  char *out = NULL;
  struct cr_error *err = NULL;
  if (netpolicy_name_normalise (host, &out, &err) < 0)
    fail_msg ("normalise `%s`: %s", host, err->msg);
  assert_string_equal (out, want);
  free (out);
}

/* Normalise host, requiring a refusal.  */
static void
refuse_norm (const char *host)
{
  char *out = NULL;
  struct cr_error *err = NULL;
  if (netpolicy_name_normalise (host, &out, &err) == 0)
    fail_msg ("normalise `%s` gave `%s`", host, out);
  assert_non_null (err);
  assert_null (out);
  cr_error_free (err);
}

static void
test_normalise (void **state)
{
  expect_norm ("Example.COM", "example.com");
  expect_norm ("example.com.", "example.com");
  expect_norm ("EXAMPLE.com.", "example.com");
  expect_norm ("b\xc3\xbc\x63her.example", "xn--bcher-kva.example");
  expect_norm ("B\xc3\x9c\x43HER.example", "xn--bcher-kva.example");
  expect_norm ("xn--bcher-kva.example", "xn--bcher-kva.example");
  expect_norm ("XN--BCHER-KVA.example.", "xn--bcher-kva.example");
  /* TR46 non-transitional: sharp s stays, it does not become "ss".  */
  expect_norm ("fa\xc3\x9f.de", "xn--fa-hia.de");
  /* Literal addresses get their canonical text.  */
  expect_norm ("192.0.2.10", "192.0.2.10");
  expect_norm ("2001:DB8:0:0::10", "2001:db8::10");
  expect_norm ("[2001:db8::10]", "2001:db8::10");
  expect_norm ("::FFFF:127.0.0.1", "::ffff:127.0.0.1");
  expect_norm ("under_score.example", "under_score.example");
  refuse_norm ("");
  refuse_norm (".");
  refuse_norm ("example.com..");
  refuse_norm ("a..example.com");
  refuse_norm (".example.com");
  /* What getaddrinfo reads as an address without asking DNS.  */
  refuse_norm ("127.1");
  refuse_norm ("0x7f.0.0.1");
  refuse_norm ("0177.0.0.1");
  refuse_norm ("2130706433");
  refuse_norm ("0x7f000001");
  refuse_norm ("[example.com]");
  /* Found by fuzz_httpreq: TR46 maps superscript and full-width digits to
   * ASCII ones, so the numeric check comes after the mapping.  */
  refuse_norm ("\xc2\xb3\x31");
  refuse_norm ("1\xef\xbc\x92\x37.1");
  expect_norm ("\xef\xbc\x91\xef\xbc\x99\xef\xbc\x92.0.2.10", "192.0.2.10");
  expect_norm ("192.0.2.10.", "192.0.2.10");
  /* A label of 63 bytes is the longest; 64 is refused.  */
  char label[80];
  memset (label, 'a', 63);
  memcpy (label + 63, ".com", 5);
  char *out = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (netpolicy_name_normalise (label, &out, &err), 0);
  free (out);
  memset (label, 'a', 64);
  memcpy (label + 64, ".com", 5);
  refuse_norm (label);
  /* 253 bytes in all is the longest name.  */
  char name[300];
  memset (name, 'a', 253);
  for (int i = 63; i < 253; i += 64)
    name[i] = '.';
  name[253] = '\0';
  assert_int_equal (netpolicy_name_normalise (name, &out, &err), 0);
  free (out);
  name[253] = 'a';
  name[254] = '\0';
  refuse_norm (name);
  /* Invalid UTF-8 and a disallowed code point (U+2665) are not names.  */
  refuse_norm ("\xff\xfe.example");
  refuse_norm ("a\xe2\x99\xa5.example");
}

/* The names made of entries, requiring success.  */
static struct netpolicy_names *
names_of (const char **entries, size_t n)
{
  struct netpolicy_names *names = NULL;
  struct cr_error *err = NULL;
  if (netpolicy_names_new ((char *const *) entries, n, &names, &err) < 0)
    fail_msg ("names: %s", err->msg);
  return names;
}

static void
test_names_match (void **state)
{
  const char *entries[] = {
    "Example.com",
    "*.wild.test",
    "192.0.2.10",
    "[2001:db8::10]",
    "b\xc3\xbc\x63her.example",
    "*.xn--bcher-kva.test",
    "trailing.test.",
  };
  struct netpolicy_names *n = names_of (entries, 7);
  assert_true (netpolicy_name_allowed (n, "example.com"));
  assert_true (netpolicy_name_allowed (n, "EXAMPLE.COM"));
  assert_true (netpolicy_name_allowed (n, "example.com."));
  assert_false (netpolicy_name_allowed (n, "example.com.."));
  assert_false (netpolicy_name_allowed (n, "www.example.com"));
  assert_false (netpolicy_name_allowed (n, "notexample.com"));
  assert_false (netpolicy_name_allowed (n, "example.co"));
  /* Wildcards: any depth below, never the apex, on a label boundary.  */
  assert_true (netpolicy_name_allowed (n, "a.wild.test"));
  assert_true (netpolicy_name_allowed (n, "a.b.c.wild.test"));
  assert_true (netpolicy_name_allowed (n, "A.WILD.TEST."));
  assert_false (netpolicy_name_allowed (n, "wild.test"));
  assert_false (netpolicy_name_allowed (n, "wild.test."));
  assert_false (netpolicy_name_allowed (n, "notwild.test"));
  assert_false (netpolicy_name_allowed (n, "a.wild.test.evil"));
  assert_false (netpolicy_name_allowed (n, "wild.test.a"));
  /* Literals only as listed; a wildcard never matches one.  */
  assert_true (netpolicy_name_allowed (n, "192.0.2.10"));
  assert_false (netpolicy_name_allowed (n, "192.0.2.11"));
  assert_true (netpolicy_name_allowed (n, "2001:db8::10"));
  assert_true (netpolicy_name_allowed (n, "2001:DB8:0::10"));
  assert_true (netpolicy_name_allowed (n, "[2001:db8::10]"));
  assert_false (netpolicy_name_allowed (n, "2001:db8::11"));
  assert_false (netpolicy_name_allowed (n, "::ffff:192.0.2.10"));
  assert_false (netpolicy_name_allowed (n, "127.1"));
  /* IDNs compare as punycode either way.  */
  assert_true (netpolicy_name_allowed (n, "xn--bcher-kva.example"));
  assert_true (netpolicy_name_allowed (n, "B\xc3\x9c\x43HER.example"));
  assert_true (netpolicy_name_allowed (n, "x.b\xc3\xbc\x63her.test"));
  assert_false (netpolicy_name_allowed (n, "bucher.example"));
  assert_true (netpolicy_name_allowed (n, "trailing.test"));
  assert_false (netpolicy_name_allowed (n, ""));
  assert_false (netpolicy_name_allowed (NULL, "example.com"));
  netpolicy_names_free (n);
}

/* Make names of one entry, requiring a refusal naming it.  */
static void
refuse_entry (const char *entry)
{
  struct netpolicy_names *names = NULL;
  struct cr_error *err = NULL;
  if (netpolicy_names_new ((char *const *) &entry, 1, &names, &err) == 0)
    fail_msg ("entry `%s` was accepted", entry);
  if (strstr (err->msg, entry) == NULL)
    fail_msg ("`%s` does not name `%s`", err->msg, entry);
  cr_error_free (err);
}

static void
test_names_refused (void **state)
{
  refuse_entry ("");
  refuse_entry ("*");
  refuse_entry ("*.");
  refuse_entry ("*example.com");
  refuse_entry ("a.*.example.com");
  refuse_entry ("*.*.example.com");
  refuse_entry ("example.com:443");
  refuse_entry ("https://example.com");
  refuse_entry ("*.192.0.2.10");
  refuse_entry ("*.[::1]");
  refuse_entry ("127.1");
  refuse_entry ("exa mple.com");
  struct netpolicy_names *names = NULL;
  struct cr_error *err = NULL;
  assert_int_equal (netpolicy_names_new (NULL, 0, &names, &err), 0);
  assert_false (netpolicy_name_allowed (names, "example.com"));
  netpolicy_names_free (names);
}

static void
test_host_literal (void **state)
{
  struct sockaddr_storage ss;
  socklen_t len = 0;
  assert_true (netpolicy_host_literal ("192.0.2.10", 443, &ss, &len));
  assert_int_equal (ss.ss_family, AF_INET);
  assert_int_equal (len, sizeof (struct sockaddr_in));
  assert_int_equal (ntohs (((struct sockaddr_in *) &ss)->sin_port), 443);
  assert_true (netpolicy_host_literal ("[2001:db8::10]", 80, &ss, &len));
  assert_int_equal (ss.ss_family, AF_INET6);
  assert_int_equal (len, sizeof (struct sockaddr_in6));
  assert_true (netpolicy_host_literal ("2001:db8::10", 80, NULL, NULL));
  assert_false (netpolicy_host_literal ("example.com", 80, &ss, &len));
  assert_false (netpolicy_host_literal ("127.1", 80, &ss, &len));
}

/* --- addresses ------------------------------------------------------ */

/* The class of the IPv4 or IPv6 text addr.  */
static enum netpolicy_addr_class
classify (const char *addr, bool allow_private,
          const struct netpolicy_local *local)
{
  struct sockaddr_storage ss;
  if (!netpolicy_host_literal (addr, 443, &ss, NULL))
    fail_msg ("`%s` is not an address", addr);
  return netpolicy_addr_classify ((struct sockaddr *) &ss, allow_private,
                                  local);
}

/* Require addr (IPv4 text) to be of class c plain, IPv4-mapped,
 * IPv4-compatible and NAT64.  */
static void
expect_class4 (const char *addr, enum netpolicy_addr_class c)
{
  char buf[64];
  assert_int_equal (classify (addr, false, NULL), c);
  snprintf (buf, sizeof buf, "::ffff:%s", addr);
  assert_int_equal (classify (buf, false, NULL), c);
  snprintf (buf, sizeof buf, "64:ff9b::%s", addr);
  assert_int_equal (classify (buf, false, NULL), c);
  /* ::0.0.0.1 is ::1 and ::0.0.0.0 is ::, which are their own classes.  */
  if (strcmp (addr, "0.0.0.0") != 0 && strcmp (addr, "0.0.0.1") != 0)
    {
      snprintf (buf, sizeof buf, "::%s", addr);
      assert_int_equal (classify (buf, false, NULL), c);
    }
}

static void
test_classify_v4 (void **state)
{
  expect_class4 ("127.0.0.1", NETPOLICY_ADDR_LOOPBACK);
  expect_class4 ("127.255.255.254", NETPOLICY_ADDR_LOOPBACK);
  expect_class4 ("0.0.0.0", NETPOLICY_ADDR_UNSPECIFIED);
  expect_class4 ("0.255.1.2", NETPOLICY_ADDR_UNSPECIFIED);
  expect_class4 ("169.254.169.254", NETPOLICY_ADDR_LINK_LOCAL);
  expect_class4 ("169.254.0.1", NETPOLICY_ADDR_LINK_LOCAL);
  expect_class4 ("224.0.0.1", NETPOLICY_ADDR_MULTICAST);
  expect_class4 ("239.255.255.255", NETPOLICY_ADDR_MULTICAST);
  expect_class4 ("255.255.255.255", NETPOLICY_ADDR_BROADCAST);
  expect_class4 ("100.64.0.1", NETPOLICY_ADDR_CGNAT);
  expect_class4 ("100.100.100.200", NETPOLICY_ADDR_CGNAT);
  expect_class4 ("100.127.255.255", NETPOLICY_ADDR_CGNAT);
  expect_class4 ("10.0.0.1", NETPOLICY_ADDR_PRIVATE);
  expect_class4 ("172.16.0.1", NETPOLICY_ADDR_PRIVATE);
  expect_class4 ("172.31.255.255", NETPOLICY_ADDR_PRIVATE);
  expect_class4 ("192.168.1.1", NETPOLICY_ADDR_PRIVATE);
  /* The edges of each range, just outside.  */
  expect_class4 ("1.0.0.0", NETPOLICY_ADDR_ALLOWED);
  expect_class4 ("126.255.255.255", NETPOLICY_ADDR_ALLOWED);
  expect_class4 ("128.0.0.0", NETPOLICY_ADDR_ALLOWED);
  expect_class4 ("169.253.255.255", NETPOLICY_ADDR_ALLOWED);
  expect_class4 ("169.255.0.0", NETPOLICY_ADDR_ALLOWED);
  expect_class4 ("223.255.255.255", NETPOLICY_ADDR_ALLOWED);
  expect_class4 ("100.63.255.255", NETPOLICY_ADDR_ALLOWED);
  expect_class4 ("100.128.0.0", NETPOLICY_ADDR_ALLOWED);
  expect_class4 ("9.255.255.255", NETPOLICY_ADDR_ALLOWED);
  expect_class4 ("11.0.0.0", NETPOLICY_ADDR_ALLOWED);
  expect_class4 ("172.15.255.255", NETPOLICY_ADDR_ALLOWED);
  expect_class4 ("172.32.0.0", NETPOLICY_ADDR_ALLOWED);
  expect_class4 ("192.167.255.255", NETPOLICY_ADDR_ALLOWED);
  expect_class4 ("192.169.0.0", NETPOLICY_ADDR_ALLOWED);
  expect_class4 ("192.0.2.10", NETPOLICY_ADDR_ALLOWED);
  expect_class4 ("93.184.216.34", NETPOLICY_ADDR_ALLOWED);
  expect_class4 ("255.255.255.254", NETPOLICY_ADDR_ALLOWED);
}

static void
test_classify_v6 (void **state)
{
  assert_int_equal (classify ("::", false, NULL), NETPOLICY_ADDR_UNSPECIFIED);
  assert_int_equal (classify ("::1", false, NULL), NETPOLICY_ADDR_LOOPBACK);
  assert_int_equal (classify ("fe80::1", false, NULL),
                    NETPOLICY_ADDR_LINK_LOCAL);
  assert_int_equal (classify ("febf:ffff::1", false, NULL),
                    NETPOLICY_ADDR_LINK_LOCAL);
  assert_int_equal (classify ("ff02::1", false, NULL),
                    NETPOLICY_ADDR_MULTICAST);
  assert_int_equal (classify ("ff0e::1", true, NULL), NETPOLICY_ADDR_MULTICAST);
  assert_int_equal (classify ("fd00:ec2::254", false, NULL),
                    NETPOLICY_ADDR_METADATA);
  /* The metadata address is inside fc00::/7 and stays refused when
   * private addresses are allowed.  */
  assert_int_equal (classify ("fd00:ec2::254", true, NULL),
                    NETPOLICY_ADDR_METADATA);
  assert_int_equal (classify ("fd00:ec2::253", true, NULL),
                    NETPOLICY_ADDR_ALLOWED);
  assert_int_equal (classify ("fc00::1", false, NULL), NETPOLICY_ADDR_PRIVATE);
  assert_int_equal (classify ("fdff:ffff::1", false, NULL),
                    NETPOLICY_ADDR_PRIVATE);
  assert_int_equal (classify ("fec0::1", false, NULL), NETPOLICY_ADDR_PRIVATE);
  assert_int_equal (classify ("64:ff9b:1::a00:1", false, NULL),
                    NETPOLICY_ADDR_PRIVATE);
  assert_int_equal (classify ("fc00::1", true, NULL), NETPOLICY_ADDR_ALLOWED);
  assert_int_equal (classify ("fbff:ffff::1", false, NULL),
                    NETPOLICY_ADDR_ALLOWED);
  assert_int_equal (classify ("fe00::1", false, NULL), NETPOLICY_ADDR_ALLOWED);
  assert_int_equal (classify ("2001:db8::10", false, NULL),
                    NETPOLICY_ADDR_ALLOWED);
  assert_int_equal (classify ("2606:4700::1111", false, NULL),
                    NETPOLICY_ADDR_ALLOWED);
  /* ::2 is not loopback, but an IPv4-compatible 0.0.0.2: "this network". */
  assert_int_equal (classify ("::2", false, NULL), NETPOLICY_ADDR_UNSPECIFIED);
  /* The mapped forms of an allowed address are allowed.  */
  assert_int_equal (classify ("::ffff:192.0.2.10", false, NULL),
                    NETPOLICY_ADDR_ALLOWED);
  assert_int_equal (classify ("64:ff9b::c000:20a", false, NULL),
                    NETPOLICY_ADDR_ALLOWED);
  /* An address near the mapped prefix but outside it is plain IPv6.  */
  assert_int_equal (classify ("::fffe:7f00:1", false, NULL),
                    NETPOLICY_ADDR_ALLOWED);
  assert_int_equal (classify ("64:ff9b::1:7f00:1", false, NULL),
                    NETPOLICY_ADDR_ALLOWED);
  /* 6to4 carries the packet to the IPv4 address inside.  */
  assert_int_equal (classify ("2002:7f00:1::1", false, NULL),
                    NETPOLICY_ADDR_LOOPBACK);
  assert_int_equal (classify ("2002:a9fe:a9fe::", true, NULL),
                    NETPOLICY_ADDR_LINK_LOCAL);
  assert_int_equal (classify ("2002:a00:1::1", false, NULL),
                    NETPOLICY_ADDR_PRIVATE);
  assert_int_equal (classify ("2002:a00:1::1", true, NULL),
                    NETPOLICY_ADDR_ALLOWED);
  assert_int_equal (classify ("2002:c000:20a::1", false, NULL),
                    NETPOLICY_ADDR_ALLOWED);
  /* Any other family is refused.  */
  struct sockaddr sa = { .sa_family = AF_UNIX };
  assert_int_equal (netpolicy_addr_classify (&sa, true, NULL),
                    NETPOLICY_ADDR_UNSPECIFIED);
  assert_int_equal (netpolicy_addr_classify (NULL, true, NULL),
                    NETPOLICY_ADDR_UNSPECIFIED);
}

static void
test_classify_private (void **state)
{
  const char *priv[] = { "10.0.0.1",        "172.16.0.1",        "192.168.1.1",
                         "::ffff:10.0.0.1", "64:ff9b::c0a8:101", "fc00::1" };
  for (size_t i = 0; i < sizeof priv / sizeof priv[0]; i++)
    {
      assert_int_equal (classify (priv[i], false, NULL),
                        NETPOLICY_ADDR_PRIVATE);
      assert_int_equal (classify (priv[i], true, NULL), NETPOLICY_ADDR_ALLOWED);
    }
  /* allow_private lets nothing else through.  */
  const char *never[]
      = { "127.0.0.1",        "169.254.169.254",   "100.64.0.1", "0.0.0.0",
          "224.0.0.1",        "255.255.255.255",   "::1",        "fe80::1",
          "::ffff:127.0.0.1", "64:ff9b::a9fe:a9fe" };
  for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
    assert_int_not_equal (classify (never[i], true, NULL),
                          NETPOLICY_ADDR_ALLOWED);
}

static void
test_classify_local (void **state)
{
  struct netpolicy_local *local = netpolicy_local_new ();
  struct sockaddr_storage ss;
  assert_true (netpolicy_host_literal ("192.0.2.1", 0, &ss, NULL));
  netpolicy_local_add (local, (struct sockaddr *) &ss);
  assert_true (netpolicy_host_literal ("192.168.7.7", 0, &ss, NULL));
  netpolicy_local_add (local, (struct sockaddr *) &ss);
  assert_true (netpolicy_host_literal ("2001:db8::1", 0, &ss, NULL));
  netpolicy_local_add (local, (struct sockaddr *) &ss);
  assert_int_equal (classify ("192.0.2.1", false, local),
                    NETPOLICY_ADDR_LOCAL_INTERFACE);
  assert_int_equal (classify ("::ffff:192.0.2.1", false, local),
                    NETPOLICY_ADDR_LOCAL_INTERFACE);
  assert_int_equal (classify ("64:ff9b::c000:201", false, local),
                    NETPOLICY_ADDR_LOCAL_INTERFACE);
  assert_int_equal (classify ("2001:db8::1", false, local),
                    NETPOLICY_ADDR_LOCAL_INTERFACE);
  /* This host's private address stays refused under allow_private.  */
  assert_int_equal (classify ("192.168.7.7", true, local),
                    NETPOLICY_ADDR_LOCAL_INTERFACE);
  assert_int_equal (classify ("192.0.2.10", false, local),
                    NETPOLICY_ADDR_ALLOWED);
  assert_int_equal (classify ("2001:db8::10", false, local),
                    NETPOLICY_ADDR_ALLOWED);
  assert_int_equal (classify ("192.0.2.1", false, NULL),
                    NETPOLICY_ADDR_ALLOWED);
  netpolicy_local_free (local);
}

static void
test_local_refresh (void **state)
{
  struct netpolicy_local *local = netpolicy_local_new ();
  struct cr_error *err = NULL;
  struct ifaddrs *ifs = NULL;
  size_t checked = 0;
  assert_int_equal (netpolicy_local_refresh (local, &err), 0);
  assert_int_equal (getifaddrs (&ifs), 0);
  /* Every address getifaddrs reports is this host's own (or a class
   * refused before it, as 127.0.0.1 is loopback).  */
  for (struct ifaddrs *i = ifs; i != NULL; i = i->ifa_next)
    if (i->ifa_addr != NULL
        && (i->ifa_addr->sa_family == AF_INET
            || i->ifa_addr->sa_family == AF_INET6))
      {
        assert_int_not_equal (
            netpolicy_addr_classify (i->ifa_addr, true, local),
            NETPOLICY_ADDR_ALLOWED);
        checked++;
      }
  freeifaddrs (ifs);
  /* A network namespace whose loopback is down has no address at all.  */
  if (checked == 0)
    {
      netpolicy_local_free (local);
      print_message ("SKIP: getifaddrs reports no address here\n");
      skip ();
    }
  /* A second refresh replaces the set (and leaks nothing).  */
  assert_int_equal (netpolicy_local_refresh (local, &err), 0);
  netpolicy_local_free (local);
}

static void
test_class_names (void **state)
{
  assert_string_equal (netpolicy_addr_class_name (NETPOLICY_ADDR_ALLOWED),
                       "allowed");
  assert_string_equal (netpolicy_addr_class_name (NETPOLICY_ADDR_LOOPBACK),
                       "loopback");
  assert_string_equal (netpolicy_addr_class_name (NETPOLICY_ADDR_UNSPECIFIED),
                       "unspecified");
  assert_string_equal (netpolicy_addr_class_name (NETPOLICY_ADDR_LINK_LOCAL),
                       "link-local");
  assert_string_equal (netpolicy_addr_class_name (NETPOLICY_ADDR_MULTICAST),
                       "multicast");
  assert_string_equal (netpolicy_addr_class_name (NETPOLICY_ADDR_BROADCAST),
                       "broadcast");
  assert_string_equal (netpolicy_addr_class_name (NETPOLICY_ADDR_CGNAT),
                       "cgnat");
  assert_string_equal (netpolicy_addr_class_name (NETPOLICY_ADDR_METADATA),
                       "metadata");
  assert_string_equal (netpolicy_addr_class_name (NETPOLICY_ADDR_PRIVATE),
                       "private");
  assert_string_equal (
      netpolicy_addr_class_name (NETPOLICY_ADDR_LOCAL_INTERFACE),
      "local-interface");
}

/* --- the refusal texts (doc/strings.md) ------------------------------ */

/* Require the refusal text for host and reason to be want.  */
static void
expect_refusal (const char *host, const char *reason, const char *want)
{
  char *t = netpolicy_refusal_text (host, reason);
  assert_string_equal (t, want);
  free (t);
}

static void
test_refusal_text (void **state)
{
  expect_refusal (
      "Other.TEST.", "name",
      "crucible refused the connection to other.test: it is not among the "
      "domains this command may reach. Adding \"other.test\" to "
      "sandbox.network.domains in the home configuration "
      "(~/.crucible/config.json) allows it; run the command again after "
      "that.\n");
  expect_refusal (
      "b\xc3\xbc\x63her.example", NETPOLICY_REFUSED_NAME,
      "crucible refused the connection to xn--bcher-kva.example: it is not "
      "among the domains this command may reach. Adding "
      "\"xn--bcher-kva.example\" to sandbox.network.domains in the home "
      "configuration (~/.crucible/config.json) allows it; run the command "
      "again after that.\n");
  expect_refusal (
      "private.test", "private",
      "crucible refused the connection to private.test: the address it "
      "leads to is private (10/8, 172.16/12, 192.168/16, fc00::/7). Setting "
      "sandbox.network.allowPrivateAddresses to true in the home "
      "configuration (~/.crucible/config.json) allows private addresses; "
      "run the command again after that.\n");
  static const struct
  {
    enum netpolicy_addr_class c;
    const char *desc;
  } classes[] = {
    { NETPOLICY_ADDR_LOOPBACK, "loopback (127/8, ::1)" },
    { NETPOLICY_ADDR_UNSPECIFIED, "unspecified (0/8, ::)" },
    { NETPOLICY_ADDR_LINK_LOCAL,
      "link-local (169.254/16, fe80::/10; the cloud metadata address "
      "169.254.169.254 is one)" },
    { NETPOLICY_ADDR_MULTICAST, "multicast (224/4, ff00::/8)" },
    { NETPOLICY_ADDR_BROADCAST, "broadcast (255.255.255.255)" },
    { NETPOLICY_ADDR_CGNAT,
      "shared address space (100.64/10, where a cloud's metadata service "
      "can be)" },
    { NETPOLICY_ADDR_METADATA, "the cloud metadata address fd00:ec2::254" },
    { NETPOLICY_ADDR_LOCAL_INTERFACE,
      "one of this host's own interface addresses" },
  };
  for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
    {
      char want[512];
      snprintf (want, sizeof want,
                "crucible refused the connection to rebind.test: the address "
                "it leads to is %s, which the proxy never connects to, "
                "whatever the configuration.\n",
                classes[i].desc);
      expect_refusal ("rebind.test", netpolicy_addr_class_name (classes[i].c),
                      want);
    }
  /* A host that does not normalise is shown with its odd bytes as '?'. */
  expect_refusal ("a b\x1b[31m", "other",
                  "crucible refused the connection to a?b?[31m.\n");
}

/* --- NO_PROXY ------------------------------------------------------- */

static void
test_no_proxy (void **state)
{
  /* `*` alone is everything; inside a list it is only a name.  */
  assert_true (netpolicy_no_proxy_match ("*", "example.com"));
  assert_true (netpolicy_no_proxy_match ("*", "192.0.2.1"));
  assert_false (netpolicy_no_proxy_match ("*,other.test", "example.com"));
  assert_false (netpolicy_no_proxy_match (" *", "example.com"));
  assert_false (netpolicy_no_proxy_match ("", "example.com"));
  assert_false (netpolicy_no_proxy_match (NULL, "example.com"));
  assert_false (netpolicy_no_proxy_match ("example.com", ""));
  /* Names: itself and below on a label boundary, case-insensitive.  */
  assert_true (netpolicy_no_proxy_match ("example.com", "example.com"));
  assert_true (netpolicy_no_proxy_match ("example.com", "www.example.com"));
  assert_true (netpolicy_no_proxy_match ("example.com", "a.b.example.com"));
  assert_true (netpolicy_no_proxy_match ("EXAMPLE.com", "Www.Example.COM"));
  assert_false (netpolicy_no_proxy_match ("example.com", "notexample.com"));
  assert_false (netpolicy_no_proxy_match ("example.com", "example.co"));
  assert_false (netpolicy_no_proxy_match ("www.example.com", "example.com"));
  /* A leading dot and a trailing dot are ignored, in entry and host.  */
  assert_true (netpolicy_no_proxy_match (".example.com", "example.com"));
  assert_true (netpolicy_no_proxy_match (".example.com", "www.example.com"));
  assert_true (netpolicy_no_proxy_match ("example.com.", "www.example.com"));
  assert_true (netpolicy_no_proxy_match ("example.com", "www.example.com."));
  assert_false (netpolicy_no_proxy_match (".", "example.com"));
  /* Separators: commas, blanks, both, repeated.  */
  assert_true (netpolicy_no_proxy_match ("a.test,example.com", "example.com"));
  assert_true (netpolicy_no_proxy_match ("a.test example.com", "example.com"));
  assert_true (netpolicy_no_proxy_match ("a.test, example.com", "example.com"));
  assert_true (
      netpolicy_no_proxy_match (",,a.test,,\texample.com,,", "x.example.com"));
  assert_false (netpolicy_no_proxy_match ("a.test,b.test", "example.com"));
  /* A host given with its port is taken without it; an entry with a port
   * is a name that matches nothing.  */
  assert_true (netpolicy_no_proxy_match ("example.com", "example.com:443"));
  assert_false (netpolicy_no_proxy_match ("example.com:443", "example.com"));
  /* IPv4: exact and CIDR, never as a name.  */
  assert_true (netpolicy_no_proxy_match ("192.0.2.10", "192.0.2.10"));
  assert_false (netpolicy_no_proxy_match ("192.0.2.10", "192.0.2.11"));
  assert_true (netpolicy_no_proxy_match ("192.0.2.0/24", "192.0.2.77"));
  assert_false (netpolicy_no_proxy_match ("192.0.2.0/24", "192.0.3.1"));
  assert_true (netpolicy_no_proxy_match ("10.0.0.0/8", "10.200.1.1"));
  assert_true (netpolicy_no_proxy_match ("192.0.2.10/32", "192.0.2.10"));
  assert_false (netpolicy_no_proxy_match ("192.0.2.0/33", "192.0.2.10"));
  /* curl 7.88: /0 is the address itself.  */
  assert_false (netpolicy_no_proxy_match ("192.0.2.0/0", "192.0.2.10"));
  assert_false (netpolicy_no_proxy_match ("0.2.10", "192.0.2.10"));
  /* A name below an address-like entry matches it as a name, as in curl. */
  assert_true (netpolicy_no_proxy_match ("192.0.2.10", "www.192.0.2.10"));
  assert_true (
      netpolicy_no_proxy_match ("localhost,127.0.0.1,::1", "127.0.0.1"));
  assert_false (netpolicy_no_proxy_match ("localhost", "127.0.0.1"));
  /* IPv6: bracketed or not, exact and CIDR.  */
  assert_true (netpolicy_no_proxy_match ("::1", "::1"));
  assert_true (netpolicy_no_proxy_match ("localhost,127.0.0.1,::1", "[::1]"));
  assert_true (netpolicy_no_proxy_match ("::1", "[::1]:3128"));
  assert_true (netpolicy_no_proxy_match ("2001:db8::/32", "2001:db8::10"));
  assert_true (netpolicy_no_proxy_match ("2001:db8::/33", "2001:db8:7fff::1"));
  assert_false (netpolicy_no_proxy_match ("2001:db8::/33", "2001:db8:8000::1"));
  assert_false (netpolicy_no_proxy_match ("2001:db8::/32", "2001:db9::10"));
  assert_true (netpolicy_no_proxy_match ("2001:DB8::10", "2001:db8::10"));
  assert_false (netpolicy_no_proxy_match ("2001:db8::10", "2001:db8::11"));
  assert_false (netpolicy_no_proxy_match ("2001:db8::/129", "2001:db8::10"));
}

/* --- the upstream --------------------------------------------------- */

/* The upstream for env, connect and host, requiring return value rc.  */
static struct netpolicy_upstream
upstream (char *const *env, bool connect, const char *host, int rc)
{
  struct netpolicy_upstream u;
  assert_int_equal (netpolicy_upstream_from_env (env, connect, host, &u), rc);
  return u;
}

static void
test_upstream_choice (void **state)
{
  char *both[] = { "HTTPS_PROXY=http://s.test:3129", "http_proxy=h.test:8080",
                   "ALL_PROXY=http://all.test", NULL };
  struct netpolicy_upstream u = upstream (both, true, "example.com", 0);
  assert_int_equal (u.scheme, NETPOLICY_UPSTREAM_HTTP);
  assert_string_equal (u.variable, "HTTPS_PROXY");
  assert_string_equal (u.host, "s.test");
  assert_int_equal (u.port, 3129);
  assert_null (u.credential);
  netpolicy_upstream_clear (&u);
  u = upstream (both, false, "example.com", 0);
  assert_string_equal (u.variable, "http_proxy");
  assert_string_equal (u.host, "h.test");
  assert_int_equal (u.port, 8080);
  netpolicy_upstream_clear (&u);
  /* Lower case first; all_proxy when the scheme's own is not set.  */
  char *lower[]
      = { "HTTPS_PROXY=http://upper.test", "https_proxy=lower.test", NULL };
  u = upstream (lower, true, "example.com", 0);
  assert_string_equal (u.host, "lower.test");
  assert_int_equal (u.port, 80);
  netpolicy_upstream_clear (&u);
  char *all[]
      = { "all_proxy=http://a.test:1", "ALL_PROXY=http://b.test:2", NULL };
  u = upstream (all, true, "example.com", 0);
  assert_string_equal (u.variable, "all_proxy");
  assert_string_equal (u.host, "a.test");
  netpolicy_upstream_clear (&u);
  char *upper_all[] = { "ALL_PROXY=http://b.test:2", NULL };
  u = upstream (upper_all, false, "example.com", 0);
  assert_string_equal (u.variable, "ALL_PROXY");
  netpolicy_upstream_clear (&u);
  /* Set and empty ends the search: no upstream, all_proxy not read.  */
  char *empty[] = { "https_proxy=", "ALL_PROXY=http://b.test:2", NULL };
  u = upstream (empty, true, "example.com", 0);
  assert_int_equal (u.scheme, NETPOLICY_UPSTREAM_NONE);
  netpolicy_upstream_clear (&u);
  char *none[] = { "PATH=/bin", "HTTPS_PROXYX=http://x.test", NULL };
  u = upstream (none, true, "example.com", 0);
  assert_int_equal (u.scheme, NETPOLICY_UPSTREAM_NONE);
  assert_null (u.variable);
  netpolicy_upstream_clear (&u);
  u = upstream (NULL, true, "example.com", 0);
  assert_int_equal (u.scheme, NETPOLICY_UPSTREAM_NONE);
}

static void
test_upstream_no_proxy (void **state)
{
  char *env[] = { "https_proxy=http://192.0.2.1:3128",
                  "NO_PROXY=.internal.test, 192.0.2.0/28", NULL };
  struct netpolicy_upstream u = upstream (env, true, "a.internal.test", 0);
  assert_int_equal (u.scheme, NETPOLICY_UPSTREAM_NONE);
  netpolicy_upstream_clear (&u);
  u = upstream (env, true, "192.0.2.5", 0);
  assert_int_equal (u.scheme, NETPOLICY_UPSTREAM_NONE);
  netpolicy_upstream_clear (&u);
  u = upstream (env, true, "192.0.2.16", 0);
  assert_int_equal (u.scheme, NETPOLICY_UPSTREAM_HTTP);
  assert_string_equal (u.host, "192.0.2.1");
  netpolicy_upstream_clear (&u);
  u = upstream (env, true, "allowed.test", 0);
  assert_int_equal (u.scheme, NETPOLICY_UPSTREAM_HTTP);
  netpolicy_upstream_clear (&u);
  /* no_proxy first; NO_PROXY only when it is not set.  */
  char *both[] = { "https_proxy=http://p.test", "no_proxy=a.test",
                   "NO_PROXY=b.test", NULL };
  u = upstream (both, true, "b.test", 0);
  assert_int_equal (u.scheme, NETPOLICY_UPSTREAM_HTTP);
  netpolicy_upstream_clear (&u);
  u = upstream (both, true, "a.test", 0);
  assert_int_equal (u.scheme, NETPOLICY_UPSTREAM_NONE);
  netpolicy_upstream_clear (&u);
  char *star[] = { "http_proxy=http://p.test", "no_proxy=*", NULL };
  u = upstream (star, false, "anything.test", 0);
  assert_int_equal (u.scheme, NETPOLICY_UPSTREAM_NONE);
  netpolicy_upstream_clear (&u);
}

/* Require the upstream URL (as https_proxy) to give scheme, host and
 * port.  */
static void
expect_url (const char *url, enum netpolicy_upstream_scheme scheme,
            const char *host, uint16_t port, const char *credential)
{
  char var[512];
  snprintf (var, sizeof var, "https_proxy=%s", url);
  char *env[] = { var, NULL };
  struct netpolicy_upstream u = upstream (env, true, "example.com", 0);
  assert_int_equal (u.scheme, scheme);
  assert_string_equal (u.host, host);
  assert_int_equal (u.port, port);
  if (credential == NULL)
    assert_null (u.credential);
  else
    assert_string_equal (u.credential, credential);
  netpolicy_upstream_clear (&u);
}

/* Require the upstream URL to be refused as INVALID.  */
static void
refuse_url (const char *url)
{
  char var[512];
  snprintf (var, sizeof var, "https_proxy=%s", url);
  char *env[] = { var, NULL };
  struct netpolicy_upstream u = upstream (env, true, "example.com", -1);
  assert_int_equal (u.scheme, NETPOLICY_UPSTREAM_INVALID);
  assert_string_equal (u.variable, "https_proxy");
  assert_null (u.host);
  assert_null (u.credential);
  netpolicy_upstream_clear (&u);
}

static void
test_upstream_url (void **state)
{
  expect_url ("http://proxy.test:3128", NETPOLICY_UPSTREAM_HTTP, "proxy.test",
              3128, NULL);
  expect_url ("HTTP://Proxy.Test:3128/", NETPOLICY_UPSTREAM_HTTP, "proxy.test",
              3128, NULL);
  expect_url ("proxy.test", NETPOLICY_UPSTREAM_HTTP, "proxy.test", 80, NULL);
  expect_url ("http://proxy.test", NETPOLICY_UPSTREAM_HTTP, "proxy.test", 80,
              NULL);
  expect_url ("https://proxy.test", NETPOLICY_UPSTREAM_HTTPS, "proxy.test", 443,
              NULL);
  expect_url ("socks://s.test", NETPOLICY_UPSTREAM_SOCKS_PASSED_BY, "s.test",
              1080, NULL);
  expect_url ("socks4://s.test:9", NETPOLICY_UPSTREAM_SOCKS_PASSED_BY, "s.test",
              9, NULL);
  expect_url ("socks5://s.test", NETPOLICY_UPSTREAM_SOCKS_PASSED_BY, "s.test",
              1080, NULL);
  expect_url ("socks4a://s.test", NETPOLICY_UPSTREAM_SOCKS_REFUSED, "s.test",
              1080, NULL);
  expect_url ("socks5h://s.test", NETPOLICY_UPSTREAM_SOCKS_REFUSED, "s.test",
              1080, NULL);
  expect_url ("http://[2001:db8::1]:3128", NETPOLICY_UPSTREAM_HTTP,
              "2001:db8::1", 3128, NULL);
  /* Userinfo: percent-decoded, then Basic base64(user:password).  */
  expect_url ("http://user:pass@proxy.test:3128", NETPOLICY_UPSTREAM_HTTP,
              "proxy.test", 3128, "Basic dXNlcjpwYXNz");
  expect_url ("http://us%65r:p%40ss%3A%2f@proxy.test:3128",
              NETPOLICY_UPSTREAM_HTTP, "proxy.test", 3128,
              "Basic dXNlcjpwQHNzOi8=");
  expect_url ("http://user@proxy.test", NETPOLICY_UPSTREAM_HTTP, "proxy.test",
              80, "Basic dXNlcjo=");
  expect_url ("http://a@b:c@proxy.test", NETPOLICY_UPSTREAM_HTTP, "proxy.test",
              80, "Basic YUBiOmM=");
  expect_url ("http://proxy.test:3128/path@x", NETPOLICY_UPSTREAM_HTTP,
              "proxy.test", 3128, NULL);
  refuse_url ("ftp://proxy.test");
  refuse_url ("http://");
  refuse_url ("http://proxy.test:99999");
  refuse_url ("http://proxy.test:abc");
  refuse_url ("http://us%zzer:x@proxy.test");
  refuse_url ("http://user:x%4@proxy.test");
  refuse_url ("http://[::1");
  refuse_url ("://proxy.test");
}

static void
test_basic_credential (void **state)
{
  char *c = netpolicy_basic_credential ("crucible", 8, "0123456789abcdef", 16);
  assert_string_equal (c, "Basic Y3J1Y2libGU6MDEyMzQ1Njc4OWFiY2RlZg==");
  free (c);
  c = netpolicy_basic_credential ("", 0, "", 0);
  assert_string_equal (c, "Basic Og==");
  free (c);
  c = netpolicy_basic_credential ("a", 1, "bc", 2);
  assert_string_equal (c, "Basic YTpiYw==");
  free (c);
  c = netpolicy_basic_credential ("ab", 2, "c\0d", 3);
  assert_string_equal (c, "Basic YWI6YwBk");
  free (c);
}

static void
test_inside_port (void **state)
{
  assert_int_equal (NETWORK_INSIDE_PORT, 3128);
}

/* libidn2 is loaded the first time a name is not ASCII: without it, such
 * a name is refused, saying why, and an ASCII one still normalises.  The
 * loader reads LD_LIBRARY_PATH when a process starts, so this program runs
 * itself again (IDN2_MISSING_ARG) with LD_LIBRARY_PATH set, in a
 * directory whose libidn2.so.0 is an empty file.  */
#define IDN2_MISSING_ARG "--idn2-missing"

static int
idn2_missing_child (void)
{
  struct cr_error *err = NULL;
  char *out = NULL;
  if (netpolicy_name_normalise ("Example.COM", &out, &err) < 0)
    return 2;
  printf ("%s\n", out);
  free (out);
  if (netpolicy_name_normalise ("b\xc3\xbc\x63her.example", &out, &err) == 0)
    return 3;
  printf ("%s\n", err->msg);
  cr_error_free (err);
  return 0;
}

/* Run the child with LD_LIBRARY_PATH set to path (NULL: the directory),
 * in a directory holding an empty libidn2.so.0; check that it printed
 * example.com and the refusal with why (NULL: dlerror's "file too short"
 * for that library).  */
static void
idn2_missing_check (const char *path, const char *why)
{
  char dir[] = "/tmp/test_netpolicy.XXXXXX";
  assert_non_null (mkdtemp (dir));
  char lib[sizeof dir + 16];
  snprintf (lib, sizeof lib, "%s/libidn2.so.0", dir);
  FILE *f = fopen (lib, "w");
  assert_non_null (f);
  fclose (f);
  int fds[2];
  assert_int_equal (pipe (fds), 0);
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      dup2 (fds[1], 1);
      setenv ("LD_LIBRARY_PATH", path != NULL ? path : dir, 1);
      if (chdir (dir) < 0)
        _exit (126);
      execl ("/proc/self/exe", "test_netpolicy", IDN2_MISSING_ARG,
             (char *) NULL);
      _exit (127);
    }
  close (fds[1]);
  char got[1024];
  size_t n = 0;
  ssize_t r;
  while (n < sizeof got - 1
         && (r = read (fds[0], got + n, sizeof got - 1 - n)) > 0)
    n += (size_t) r;
  got[n] = '\0';
  close (fds[0]);
  int status;
  assert_int_equal (waitpid (pid, &status, 0), pid);
  unlink (lib);
  rmdir (dir);
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 0);
  char reason[512];
  if (why != NULL)
    snprintf (reason, sizeof reason, "%s", why);
  else
    snprintf (reason, sizeof reason, "%s: file too short", lib);
  char want[1024];
  snprintf (want, sizeof want,
            "example.com\n"
            "the host name is not ASCII, and libidn2, which turns it into "
            "its ASCII form, could not be loaded: %s (on Debian: apt-get "
            "install libidn2-0)\n",
            reason);
  assert_string_equal (got, want);
}

/* The directory first in LD_LIBRARY_PATH: its empty library is loaded,
 * and refused as dlerror says.  */
static void
test_idn2_missing (void **state)
{
  (void) state;
  idn2_missing_check (NULL, NULL);
}

/* An entry that is not absolute (empty, or relative) would be looked in
 * from the current directory, which for crucible is the workspace: the
 * library is not searched for, and the refusal says why.  The control is
 * test_idn2_missing (the same directory, named absolutely, is searched);
 * without the check, each of these would load the current directory's
 * empty library and say "file too short".  */
static void
test_idn2_relative_path (void **state)
{
  (void) state;
  idn2_missing_check (":", DYNLOAD_RELATIVE_PATH);
  idn2_missing_check ("/usr/lib:", DYNLOAD_RELATIVE_PATH);
  idn2_missing_check ("/nonexistent;.", DYNLOAD_RELATIVE_PATH);
}

int
main (int argc, char **argv)
{
  if (argc == 2 && strcmp (argv[1], IDN2_MISSING_ARG) == 0)
    return idn2_missing_child ();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_authority),
    cmocka_unit_test (test_authority_refused),
    cmocka_unit_test (test_normalise),
    cmocka_unit_test (test_names_match),
    cmocka_unit_test (test_names_refused),
    cmocka_unit_test (test_host_literal),
    cmocka_unit_test (test_classify_v4),
    cmocka_unit_test (test_classify_v6),
    cmocka_unit_test (test_classify_private),
    cmocka_unit_test (test_classify_local),
    cmocka_unit_test (test_local_refresh),
    cmocka_unit_test (test_class_names),
    cmocka_unit_test (test_refusal_text),
    cmocka_unit_test (test_no_proxy),
    cmocka_unit_test (test_upstream_choice),
    cmocka_unit_test (test_upstream_no_proxy),
    cmocka_unit_test (test_upstream_url),
    cmocka_unit_test (test_basic_credential),
    cmocka_unit_test (test_inside_port),
    cmocka_unit_test (test_idn2_missing),
    cmocka_unit_test (test_idn2_relative_path),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
