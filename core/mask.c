/* Masking secrets in a byte stream: Aho-Corasick, with a skip sixteen
 * bytes at a time to the next place a secret's opening pair appears.  */
#include <config.h>

#include "core/mask.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"

/* The root of the trie: the state in which nothing could begin a secret. */
#define MASK_ROOT 0

/* Sixteen bytes compared at once (GCC's vector extension: SSE2 on x86-64,
 * NEON on arm64, plain words elsewhere).  */
typedef unsigned char mask_vec __attribute__ ((vector_size (16)));

/* Up to this many distinct opening pairs (the first two bytes of a
 * secret) are looked for sixteen positions at a time; with more, each
 * position's pair is looked up alone.  */
#define MASK_VEC_PAIRS 8

/* One state of the automaton: a prefix of some secret.  */
struct mask_node
{
  uint32_t fail;  /* the longest proper suffix that is also a state */
  uint32_t edges; /* its children: edge_byte/edge_to[edges .. +n_edges) */
  uint32_t match; /* length of the longest secret ending here, or 0 */
  uint32_t hold;  /* length of the longest suffix that is a proper prefix of
                     a secret: the bytes that may still become masked */
  uint16_t n_edges;
};

/* A node of the trie while it is being built: children as a sorted list. */
struct mask_tnode
{
  uint32_t child;   /* first child, or 0 */
  uint32_t sibling; /* next child of the same parent, or 0 */
  uint32_t depth;
  unsigned char byte; /* the edge from the parent */
  bool terminal;      /* a whole secret ends here */
};

struct mask
{
  /* The skip between candidates (first: they are 16-byte aligned).  The
   * first MASK_VEC_PAIRS opening pairs, each byte sixteen times.  */
  mask_vec pair_v0[MASK_VEC_PAIRS], pair_v1[MASK_VEC_PAIRS];
  uint64_t pair_bits[1024]; /* the opening two bytes of each longer secret,
                               as bit b0 | b1 << 8 */
  size_t n_pairs;
  uint32_t root_goto[256]; /* the root's transitions, complete */
  bool starts[256];        /* bytes that begin some secret */
  size_t n_starts;

  /* The secrets, until the automaton is built from them.  */
  unsigned char *secrets[MASK_MAX_SECRETS];
  size_t lens[MASK_MAX_SECRETS];
  size_t n_secrets;
  size_t longest;

  /* The automaton.  */
  struct mask_node *nodes;
  unsigned char *edge_byte;
  uint32_t *edge_to;
  uint32_t n_nodes;
  uint32_t n_edges;

  /* The stream.  */
  uint64_t consumed;  /* raw bytes fed */
  uint64_t run_start; /* the run of masked bytes that ends last */
  uint64_t run_end;
  unsigned char *held; /* the held bytes, masked as far as known */
  size_t held_len;
  uint32_t state;

  unsigned char only_start; /* the start byte when n_starts == 1 */
  bool has_short;           /* a secret of one byte: starts[] decides */
  bool built;
};

/* Make a masker with no secrets.  */
struct mask *
mask_new (void)
{
  return xcalloc (1, sizeof (struct mask));
}

/* Wipe and free len bytes at p.  */
static void
mask_wipe_free (void *p, size_t len)
{
  if (p == NULL)
    return;
  explicit_bzero (p, len);
  free (p);
}

/* Free a masker, its copies of the secrets wiped first.  */
void
mask_free (struct mask *m)
{
  if (m == NULL)
    return;
  for (size_t i = 0; i < m->n_secrets; i++)
    mask_wipe_free (m->secrets[i], m->lens[i]);
  mask_wipe_free (m->edge_byte, m->n_edges);
  mask_wipe_free (m->held, m->longest);
  free (m->edge_to);
  free (m->nodes);
  /* The root's transitions and the opening pairs are bytes of secrets.  */
  explicit_bzero (m, sizeof *m);
  free (m);
}

/* Add a secret (copied); an empty one is ignored.  */
int
mask_add (struct mask *m, const void *secret, size_t len, struct cr_error **err)
{
  if (len == 0)
    return 0;
  if (m->built)
    return cr_error_set (err, 0,
                         "adding a secret to mask: the output it masks "
                         "has begun");
  if (len > MASK_MAX_LEN)
    return cr_error_set (err, 0,
                         "adding a secret to mask: it is %zu bytes, more "
                         "than the %zu a masked value may have",
                         len, MASK_MAX_LEN);
  if (m->n_secrets == MASK_MAX_SECRETS)
    return cr_error_set (err, 0,
                         "adding a secret to mask: a command's output "
                         "masks at most %d values",
                         MASK_MAX_SECRETS);
  m->secrets[m->n_secrets] = xmemdup (secret, len);
  m->lens[m->n_secrets++] = len;
  if (len > m->longest)
    m->longest = len;
  return 0;
}

/* Bytes held back now.  */
size_t
mask_held (const struct mask *m)
{
  return m->held_len;
}

/* The child of trie node u by byte c, made when missing; children are kept
 * sorted by byte.  */
static uint32_t
mask_trie_child (struct mask_tnode **t, uint32_t *n, size_t *cap, uint32_t u,
                 unsigned char c)
{
  uint32_t *link = &(*t)[u].child;
  while (*link != 0 && (*t)[*link].byte < c)
    link = &(*t)[*link].sibling;
  if (*link != 0 && (*t)[*link].byte == c)
    return *link;
  if (*n == *cap)
    {
      /* link points into the array being moved.  */
      size_t off = (size_t) ((char *) link - (char *) *t);
      *cap *= 2;
      *t = xrealloc (*t, *cap * sizeof **t);
      link = (uint32_t *) (void *) ((char *) *t + off);
    }
  uint32_t v = (*n)++;
  (*t)[v] = (struct mask_tnode){ .sibling = *link,
                                 .depth = (*t)[u].depth + 1,
                                 .byte = c };
  *link = v;
  return v;
}

/* The trie of every secret.  */
static struct mask_tnode *
mask_trie (const struct mask *m, uint32_t *n_out)
{
  size_t total = 1;
  for (size_t i = 0; i < m->n_secrets; i++)
    total += m->lens[i];
  size_t cap = total < 64 ? 64 : total;
  struct mask_tnode *t = xcalloc (cap, sizeof *t);
  uint32_t n = 1;
  for (size_t i = 0; i < m->n_secrets; i++)
    {
      uint32_t u = MASK_ROOT;
      for (size_t j = 0; j < m->lens[i]; j++)
        u = mask_trie_child (&t, &n, &cap, u, m->secrets[i][j]);
      t[u].terminal = true;
    }
  *n_out = n;
  return t;
}

/* The opening pairs of the secrets, for the skip between candidates.  */
static void
mask_layout_pairs (struct mask *m, const struct mask_tnode *t)
{
  for (uint32_t u = t[MASK_ROOT].child; u != 0; u = t[u].sibling)
    {
      if (t[u].terminal)
        m->has_short = true;
      for (uint32_t v = t[u].child; v != 0; v = t[v].sibling)
        {
          unsigned pair = t[u].byte | (unsigned) t[v].byte << 8;
          m->pair_bits[pair / 64] |= (uint64_t) 1 << (pair % 64);
          if (m->n_pairs < MASK_VEC_PAIRS)
            for (int lane = 0; lane < 16; lane++)
              {
                m->pair_v0[m->n_pairs][lane] = t[u].byte;
                m->pair_v1[m->n_pairs][lane] = t[v].byte;
              }
          m->n_pairs++;
        }
    }
}

/* Lay the trie's edges out per node, in node order, sorted by byte.  */
static void
mask_layout (struct mask *m, const struct mask_tnode *t, uint32_t n)
{
  m->nodes = xcalloc (n, sizeof *m->nodes);
  m->n_nodes = n;
  m->n_edges = n - 1;
  m->edge_byte = xmalloc (n);
  m->edge_to = xmalloc (n * sizeof *m->edge_to);
  uint32_t e = 0;
  for (uint32_t u = 0; u < n; u++)
    {
      m->nodes[u].edges = e;
      for (uint32_t v = t[u].child; v != 0; v = t[v].sibling, e++)
        {
          m->edge_byte[e] = t[v].byte;
          m->edge_to[e] = v;
        }
      m->nodes[u].n_edges = (uint16_t) (e - m->nodes[u].edges);
    }
  for (uint32_t e2 = m->nodes[MASK_ROOT].edges;
       e2 < m->nodes[MASK_ROOT].edges + m->nodes[MASK_ROOT].n_edges; e2++)
    {
      m->root_goto[m->edge_byte[e2]] = m->edge_to[e2];
      m->starts[m->edge_byte[e2]] = true;
      m->only_start = m->edge_byte[e2];
    }
  m->n_starts = m->nodes[MASK_ROOT].n_edges;
  mask_layout_pairs (m, t);
}

/* The child of state s by byte c, or MASK_ROOT when there is none (the
 * root is nobody's child).  */
static inline uint32_t
mask_child (const struct mask *m, uint32_t s, unsigned char c)
{
  const struct mask_node *node = &m->nodes[s];
  const unsigned char *b = m->edge_byte + node->edges;
  size_t lo = 0, hi = node->n_edges;
  while (hi - lo > 8)
    {
      size_t mid = lo + (hi - lo) / 2;
      if (b[mid] <= c)
        lo = mid;
      else
        hi = mid;
    }
  for (size_t i = lo; i < hi; i++)
    if (b[i] == c)
      return m->edge_to[node->edges + i];
  return MASK_ROOT;
}

/* The state after byte c in state s.  */
static inline uint32_t
mask_step (const struct mask *m, uint32_t s, unsigned char c)
{
  while (s != MASK_ROOT)
    {
      uint32_t t = mask_child (m, s, c);
      if (t != MASK_ROOT)
        return t;
      s = m->nodes[s].fail;
    }
  return m->root_goto[c];
}

/* Failure links, matches and holds, breadth first so that a node's
 * failure state is complete before the node.  */
static void
mask_links (struct mask *m, const struct mask_tnode *t)
{
  uint32_t *queue = xmalloc (m->n_nodes * sizeof *queue);
  size_t head = 0, tail = 0;
  queue[tail++] = MASK_ROOT;
  while (head < tail)
    {
      uint32_t u = queue[head++];
      struct mask_node *node = &m->nodes[u];
      for (uint32_t e = node->edges; e < node->edges + node->n_edges; e++)
        {
          uint32_t v = m->edge_to[e];
          uint32_t f = u == MASK_ROOT
                           ? MASK_ROOT
                           : mask_step (m, node->fail, m->edge_byte[e]);
          struct mask_node *nv = &m->nodes[v];
          nv->fail = f;
          nv->match = t[v].terminal ? t[v].depth : m->nodes[f].match;
          nv->hold = nv->n_edges > 0 ? t[v].depth : m->nodes[f].hold;
          queue[tail++] = v;
        }
    }
  free (queue);
}

/* Build the automaton from the secrets, which are wiped then.  */
static void
mask_build (struct mask *m)
{
  uint32_t n;
  m->built = true;
  struct mask_tnode *t = mask_trie (m, &n);
  mask_layout (m, t, n);
  mask_links (m, t);
  free (t);
  m->held = xmalloc (m->longest ? m->longest : 1);
  for (size_t i = 0; i < m->n_secrets; i++)
    {
      mask_wipe_free (m->secrets[i], m->lens[i]);
      m->secrets[i] = NULL;
      m->lens[i] = 0;
    }
}

/* Bytes from p on that cannot leave the root, judged by the first byte
 * alone (some secret is one byte long).  */
static size_t
mask_skip_starts (const struct mask *m, const unsigned char *p, size_t len)
{
  if (m->n_starts == 1)
    {
      const unsigned char *q = memchr (p, m->only_start, len);
      return q != NULL ? (size_t) (q - p) : len;
    }
  size_t i = 0;
  while (i + 4 <= len
         && !(m->starts[p[i]] | m->starts[p[i + 1]] | m->starts[p[i + 2]]
              | m->starts[p[i + 3]]))
    i += 4;
  while (i < len && !m->starts[p[i]])
    i++;
  return i;
}

/* Whether a secret may begin at p[0], judged by p[0] and p[1].  */
static inline bool
mask_pair_at (const struct mask *m, const unsigned char *p)
{
  unsigned pair = p[0] | (unsigned) p[1] << 8;
  return (m->pair_bits[pair / 64] >> (pair % 64)) & 1;
}

/* Where an opening pair may begin in the 16 positions from p on (p[16]
 * is read too): a lane of -1 for each.  */
static inline mask_vec
mask_block_hits (const struct mask *m, const unsigned char *p)
{
  mask_vec a, b, hit = { 0 };
  memcpy (&a, p, sizeof a);
  memcpy (&b, p + 1, sizeof b);
  for (size_t k = 0; k < m->n_pairs; k++)
    hit |= (mask_vec) (a == m->pair_v0[k]) & (mask_vec) (b == m->pair_v1[k]);
  return hit;
}

/* Whether any lane of v is set.  */
static inline bool
mask_any (mask_vec v)
{
  uint64_t lanes[2];
  memcpy (lanes, &v, sizeof lanes);
  return (lanes[0] | lanes[1]) != 0;
}

/* The first of the 16-byte blocks from p on in which an opening pair may
 * begin, or where fewer than 17 bytes are left.  Four blocks are tested
 * at once, the branch taken once per 64 bytes.  */
static size_t
mask_skip_vec (const struct mask *m, const unsigned char *p, size_t len)
{
  size_t i = 0;
  for (; i + 65 <= len; i += 64)
    if (mask_any (mask_block_hits (m, p + i) | mask_block_hits (m, p + i + 16)
                  | mask_block_hits (m, p + i + 32)
                  | mask_block_hits (m, p + i + 48)))
      break;
  for (; i + 17 <= len; i += 16)
    if (mask_any (mask_block_hits (m, p + i)))
      break;
  return i;
}

/* Bytes from p on that cannot leave the root: no secret begins at any of
 * them (its opening pair is not there), and the last is not the first
 * byte of one, which the next read could complete.  A byte whose pair
 * fails is skipped even when it is a first byte: from it, the next byte
 * leads where it would from the root.  */
static size_t
mask_skip (const struct mask *m, const unsigned char *p, size_t len)
{
  if (m->has_short)
    return mask_skip_starts (m, p, len);
  size_t i = m->n_pairs <= MASK_VEC_PAIRS ? mask_skip_vec (m, p, len) : 0;
  for (; i + 1 < len; i++)
    if (mask_pair_at (m, p + i))
      return i;
  if (i + 1 == len && m->starts[p[i]])
    return i;
  return len;
}

/* Write '*' over stream positions [from, to) of the window v that begins
 * at stream position v_start; positions before it were released at a
 * flush, as '*' already.  */
static void
mask_stars (unsigned char *v, uint64_t v_start, uint64_t from, uint64_t to)
{
  if (from < v_start)
    from = v_start;
  if (from < to)
    memset (v + (from - v_start), '*', (size_t) (to - from));
}

/* Mask an occurrence of len bytes that ends at stream position end.
 * Occurrences come in the order of their ends, so what is masked already
 * near the end is one run, [run_start, run_end): only what lies outside it
 * is written, and a stream of overlapping occurrences costs about one
 * write per byte.  */
static void
mask_mark (struct mask *m, unsigned char *v, uint64_t v_start, uint64_t end,
           uint32_t len)
{
  uint64_t from = end - len;
  if (from > m->run_end)
    {
      mask_stars (v, v_start, from, end);
      m->run_start = from;
    }
  else
    {
      if (from < m->run_start)
        {
          mask_stars (v, v_start, from, m->run_start);
          m->run_start = from;
        }
      mask_stars (v, v_start, m->run_end, end);
    }
  m->run_end = end;
}

/* Run the automaton over in, masking the window v (held bytes then in)
 * that begins at stream position v_start.  */
static void
mask_scan (struct mask *m, const unsigned char *in, size_t len,
           unsigned char *v, uint64_t v_start)
{
  uint32_t s = m->state;
  uint64_t at = m->consumed; /* stream position of in[0] */
  size_t i = 0;
  while (i < len)
    {
      if (s == MASK_ROOT)
        {
          i += mask_skip (m, in + i, len - i);
          if (i == len)
            break;
        }
      s = mask_step (m, s, in[i]);
      uint32_t match = m->nodes[s].match;
      i++;
      if (match != 0)
        mask_mark (m, v, v_start, at + i, match);
    }
  m->state = s;
  m->consumed += len;
}

/* Feed raw bytes; release what can no longer change.  */
void
mask_feed (struct mask *m, const void *in, size_t len, struct buf *out)
{
  if (len == 0)
    return;
  if (!m->built)
    mask_build (m);
  if (m->n_nodes <= 1)
    {
      buf_append (out, in, len);
      m->consumed += len;
      return;
    }
  /* The window: what is held, then what arrived; masked in place in out,
     and its tail taken back as the new held bytes.  */
  size_t base = out->len, held = m->held_len;
  buf_append (out, m->held, held);
  buf_append (out, in, len);
  unsigned char *v = (unsigned char *) out->data + base;
  uint64_t v_start = m->consumed - held;
  mask_scan (m, in, len, v, v_start);
  size_t window = held + len;
  size_t keep = m->nodes[m->state].hold;
  /* After a flush the window may be shorter than the state's prefix; what
     came before it was released as '*'.  */
  if (keep > window)
    keep = window;
  memcpy (m->held, v + window - keep, keep);
  m->held_len = keep;
  out->len = base + window - keep;
  out->data[out->len] = '\0';
}

/* A cut: release the held bytes, each as '*'.  */
void
mask_flush (struct mask *m, struct buf *out)
{
  if (m->held_len == 0)
    return;
  size_t base = out->len;
  buf_append (out, m->held, m->held_len);
  memset (out->data + base, '*', m->held_len);
  explicit_bzero (m->held, m->held_len);
  m->held_len = 0;
}
