/* Reading a command line as POSIX sh reads it: see core/cmdline.h and
 * doc/cmdline.md.
 *
 * A recursive-descent parser over a hand-written lexer.  Words are read
 * once, when they are lexed, so the commands inside a $( ), a backquote or
 * an unquoted here-document are appended to the list at that moment; a
 * simple command is appended when it is complete.  Every construct that
 * nests counts against CMDLINE_MAX_DEPTH, which bounds the C stack as well
 * as the reading.  */
#include <config.h>

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cmdline.h"
#include "lib/buf.h"
#include "lib/xalloc.h"

enum tok_kind
{
  TOK_EOF,
  TOK_NEWLINE,
  TOK_WORD,
  TOK_AND_IF, /* && */
  TOK_OR_IF,  /* || */
  TOK_DSEMI,  /* ;; */
  TOK_SEMI,   /* ; */
  TOK_AMP,    /* & */
  TOK_PIPE,   /* | or |& */
  TOK_LPAREN,
  TOK_RPAREN,
  TOK_REDIR
};

/* A word as lexed.  */
struct word
{
  char *text;      /* after quote removal, expansions as written; owned */
  bool quoted;     /* some part was quoted or escaped */
  bool expansion;  /* holds $..., `...` */
  bool glob;       /* holds an unquoted *, ?, [...] or {a,b} */
  bool assignment; /* starts with an unquoted NAME= */
};

struct token
{
  enum tok_kind kind;
  struct word w; /* TOK_WORD */
  char op[16];   /* TOK_REDIR: "2>&", "<<-", ...; else the operator */
};

struct heredoc
{
  char *delim; /* owned */
  bool quoted;
  bool strip_tabs;
};

/* What one whole reading shares: the output and the first failure.  */
struct reader
{
  struct cmdline *cl;
  size_t cap;
  char *reason; /* owned; the first failure wins */
};

struct parser
{
  struct reader *r;
  const char *s;
  size_t len;
  size_t pos;
  unsigned depth;
  bool have_tok;
  struct token tok;
  struct heredoc *hd; /* pending here-documents, read at the next newline */
  size_t n_hd;
};

/* Sleep-rule facts about one command, pipeline or and-or list.  */
struct shape
{
  bool sleep;       /* a single simple command that is a literal sleep */
  enum tok_kind op; /* and-or: the operator after the first pipeline */
};

static int parse_list (struct parser *p, bool top);
static int read_dollar (struct parser *p, struct buf *out, bool in_dquote,
                        struct word *w);
static int read_backquote (struct parser *p, struct buf *out, bool in_dquote);
static int read_dquote (struct parser *p, struct buf *out, struct word *w);
static int read_text (struct reader *r, unsigned depth, const char *s,
                      size_t len);
static void parser_release (struct parser *p);

/* Record the first reason reading stopped; returns -1.  */
static int __attribute__ ((format (printf, 2, 3)))
fail (struct parser *p, const char *fmt, ...)
{
  if (p->r->reason == NULL)
    {
      va_list ap;
      va_start (ap, fmt);
      p->r->reason = xvasprintf (fmt, ap);
      va_end (ap);
    }
  return -1;
}

/* Enter one more level of nesting, refusing past the bound.  */
static int
enter (struct parser *p)
{
  if (p->depth >= CMDLINE_MAX_DEPTH)
    return fail (p, "it nests more than %d levels deep", CMDLINE_MAX_DEPTH);
  p->depth++;
  return 0;
}

static void
word_free (struct word *w)
{
  free (w->text);
  w->text = NULL;
}

static void
token_free (struct token *t)
{
  if (t->kind == TOK_WORD)
    word_free (&t->w);
  t->kind = TOK_EOF;
}

/* A word with no quoting and no expansion: what a reserved word must be.  */
static bool
word_is (const struct word *w, const char *s)
{
  return !w->quoted && !w->expansion && strcmp (w->text, s) == 0;
}

static bool
is_meta (char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|'
         || c == '<' || c == '>' || c == '(' || c == ')';
}

static bool
is_name_start (char c)
{
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool
is_name_char (char c)
{
  return is_name_start (c) || (c >= '0' && c <= '9');
}

static char
peekc (const struct parser *p, size_t ahead)
{
  return p->pos + ahead < p->len ? p->s[p->pos + ahead] : '\0';
}

/* Read the text of a nested reading (backquotes, a here-document) with
 * its own parser; the commands go to the same list.  */
static int
read_nested (struct parser *p, const char *s, size_t len)
{
  if (p->depth >= CMDLINE_MAX_DEPTH)
    return fail (p, "it nests more than %d levels deep", CMDLINE_MAX_DEPTH);
  return read_text (p->r, p->depth + 1, s, len);
}

/* $( ... ): the list inside is read in place, up to its ).  */
static int
read_command_subst (struct parser *p)
{
  p->pos += 2;
  if (enter (p) < 0)
    return -1;
  if (parse_list (p, false) < 0)
    return -1;
  if (!p->have_tok || p->tok.kind != TOK_RPAREN)
    {
      if (p->have_tok && p->tok.kind == TOK_EOF)
        return fail (p, "a $( is not closed");
      return fail (p, "unexpected %s inside $( )",
                   p->have_tok && p->tok.kind == TOK_WORD ? p->tok.w.text
                                                          : p->tok.op);
    }
  p->have_tok = false;
  p->depth--;
  return 0;
}

/* $(( ... )): scanned to its )), reading any expansion inside.  */
static int
read_arith (struct parser *p)
{
  int level = 0;
  struct buf scratch = BUF_INIT;
  struct word w = { 0 };
  int ret = -1;

  p->pos += 3;
  if (enter (p) < 0)
    return -1;
  while (p->pos < p->len)
    {
      char c = p->s[p->pos];
      if (c == '(')
        level++, p->pos++;
      else if (c == ')')
        {
          if (level > 0)
            {
              level--, p->pos++;
              continue;
            }
          if (peekc (p, 1) != ')')
            {
              fail (p, "a $(( is not closed by ))");
              goto out;
            }
          p->pos += 2;
          p->depth--;
          ret = 0;
          goto out;
        }
      else if (c == '$')
        {
          if (read_dollar (p, &scratch, true, &w) < 0)
            goto out;
        }
      else if (c == '`')
        {
          if (read_backquote (p, &scratch, true) < 0)
            goto out;
        }
      else if (c == '\\' && p->pos + 1 < p->len)
        p->pos += 2;
      else
        p->pos++;
    }
  fail (p, "a $(( is not closed");
out:
  buf_free (&scratch);
  return ret;
}

/* ${ ... }: scanned to its }, reading quotes and expansions inside.  */
static int
read_param (struct parser *p, bool in_dquote)
{
  struct buf scratch = BUF_INIT;
  struct word w = { 0 };
  int ret = -1;

  p->pos += 2;
  if (enter (p) < 0)
    return -1;
  while (p->pos < p->len)
    {
      char c = p->s[p->pos];
      if (c == '}')
        {
          p->pos++;
          p->depth--;
          ret = 0;
          goto out;
        }
      if (c == '\\')
        p->pos += p->pos + 1 < p->len ? 2 : 1;
      else if (c == '\'' && !in_dquote)
        {
          const char *q = memchr (p->s + p->pos + 1, '\'', p->len - p->pos - 1);
          if (q == NULL)
            {
              fail (p, "a single quote is not closed");
              goto out;
            }
          p->pos = (size_t) (q - p->s) + 1;
        }
      else if (c == '"')
        {
          if (read_dquote (p, &scratch, &w) < 0)
            goto out;
        }
      else if (c == '$')
        {
          if (read_dollar (p, &scratch, in_dquote, &w) < 0)
            goto out;
        }
      else if (c == '`')
        {
          if (read_backquote (p, &scratch, in_dquote) < 0)
            goto out;
        }
      else
        p->pos++;
    }
  fail (p, "a ${ is not closed");
out:
  buf_free (&scratch);
  return ret;
}

/* A $ at p->pos, in a word, double quotes, ${ }, $(( )) or a
 * here-document.  What it expands to is unknown, so the source text is
 * kept as written.  */
static int
read_dollar (struct parser *p, struct buf *out, bool in_dquote, struct word *w)
{
  size_t start = p->pos;
  char n = peekc (p, 1);

  if (n == '(' && peekc (p, 2) == '(')
    {
      if (read_arith (p) < 0)
        return -1;
    }
  else if (n == '(')
    {
      if (read_command_subst (p) < 0)
        return -1;
    }
  else if (n == '{')
    {
      if (read_param (p, in_dquote) < 0)
        return -1;
    }
  else if ((n == '\'' || n == '"') && !in_dquote)
    return fail (p,
                 "it uses $%c...%c quoting, which sh and bash read "
                 "differently",
                 n, n);
  else if (is_name_start (n))
    {
      p->pos++;
      while (p->pos < p->len && is_name_char (p->s[p->pos]))
        p->pos++;
    }
  else if (n != '\0' && strchr ("0123456789@*#?-$!", n) != NULL)
    p->pos += 2;
  else
    {
      buf_putc (out, '$');
      p->pos++;
      return 0;
    }
  buf_append (out, p->s + start, p->pos - start);
  w->expansion = true;
  return 0;
}

/* `...`: the text between the backquotes, unescaped, is read as a line of
 * its own.  */
static int
read_backquote (struct parser *p, struct buf *out, bool in_dquote)
{
  size_t start = p->pos;
  struct buf inner = BUF_INIT;
  int ret;

  p->pos++;
  for (;;)
    {
      if (p->pos >= p->len)
        {
          buf_free (&inner);
          return fail (p, "a backquote is not closed");
        }
      char c = p->s[p->pos];
      if (c == '`')
        break;
      if (c == '\\' && p->pos + 1 < p->len
          && (strchr ("`\\$", p->s[p->pos + 1]) != NULL
              || (in_dquote && p->s[p->pos + 1] == '"')))
        {
          buf_putc (&inner, p->s[p->pos + 1]);
          p->pos += 2;
          continue;
        }
      buf_putc (&inner, c);
      p->pos++;
    }
  p->pos++;
  ret = read_nested (p, inner.data ? inner.data : "", inner.len);
  buf_free (&inner);
  if (ret < 0)
    return -1;
  buf_append (out, p->s + start, p->pos - start);
  return 0;
}

/* "...": escapes of $ ` " \ and newline, expansions inside.  */
static int
read_dquote (struct parser *p, struct buf *out, struct word *w)
{
  p->pos++;
  w->quoted = true;
  for (;;)
    {
      if (p->pos >= p->len)
        return fail (p, "a double quote is not closed");
      char c = p->s[p->pos];
      if (c == '"')
        {
          p->pos++;
          return 0;
        }
      if (c == '\\' && p->pos + 1 < p->len
          && strchr ("$`\"\\\n", p->s[p->pos + 1]) != NULL)
        {
          if (p->s[p->pos + 1] != '\n')
            buf_putc (out, p->s[p->pos + 1]);
          p->pos += 2;
        }
      else if (c == '$')
        {
          if (read_dollar (p, out, true, w) < 0)
            return -1;
        }
      else if (c == '`')
        {
          if (read_backquote (p, out, true) < 0)
            return -1;
          w->expansion = true;
        }
      else
        {
          buf_putc (out, c);
          p->pos++;
        }
    }
}

/* Read one word starting at p->pos (not a metacharacter).  */
static int
read_word (struct parser *p, struct word *w)
{
  struct buf out = BUF_INIT;
  size_t start = p->pos;
  bool brace = false, brace_sep = false, bracket = false;

  memset (w, 0, sizeof *w);
  while (p->pos < p->len && !is_meta (p->s[p->pos]))
    {
      char c = p->s[p->pos];
      int ret = 0;
      switch (c)
        {
        case '\\':
          if (p->pos + 1 >= p->len)
            {
              buf_putc (&out, '\\');
              p->pos++;
            }
          else
            {
              if (p->s[p->pos + 1] != '\n')
                buf_putc (&out, p->s[p->pos + 1]);
              w->quoted = true;
              p->pos += 2;
            }
          break;
        case '\'':
          {
            const char *q
                = memchr (p->s + p->pos + 1, '\'', p->len - p->pos - 1);
            if (q == NULL)
              ret = fail (p, "a single quote is not closed");
            else
              {
                buf_append (&out, p->s + p->pos + 1,
                            (size_t) (q - p->s) - p->pos - 1);
                p->pos = (size_t) (q - p->s) + 1;
                w->quoted = true;
              }
          }
          break;
        case '"':
          ret = read_dquote (p, &out, w);
          break;
        case '$':
          ret = read_dollar (p, &out, false, w);
          break;
        case '`':
          ret = read_backquote (p, &out, false);
          w->expansion = true;
          break;
        default:
          if (c == '*' || c == '?' || (c == ']' && bracket)
              || (c == '}' && brace_sep))
            w->glob = true;
          else if (c == '[')
            bracket = true;
          else if (c == '{')
            brace = true;
          else if (brace && (c == ',' || (c == '.' && peekc (p, 1) == '.')))
            brace_sep = true;
          buf_putc (&out, c);
          p->pos++;
        }
      if (ret < 0)
        {
          buf_free (&out);
          return -1;
        }
    }
  if (is_name_start (p->s[start]))
    {
      size_t i = start;
      while (i < p->len && is_name_char (p->s[i]))
        i++;
      w->assignment = i < p->len && p->s[i] == '=';
    }
  w->text = buf_steal (&out, NULL);
  return 0;
}

/* Read the bodies of the pending here-documents, which start at p->pos
 * (just after a newline).  An unquoted delimiter's body is expanded, so
 * the commands in its $( ) and backquotes run.  */
static int
read_heredocs (struct parser *p)
{
  for (size_t i = 0; i < p->n_hd; i++)
    {
      struct heredoc *h = &p->hd[i];
      size_t body = p->pos, body_end;
      size_t dlen = strlen (h->delim);
      for (;;)
        {
          if (p->pos >= p->len)
            return fail (p, "the here-document ended by %s has no end line",
                         h->delim);
          const char *nl = memchr (p->s + p->pos, '\n', p->len - p->pos);
          size_t eol = nl ? (size_t) (nl - p->s) : p->len;
          size_t ls = p->pos;
          if (h->strip_tabs)
            while (ls < eol && p->s[ls] == '\t')
              ls++;
          body_end = p->pos;
          p->pos = nl ? eol + 1 : eol;
          if (eol - ls == dlen && memcmp (p->s + ls, h->delim, dlen) == 0)
            break;
        }
      if (!h->quoted)
        {
          struct parser q = { .r = p->r,
                              .s = p->s,
                              .len = body_end,
                              .pos = body,
                              .depth = p->depth };
          struct buf scratch = BUF_INIT;
          struct word w = { 0 };
          int ret = enter (&q);
          while (ret == 0 && q.pos < q.len)
            {
              char c = q.s[q.pos];
              if (c == '\\')
                q.pos += 2;
              else if (c == '$')
                ret = read_dollar (&q, &scratch, true, &w);
              else if (c == '`')
                ret = read_backquote (&q, &scratch, true);
              else
                q.pos++;
            }
          buf_free (&scratch);
          parser_release (&q);
          if (ret < 0)
            return -1;
        }
    }
  for (size_t i = 0; i < p->n_hd; i++)
    free (p->hd[i].delim);
  p->n_hd = 0;
  return 0;
}

/* Lex the next token into *t.  */
static int
lex (struct parser *p, struct token *t)
{
  memset (t, 0, sizeof *t);
  for (;;)
    {
      char c = peekc (p, 0);
      if (c == ' ' || c == '\t')
        p->pos++;
      else if (c == '\\' && peekc (p, 1) == '\n')
        p->pos += 2;
      else if (c == '#')
        {
          while (p->pos < p->len && p->s[p->pos] != '\n')
            p->pos++;
        }
      else
        break;
    }
  if (p->pos >= p->len)
    {
      t->kind = TOK_EOF;
      snprintf (t->op, sizeof t->op, "end of line");
      return 0;
    }

  char c = p->s[p->pos], n = peekc (p, 1), n2 = peekc (p, 2);
  size_t digits = 0;
  while (p->pos + digits < p->len
         && isdigit ((unsigned char) p->s[p->pos + digits]))
    digits++;
  if (digits > 0 && digits < 4
      && (peekc (p, digits) == '<' || peekc (p, digits) == '>'))
    {
      memcpy (t->op, p->s + p->pos, digits);
      p->pos += digits;
      c = p->s[p->pos], n = peekc (p, 1), n2 = peekc (p, 2);
    }
  else
    digits = 0;

  const char *op = NULL;
  enum tok_kind kind = TOK_REDIR;
  if (c == '<')
    op = n == '<'   ? (n2 == '-'   ? "<<-"
                       : n2 == '<' ? "<<<"
                                   : "<<")
         : n == '&' ? "<&"
         : n == '>' ? "<>"
                    : "<";
  else if (c == '>')
    op = n == '>' ? ">>" : n == '|' ? ">|" : n == '&' ? ">&" : ">";
  else if (c == '&' && n == '>')
    op = n2 == '>' ? "&>>" : "&>";
  else if (c == '\n')
    {
      p->pos++;
      t->kind = TOK_NEWLINE;
      snprintf (t->op, sizeof t->op, "newline");
      return p->n_hd > 0 ? read_heredocs (p) : 0;
    }
  else if (c == '&')
    kind = n == '&' ? TOK_AND_IF : TOK_AMP, op = n == '&' ? "&&" : "&";
  else if (c == '|')
    kind = n == '|' ? TOK_OR_IF : TOK_PIPE, op = n == '|'   ? "||"
                                                 : n == '&' ? "|&"
                                                            : "|";
  else if (c == ';')
    {
      if (n == '&' || (n == ';' && n2 == '&'))
        return fail (p, "it uses ;& or ;;&, which sh does not read");
      kind = n == ';' ? TOK_DSEMI : TOK_SEMI, op = n == ';' ? ";;" : ";";
    }
  else if (c == '(')
    kind = TOK_LPAREN, op = "(";
  else if (c == ')')
    kind = TOK_RPAREN, op = ")";

  if (op != NULL)
    {
      p->pos += strlen (op);
      t->kind = kind;
      snprintf (t->op + digits, sizeof t->op - digits, "%s", op);
      return 0;
    }
  t->kind = TOK_WORD;
  snprintf (t->op, sizeof t->op, "word");
  return read_word (p, &t->w);
}

/* The next token, lexed once.  */
static int
peek (struct parser *p, struct token **t)
{
  if (!p->have_tok)
    {
      struct token tok;
      if (lex (p, &tok) < 0)
        return -1;
      p->tok = tok;
      p->have_tok = true;
    }
  *t = &p->tok;
  return 0;
}

/* Drop the peeked token (its word, if any, is freed).  */
static void
consume (struct parser *p)
{
  token_free (&p->tok);
  p->have_tok = false;
}

/* Take the peeked word out of the parser; the caller owns it.  */
static struct word
take_word (struct parser *p)
{
  struct word w = p->tok.w;
  p->tok.w.text = NULL;
  p->tok.kind = TOK_EOF;
  p->have_tok = false;
  return w;
}

static const char *
tok_name (const struct token *t)
{
  return t->kind == TOK_WORD ? t->w.text : t->op;
}

static int
skip_newlines (struct parser *p)
{
  struct token *t;
  for (;;)
    {
      if (peek (p, &t) < 0)
        return -1;
      if (t->kind != TOK_NEWLINE)
        return 0;
      consume (p);
    }
}

/* Words that close a list rather than start a command.  */
static bool
closes_list (const struct token *t)
{
  static const char *const closers[]
      = { "then", "else", "elif", "fi", "do", "done", "esac", "}", NULL };
  if (t->kind == TOK_EOF || t->kind == TOK_RPAREN || t->kind == TOK_DSEMI)
    return true;
  if (t->kind != TOK_WORD)
    return false;
  for (size_t i = 0; closers[i]; i++)
    if (word_is (&t->w, closers[i]))
      return true;
  return false;
}

/* Expect a reserved word next.  */
static int
expect_word (struct parser *p, const char *what)
{
  struct token *t;
  if (peek (p, &t) < 0)
    return -1;
  if (t->kind != TOK_WORD || !word_is (&t->w, what))
    {
      if (t->kind == TOK_EOF)
        return fail (p, "it ends where %s was expected", what);
      return fail (p, "unexpected %s where %s was expected", tok_name (t),
                   what);
    }
  consume (p);
  return 0;
}

/* A growable NULL-terminated list of strings.  */
struct strv
{
  char **v;
  size_t n, cap;
};

static void
strv_push (struct strv *sv, char *s)
{
  if (sv->n + 2 > sv->cap)
    {
      sv->cap = sv->cap ? sv->cap * 2 : 4;
      sv->v = xrealloc (sv->v, sv->cap * sizeof *sv->v);
    }
  sv->v[sv->n++] = s;
  sv->v[sv->n] = NULL;
}

static void
strv_free (struct strv *sv)
{
  for (size_t i = 0; i < sv->n; i++)
    free (sv->v[i]);
  free (sv->v);
  memset (sv, 0, sizeof *sv);
}

/* A simple command being built.  */
struct simple
{
  struct strv argv, assign, redirs;
  bool *dyn; /* per word of argv */
  size_t dyn_cap;
  bool dynamic;
  bool writes; /* a redirection writes a file */
};

static void
simple_free (struct simple *sc)
{
  strv_free (&sc->argv);
  strv_free (&sc->assign);
  strv_free (&sc->redirs);
  free (sc->dyn);
}

/* Read a redirection's target; a here-document's body is pending until the
 * next newline.  */
static int
parse_redirect (struct parser *p, struct simple *sc)
{
  char op[16];
  struct token *t;
  struct word w;

  memcpy (op, p->tok.op, sizeof op);
  consume (p);
  if (peek (p, &t) < 0)
    return -1;
  if (t->kind != TOK_WORD)
    return fail (p, "the redirection %s has no target", op);
  w = take_word (p);
  const char *bare = op + strspn (op, "0123456789");
  if (strcmp (bare, "<<") == 0 || strcmp (bare, "<<-") == 0)
    {
      if (w.expansion)
        {
          fail (p, "a here-document delimiter uses an expansion");
          word_free (&w);
          return -1;
        }
      p->hd = xrealloc (p->hd, (p->n_hd + 1) * sizeof *p->hd);
      p->hd[p->n_hd++]
          = (struct heredoc){ xstrdup (w.text), w.quoted, bare[2] == '-' };
    }
  else if (w.expansion || w.glob)
    sc->dynamic = true;
  bool dup_fd = (strcmp (bare, ">&") == 0 || strcmp (bare, "<&") == 0)
                && (strcmp (w.text, "-") == 0
                    || strspn (w.text, "0123456789") == strlen (w.text));
  bool writing = bare[0] == '&' || strcmp (bare, "<>") == 0
                 || (bare[0] == '>' && !dup_fd);
  if (writing && strcmp (w.text, "/dev/null") != 0)
    sc->writes = true;
  strv_push (&sc->redirs, xasprintf ("%s%s", op, w.text));
  word_free (&w);
  return 0;
}

/* Append a finished simple command to the list.  */
static int
push_command (struct parser *p, struct simple *sc, size_t program,
              bool transparent)
{
  struct reader *r = p->r;
  struct cmdline *cl = r->cl;
  if (cl->n >= CMDLINE_MAX_COMMANDS)
    return fail (p, "it holds more than %d commands", CMDLINE_MAX_COMMANDS);
  if (cl->n == r->cap)
    {
      r->cap = r->cap ? r->cap * 2 : 8;
      cl->cmds = xrealloc (cl->cmds, r->cap * sizeof *cl->cmds);
    }
  struct cmdline_command *c = &cl->cmds[cl->n++];
  memset (c, 0, sizeof *c);
  if (sc->argv.v == NULL)
    strv_push (&sc->argv, NULL), sc->argv.n = 0;
  if (sc->assign.v == NULL)
    strv_push (&sc->assign, NULL), sc->assign.n = 0;
  if (sc->redirs.v == NULL)
    strv_push (&sc->redirs, NULL), sc->redirs.n = 0;
  c->argv = sc->argv.v, c->argc = sc->argv.n;
  c->assign = sc->assign.v, c->n_assign = sc->assign.n;
  c->redirs = sc->redirs.v, c->n_redirs = sc->redirs.n;
  c->program = program;
  c->dynamic = sc->dynamic;
  c->transparent = transparent;
  memset (&sc->argv, 0, sizeof sc->argv);
  memset (&sc->assign, 0, sizeof sc->assign);
  memset (&sc->redirs, 0, sizeof sc->redirs);
  return 0;
}

static const char *
base_name (const char *path)
{
  const char *slash = strrchr (path, '/');
  return slash ? slash + 1 : path;
}

static bool
in_list (const char *s, const char *const *list)
{
  for (size_t i = 0; list[i]; i++)
    if (strcmp (s, list[i]) == 0)
      return true;
  return false;
}

/* Programs that run the program named by a later word.  opts_arg lists
 * their options that take the next word as their argument; operands is how
 * many operands come before the program (timeout's duration).  */
struct wrapper
{
  const char *name;
  const char *opts_arg;
  const char *const *long_arg; /* long options taking the next word */
  int operands;
};

static const char *const sudo_long[]
    = { "--user", "--group", "--host",       "--prompt",     "--chdir",
        "--role", "--type",  "--other-user", "--close-from", NULL };
static const char *const env_long[] = { "--unset", "--chdir", NULL };
static const char *const timeout_long[] = { "--signal", "--kill-after", NULL };
static const char *const nice_long[] = { "--adjustment", NULL };
static const char *const xargs_long[]
    = { "--arg-file",  "--delimiter", "--max-args", "--max-procs",
        "--max-lines", "--max-chars", NULL };
static const char *const ionice_long[]
    = { "--class", "--classdata", "--pid", "--pgid", "--uid", NULL };
static const char *const stdbuf_long[]
    = { "--input", "--output", "--error", NULL };
static const char *const none_long[] = { NULL };

static const struct wrapper wrappers[] = {
  { "command", "", none_long, 0 },       { "builtin", "", none_long, 0 },
  { "exec", "a", none_long, 0 },         { "nohup", "", none_long, 0 },
  { "time", "fo", none_long, 0 },        { "nice", "n", nice_long, 0 },
  { "env", "uCP", env_long, 0 },         { "sudo", "ugChpDrtUT", sudo_long, 0 },
  { "doas", "uC", none_long, 0 },        { "timeout", "sk", timeout_long, 1 },
  { "setsid", "", none_long, 0 },        { "stdbuf", "ioe", stdbuf_long, 0 },
  { "ionice", "cnpPu", ionice_long, 0 }, { "xargs", "adEILnPs", xargs_long, 0 },
  { "chrt", "", none_long, 1 },          { "unbuffer", "", none_long, 0 },
  { "caffeinate", "tw", none_long, 0 },
};

static const char *const shells[] = { "sh",   "bash", "dash", "zsh",  "ksh",
                                      "mksh", "ash",  "yash", "posh", NULL };

/* Variables whose value the shell itself runs or reads commands from.  */
static const char *const evaluated_vars[]
    = { "BASH_ENV", "ENV", "PS1", "PS2", "PS4", "PROMPT_COMMAND", NULL };

static int check_assignment_name (struct parser *p, const char *a);

static const struct wrapper *
find_wrapper (const char *name)
{
  for (size_t i = 0; i < sizeof wrappers / sizeof wrappers[0]; i++)
    if (strcmp (name, wrappers[i].name) == 0)
      return &wrappers[i];
  return NULL;
}

/* Index of the program a wrapper at argv[i] runs (argc when none).  */
static size_t
skip_wrapper (struct parser *p, const struct wrapper *wr, char **argv,
              size_t argc, size_t i, int *ret)
{
  int operands = wr->operands;
  bool is_env = strcmp (wr->name, "env") == 0;
  i++;
  while (i < argc)
    {
      const char *a = argv[i];
      if (strcmp (a, "--") == 0)
        {
          i++;
          break;
        }
      if (a[0] == '-' && a[1] != '\0')
        {
          if (is_env
              && (strcmp (a, "-S") == 0 || strncmp (a, "--split", 7) == 0
                  || (a[1] != '-' && strchr (a, 'S') != NULL)))
            {
              *ret = fail (p, "env -S splits its text into a command");
              return argc;
            }
          if ((a[1] != '-' && a[2] == '\0' && strchr (wr->opts_arg, a[1]))
              || in_list (a, wr->long_arg))
            i++;
          i++;
          continue;
        }
      if (is_env && strchr (a, '=') != NULL)
        {
          if (check_assignment_name (p, a) < 0)
            {
              *ret = -1;
              return argc;
            }
          i++;
          continue;
        }
      if (operands > 0)
        {
          operands--;
          i++;
          continue;
        }
      break;
    }
  return i;
}

static int check_program (struct parser *p, struct simple *sc, size_t j,
                          size_t end, bool *transparent);

/* A shell program at argv[j]: read what it is given with -c.  */
static int
check_shell (struct parser *p, struct simple *sc, size_t j, size_t end,
             bool *read_text_out)
{
  char **argv = sc->argv.v;
  bool has_c = false;
  size_t i = j + 1;
  while (i < end)
    {
      const char *a = argv[i];
      if (strcmp (a, "--") == 0 || strcmp (a, "-") == 0)
        {
          i++;
          break;
        }
      if (a[0] == '-' && a[1] == '-')
        {
          if (strcmp (a, "--version") == 0 || strcmp (a, "--help") == 0)
            return 0;
          if (strcmp (a, "--rcfile") == 0 || strcmp (a, "--init-file") == 0)
            i++;
          i++;
          continue;
        }
      if ((a[0] == '-' || a[0] == '+') && a[1] != '\0')
        {
          for (const char *o = a + 1; *o; o++)
            if (*o == 'c')
              has_c = true;
            else if (*o == 's' || *o == 'i')
              return fail (p, "it runs a shell on commands from its input");
            else if (*o == 'o' || *o == 'O')
              i++;
          i++;
          continue;
        }
      break;
    }
  if (has_c)
    {
      if (i >= end)
        return 0;
      if (sc->dyn[i])
        return fail (p, "it runs a shell on text that is not written out");
      *read_text_out = true;
      return read_nested (p, argv[i], strlen (argv[i]));
    }
  if (i >= end)
    return fail (p, "it runs a shell on commands from its input");
  if (sc->dyn[i])
    return fail (p, "it runs a script named by an expansion");
  return 0;
}

/* eval: literal operands are joined and read as a line.  */
static int
check_eval (struct parser *p, struct simple *sc, size_t j, size_t end)
{
  struct buf text = BUF_INIT;
  int ret;
  for (size_t i = j + 1; i < end; i++)
    {
      if (sc->dyn[i])
        {
          buf_free (&text);
          return fail (p, "eval runs text that is not written out");
        }
      if (i > j + 1)
        buf_putc (&text, ' ');
      buf_puts (&text, sc->argv.v[i]);
    }
  ret = read_nested (p, text.data ? text.data : "", text.len);
  buf_free (&text);
  return ret;
}

/* trap ACTION SIGNAL...: the action runs later, so it is read now.  */
static int
check_trap (struct parser *p, struct simple *sc, size_t j, size_t end)
{
  size_t i = j + 1;
  if (i < end && strcmp (sc->argv.v[i], "--") == 0)
    i++;
  if (i + 1 >= end)
    return 0; /* trap, trap -p, trap -l, trap SIG: nothing is set */
  const char *a = sc->argv.v[i];
  if (sc->dyn[i])
    return fail (p, "trap sets an action that is not written out");
  if (strcmp (a, "-") == 0 || strspn (a, "0123456789") == strlen (a))
    return 0;
  return read_nested (p, a, strlen (a));
}

/* NAME=... operands of export and its kin must not set a variable the
 * shell runs.  */
static int
check_assignment_name (struct parser *p, const char *a)
{
  if (strncmp (a, "BASH_FUNC_", 10) == 0)
    return fail (p, "it defines a shell function through the environment");
  for (size_t i = 0; evaluated_vars[i]; i++)
    {
      size_t n = strlen (evaluated_vars[i]);
      if (strncmp (a, evaluated_vars[i], n) == 0 && a[n] == '=')
        return fail (p, "it sets %s, whose value the shell runs",
                     evaluated_vars[i]);
    }
  return 0;
}

static const char *const find_exec[]
    = { "-exec", "-execdir", "-ok", "-okdir", NULL };

/* find ... -exec PROGRAM ... ; : each program it runs is checked.  */
static int
check_find (struct parser *p, struct simple *sc, size_t j, size_t end,
            size_t *first)
{
  for (size_t i = j + 1; i < end; i++)
    {
      const char *a = sc->argv.v[i];
      if (!in_list (a, find_exec))
        continue;
      size_t k = i + 1, stop = k;
      while (stop < end && strcmp (sc->argv.v[stop], ";") != 0
             && strcmp (sc->argv.v[stop], "+") != 0)
        stop++;
      if (k < stop)
        {
          bool unused = false;
          if (*first == 0)
            *first = k;
          if (check_program (p, sc, k, stop, &unused) < 0)
            return -1;
        }
      i = stop;
    }
  return 0;
}

/* Check the program at argv[j] (words up to end), following wrappers; the
 * commands a shell -c, eval or trap would run are read.  *transparent is
 * set when argv[j] is a shell -c or eval whose text was read.  */
static int
check_program (struct parser *p, struct simple *sc, size_t j, size_t end,
               bool *transparent)
{
  char **argv = sc->argv.v;
  const struct wrapper *wr;
  size_t start = j;
  int ret = 0;

  for (int hops = 0; j < end; hops++)
    {
      if (sc->dyn[j])
        return fail (p, "the program name comes from an expansion: %s",
                     argv[j]);
      const char *name = base_name (argv[j]);
      if ((wr = find_wrapper (name)) == NULL)
        break;
      if (hops >= 16)
        return fail (p, "it wraps a program in more than 16 others");
      j = skip_wrapper (p, wr, argv, end, j, &ret);
      if (ret < 0)
        return -1;
    }
  if (j >= end)
    return 0;

  const char *name = base_name (argv[j]);
  bool read_it = false;
  if (in_list (name, shells))
    {
      if (check_shell (p, sc, j, end, &read_it) < 0)
        return -1;
      *transparent = read_it && j == start;
    }
  else if (strcmp (argv[j], "eval") == 0)
    {
      if (check_eval (p, sc, j, end) < 0)
        return -1;
      *transparent = j == start;
    }
  else if (strcmp (argv[j], "trap") == 0)
    return check_trap (p, sc, j, end);
  else if (strcmp (argv[j], ".") == 0 || strcmp (argv[j], "source") == 0)
    {
      for (size_t i = j + 1; i < end; i++)
        if (sc->dyn[i])
          return fail (p, "it sources a file named by an expansion");
    }
  else if (strcmp (argv[j], "alias") == 0)
    return fail (p, "it defines an alias, which changes what a later "
                    "command name runs");
  else if ((strcmp (argv[j], "hash") == 0 && j + 1 < end
            && argv[j + 1][0] == '-' && strchr (argv[j + 1], 'p') != NULL)
           || (strcmp (argv[j], "enable") == 0 && j + 1 < end))
    return fail (p,
                 "it uses %s, which changes what a later command name "
                 "runs",
                 argv[j]);
  else if (strcmp (argv[j], "export") == 0 || strcmp (argv[j], "readonly") == 0
           || strcmp (argv[j], "local") == 0 || strcmp (argv[j], "declare") == 0
           || strcmp (argv[j], "typeset") == 0)
    {
      for (size_t i = j + 1; i < end; i++)
        if (check_assignment_name (p, argv[i]) < 0)
          return -1;
    }
  return 0;
}

/* Whether a word is a duration GNU or BSD sleep takes, and not zero.  */
static bool
is_duration (const char *s, bool *nonzero)
{
  if (strcmp (s, "inf") == 0 || strcmp (s, "infinity") == 0)
    {
      *nonzero = true;
      return true;
    }
  size_t digits = 0, dots = 0;
  const char *c = s;
  for (; *c && (isdigit ((unsigned char) *c) || *c == '.'); c++)
    {
      if (*c == '.')
        dots++;
      else
        {
          digits++;
          if (*c != '0')
            *nonzero = true;
        }
    }
  if (digits == 0 || dots > 1)
    return false;
  if (*c != '\0' && strchr ("smhd", *c) != NULL)
    c++;
  return *c == '\0';
}

/* A simple command that is `sleep` with literal durations.  */
static bool
simple_is_sleep (const struct simple *sc)
{
  bool nonzero = false;
  if (sc->argv.n < 2 || strcmp (base_name (sc->argv.v[0]), "sleep") != 0
      || sc->dyn[0])
    return false;
  for (size_t i = 1; i < sc->argv.n; i++)
    if (sc->dyn[i] || !is_duration (sc->argv.v[i], &nonzero))
      return false;
  return nonzero;
}

/* Finish a simple command: check its program and append it.  */
static int
finish_simple (struct parser *p, struct simple *sc)
{
  bool transparent = false;
  size_t program = 0;

  for (size_t i = 0; i < sc->assign.n; i++)
    if (check_assignment_name (p, sc->assign.v[i]) < 0)
      return -1;
  if (sc->argv.n > 0)
    {
      if (check_program (p, sc, 0, sc->argv.n, &transparent) < 0)
        return -1;
      /* Where the wrapped program stands, for deny rules.  */
      size_t j = 0;
      int ret = 0;
      const struct wrapper *wr;
      for (int hops = 0; j < sc->argv.n && hops <= 16; hops++)
        {
          if ((wr = find_wrapper (base_name (sc->argv.v[j]))) == NULL)
            break;
          j = skip_wrapper (p, wr, sc->argv.v, sc->argv.n, j, &ret);
        }
      if (j > 0)
        program = j < sc->argv.n ? j : sc->argv.n - 1;
      if (strcmp (base_name (sc->argv.v[program]), "find") == 0
          && check_find (p, sc, program, sc->argv.n, &program) < 0)
        return -1;
    }
  if (sc->assign.n > 0 || sc->writes)
    transparent = false;
  return push_command (p, sc, program, transparent);
}

/* Read a simple command starting at the peeked token.  */
static int
parse_simple (struct parser *p, struct shape *sh)
{
  struct simple sc = { 0 };
  struct token *t;
  int ret = -1;

  for (;;)
    {
      if (peek (p, &t) < 0)
        goto out;
      if (t->kind == TOK_REDIR)
        {
          if (parse_redirect (p, &sc) < 0)
            goto out;
          continue;
        }
      if (t->kind != TOK_WORD)
        break;
      struct word w = take_word (p);
      if (sc.argv.n == 0 && w.assignment)
        {
          if (w.expansion)
            sc.dynamic = true;
          strv_push (&sc.assign, w.text);
          continue;
        }
      if (sc.argv.n + 1 > sc.dyn_cap)
        {
          sc.dyn_cap = sc.dyn_cap ? sc.dyn_cap * 2 : 8;
          sc.dyn = xrealloc (sc.dyn, sc.dyn_cap * sizeof *sc.dyn);
        }
      sc.dyn[sc.argv.n] = w.expansion || w.glob;
      if (w.expansion || w.glob)
        sc.dynamic = true;
      strv_push (&sc.argv, w.text);
      if (sc.argv.n == 1)
        {
          if (peek (p, &t) < 0)
            goto out;
          if (t->kind == TOK_LPAREN)
            {
              fail (p, "it defines a shell function");
              goto out;
            }
        }
    }
  if (sc.argv.n == 0 && sc.assign.n == 0 && sc.redirs.n == 0)
    {
      if (t->kind == TOK_EOF)
        fail (p, "it ends where a command was expected");
      else
        fail (p, "unexpected %s", tok_name (t));
      goto out;
    }
  sh->sleep = sc.dyn != NULL && simple_is_sleep (&sc);
  {
    size_t at = p->r->cl->n;
    if (finish_simple (p, &sc) < 0)
      goto out;
    /* Commands a shell -c or eval reads were appended while checking this
     * one; put this one before them, after its own $( ) commands.  */
    struct cmdline *cl = p->r->cl;
    if (cl->n - 1 > at)
      {
        struct cmdline_command me = cl->cmds[cl->n - 1];
        memmove (&cl->cmds[at + 1], &cl->cmds[at],
                 (cl->n - 1 - at) * sizeof *cl->cmds);
        cl->cmds[at] = me;
      }
  }
  ret = 0;
out:
  simple_free (&sc);
  return ret;
}

/* Redirections after a compound command.  */
static int
parse_compound_redirects (struct parser *p)
{
  struct simple sc = { 0 };
  struct token *t;
  int ret = 0;
  for (;;)
    {
      if ((ret = peek (p, &t)) < 0)
        break;
      if (t->kind != TOK_REDIR)
        break;
      if ((ret = parse_redirect (p, &sc)) < 0)
        break;
    }
  simple_free (&sc);
  return ret;
}

/* A list that must end at the reserved word `end`.  */
static int
parse_body (struct parser *p, const char *end)
{
  if (parse_list (p, false) < 0)
    return -1;
  return expect_word (p, end);
}

static int
parse_if (struct parser *p)
{
  struct token *t;
  for (;;)
    {
      if (parse_body (p, "then") < 0 || parse_list (p, false) < 0)
        return -1;
      if (peek (p, &t) < 0)
        return -1;
      if (t->kind == TOK_WORD && word_is (&t->w, "elif"))
        {
          consume (p);
          continue;
        }
      if (t->kind == TOK_WORD && word_is (&t->w, "else"))
        {
          consume (p);
          if (parse_list (p, false) < 0)
            return -1;
        }
      return expect_word (p, "fi");
    }
}

static int
parse_for (struct parser *p)
{
  struct token *t;
  if (peek (p, &t) < 0)
    return -1;
  if (t->kind != TOK_WORD || t->w.quoted || t->w.expansion
      || !is_name_start (t->w.text[0]))
    return fail (p, "for is not followed by a variable name");
  consume (p);
  if (skip_newlines (p) < 0 || peek (p, &t) < 0)
    return -1;
  if (t->kind == TOK_WORD && word_is (&t->w, "in"))
    {
      consume (p);
      for (;;)
        {
          if (peek (p, &t) < 0)
            return -1;
          if (t->kind != TOK_WORD)
            break;
          consume (p);
        }
      if (t->kind != TOK_SEMI && t->kind != TOK_NEWLINE)
        return fail (p, "unexpected %s in a for list", tok_name (t));
      consume (p);
    }
  else if (t->kind == TOK_SEMI)
    consume (p);
  if (skip_newlines (p) < 0 || expect_word (p, "do") < 0)
    return -1;
  return parse_body (p, "done");
}

static int
parse_case (struct parser *p)
{
  struct token *t;
  if (peek (p, &t) < 0)
    return -1;
  if (t->kind != TOK_WORD)
    return fail (p, "case is not followed by a word");
  consume (p);
  if (skip_newlines (p) < 0 || expect_word (p, "in") < 0)
    return -1;
  for (;;)
    {
      if (skip_newlines (p) < 0 || peek (p, &t) < 0)
        return -1;
      if (t->kind == TOK_WORD && word_is (&t->w, "esac"))
        {
          consume (p);
          return 0;
        }
      if (t->kind == TOK_LPAREN)
        {
          consume (p);
          if (peek (p, &t) < 0)
            return -1;
        }
      for (;;)
        {
          if (t->kind != TOK_WORD)
            return fail (p, "unexpected %s in a case pattern", tok_name (t));
          consume (p);
          if (peek (p, &t) < 0)
            return -1;
          if (t->kind != TOK_PIPE)
            break;
          consume (p);
          if (peek (p, &t) < 0)
            return -1;
        }
      if (t->kind != TOK_RPAREN)
        return fail (p, "unexpected %s in a case pattern", tok_name (t));
      consume (p);
      if (parse_list (p, false) < 0 || peek (p, &t) < 0)
        return -1;
      if (t->kind == TOK_DSEMI)
        {
          consume (p);
          continue;
        }
      if (t->kind == TOK_WORD && word_is (&t->w, "esac"))
        {
          consume (p);
          return 0;
        }
      if (t->kind == TOK_EOF)
        return fail (p, "it ends where esac was expected");
      return fail (p, "unexpected %s in a case", tok_name (t));
    }
}

/* One command: simple, or compound with its redirections.  */
static int
parse_command (struct parser *p, struct shape *sh)
{
  struct token *t;
  int ret;

  sh->sleep = false;
  if (peek (p, &t) < 0)
    return -1;
  if (t->kind == TOK_LPAREN)
    {
      consume (p);
      if (enter (p) < 0 || parse_list (p, false) < 0 || peek (p, &t) < 0)
        return -1;
      if (t->kind != TOK_RPAREN)
        return t->kind == TOK_EOF ? fail (p, "a ( is not closed")
                                  : fail (p, "unexpected %s", tok_name (t));
      consume (p);
      p->depth--;
      return parse_compound_redirects (p);
    }
  if (t->kind != TOK_WORD || t->w.quoted || t->w.expansion)
    return parse_simple (p, sh);

  const char *w = t->w.text;
  if (strcmp (w, "{") == 0 || strcmp (w, "if") == 0 || strcmp (w, "while") == 0
      || strcmp (w, "until") == 0 || strcmp (w, "for") == 0
      || strcmp (w, "case") == 0)
    {
      char kw[8];
      snprintf (kw, sizeof kw, "%s", w);
      consume (p);
      if (enter (p) < 0)
        return -1;
      if (strcmp (kw, "{") == 0)
        ret = parse_body (p, "}");
      else if (strcmp (kw, "if") == 0)
        ret = parse_if (p);
      else if (strcmp (kw, "for") == 0)
        ret = parse_for (p);
      else if (strcmp (kw, "case") == 0)
        ret = parse_case (p);
      else
        ret = parse_body (p, "do") < 0 ? -1 : parse_body (p, "done");
      if (ret < 0)
        return -1;
      p->depth--;
      return parse_compound_redirects (p);
    }
  if (strcmp (w, "function") == 0)
    return fail (p, "it defines a shell function");
  if (strcmp (w, "[[") == 0 || strcmp (w, "select") == 0
      || strcmp (w, "coproc") == 0)
    return fail (p, "it uses %s, which sh does not read", w);
  if (closes_list (t) || strcmp (w, "!") == 0 || strcmp (w, "in") == 0)
    return fail (p, "unexpected %s", w);
  return parse_simple (p, sh);
}

/* command [| command]..., optionally negated.  */
static int
parse_pipeline (struct parser *p, struct shape *sh)
{
  struct token *t;
  struct shape one;
  size_t n = 0;

  if (peek (p, &t) < 0)
    return -1;
  if (t->kind == TOK_WORD && word_is (&t->w, "!"))
    consume (p);
  for (;;)
    {
      if (parse_command (p, &one) < 0)
        return -1;
      if (n++ == 0)
        sh->sleep = one.sleep;
      if (peek (p, &t) < 0)
        return -1;
      if (t->kind != TOK_PIPE)
        break;
      sh->sleep = false;
      consume (p);
      if (skip_newlines (p) < 0)
        return -1;
    }
  return 0;
}

/* pipeline [&& or || pipeline]...  */
static int
parse_and_or (struct parser *p, struct shape *sh)
{
  struct token *t;
  struct shape one;
  bool first = true;

  sh->op = TOK_EOF;
  for (;;)
    {
      if (parse_pipeline (p, first ? sh : &one) < 0)
        return -1;
      if (peek (p, &t) < 0)
        return -1;
      if (t->kind != TOK_AND_IF && t->kind != TOK_OR_IF)
        return 0;
      if (first)
        sh->op = t->kind;
      first = false;
      consume (p);
      if (skip_newlines (p) < 0)
        return -1;
    }
}

/* A list of and-or lists separated by ; & or newlines, up to a token that
 * closes it (left peeked).  At the top of the line itself, the sleep rule
 * is decided here.  */
static int
parse_list (struct parser *p, bool top)
{
  struct token *t;
  bool first = true;
  struct shape first_shape = { 0 };
  enum tok_kind first_end = TOK_EOF;
  bool more = false;

  if (skip_newlines (p) < 0)
    return -1;
  for (;;)
    {
      struct shape sh;
      size_t from = p->r->cl->n;
      if (peek (p, &t) < 0)
        return -1;
      if (closes_list (t))
        break;
      if (!first)
        more = true;
      if (parse_and_or (p, &sh) < 0 || peek (p, &t) < 0)
        return -1;
      if (first)
        first_shape = sh, first_end = t->kind;
      first = false;
      if (t->kind == TOK_AMP)
        for (size_t i = from; i < p->r->cl->n; i++)
          p->r->cl->cmds[i].background = true;
      if (t->kind != TOK_SEMI && t->kind != TOK_AMP && t->kind != TOK_NEWLINE)
        break;
      consume (p);
      if (skip_newlines (p) < 0)
        return -1;
    }
  if (top && first_shape.sleep && first_end != TOK_AMP)
    p->r->cl->begins_with_sleep
        = first_shape.op == TOK_AND_IF
          || ((first_end == TOK_SEMI || first_end == TOK_NEWLINE) && more);
  return 0;
}

/* Free what a parser holds.  */
static void
parser_release (struct parser *p)
{
  if (p->have_tok)
    token_free (&p->tok);
  p->have_tok = false;
  for (size_t i = 0; i < p->n_hd; i++)
    free (p->hd[i].delim);
  free (p->hd);
  p->hd = NULL;
  p->n_hd = 0;
}

/* Read a whole text (the line, or one nested in it) to its end.  */
static int
read_text (struct reader *r, unsigned depth, const char *s, size_t len)
{
  struct parser p = { .r = r, .s = s, .len = len, .depth = depth };
  struct token *t;
  int ret = -1;

  if (parse_list (&p, depth == 0) < 0 || peek (&p, &t) < 0)
    goto out;
  if (t->kind != TOK_EOF)
    {
      fail (&p, "unexpected %s", tok_name (t));
      goto out;
    }
  if (p.n_hd > 0)
    {
      fail (&p, "the here-document ended by %s has no end line", p.hd[0].delim);
      goto out;
    }
  ret = 0;
out:
  parser_release (&p);
  return ret;
}

int
cmdline_read (const char *line, size_t len, struct cmdline **out,
              struct cr_error **err)
{
  struct reader r = { 0 };
  const char *why = NULL;

  *out = NULL;
  if (len > CMDLINE_MAX_LEN)
    return cr_error_set (err, 0,
                         "cannot read this command line: it is "
                         "longer than %zu bytes",
                         CMDLINE_MAX_LEN);
  if (memchr (line, '\0', len) != NULL)
    why = "it contains a NUL byte";
  r.cl = xcalloc (1, sizeof *r.cl);
  if (why == NULL && read_text (&r, 0, line, len) == 0)
    {
      *out = r.cl;
      return 0;
    }
  cr_error_set (err, 0, "cannot read this command line: %s",
                why        ? why
                : r.reason ? r.reason
                           : "it could not be read");
  free (r.reason);
  cmdline_free (r.cl);
  return -1;
}

void
cmdline_free (struct cmdline *cl)
{
  if (cl == NULL)
    return;
  for (size_t i = 0; i < cl->n; i++)
    {
      struct cmdline_command *c = &cl->cmds[i];
      for (size_t k = 0; k < c->argc; k++)
        free (c->argv[k]);
      for (size_t k = 0; k < c->n_assign; k++)
        free (c->assign[k]);
      for (size_t k = 0; k < c->n_redirs; k++)
        free (c->redirs[k]);
      free (c->argv);
      free (c->assign);
      free (c->redirs);
    }
  free (cl->cmds);
  free (cl);
}

bool
cmdline_begins_with_sleep (const struct cmdline *cl)
{
  return cl != NULL && cl->begins_with_sleep;
}

static void
join (struct buf *b, char *const *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      if (b->len > 0)
        buf_putc (b, ' ');
      buf_puts (b, v[i]);
    }
}

char *
cmdline_command_text (const struct cmdline_command *c)
{
  struct buf b = BUF_INIT;
  join (&b, c->argv, c->argc);
  return buf_steal (&b, NULL);
}

/* Whether a redirection as read writes a file.  */
static bool
redir_writes (const char *r)
{
  const char *op = r + strspn (r, "0123456789");
  size_t oplen = strspn (op, "<>&|-");
  const char *target = op + oplen;
  if (strncmp (op, "<<", 2) == 0 || strcmp (target, "/dev/null") == 0)
    return false;
  if (strncmp (op, ">&", 2) == 0 || strncmp (op, "<&", 2) == 0)
    {
      target = op + 2;
      if (strcmp (target, "-") == 0
          || (*target && strspn (target, "0123456789") == strlen (target)))
        return false;
      return op[0] == '>';
    }
  return op[0] == '>' || op[0] == '&' || strncmp (op, "<>", 2) == 0;
}

char *
cmdline_command_full_text (const struct cmdline_command *c)
{
  struct buf b = BUF_INIT;
  join (&b, c->assign, c->n_assign);
  join (&b, c->argv, c->argc);
  for (size_t i = 0; i < c->n_redirs; i++)
    if (redir_writes (c->redirs[i]))
      join (&b, &c->redirs[i], 1);
  return buf_steal (&b, NULL);
}
