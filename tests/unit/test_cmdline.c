/* Unit tests for core/cmdline.c.  */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/cmdline.h"

/* Read a line; expect success.  */
static struct cmdline *
read_ok (const char *line)
{
  struct cmdline *cl = NULL;
  struct cr_error *err = NULL;
  int ret = cmdline_read (line, strlen (line), &cl, &err);
  if (ret != 0)
    fail_msg ("reading %s: %s", line, err ? err->msg : "?");
  assert_null (err);
  assert_non_null (cl);
  return cl;
}

/* Read a line; expect the given refusal (after the common prefix).  */
static void
read_fails (const char *line, const char *why)
{
  struct cmdline *cl = (struct cmdline *) 1;
  struct cr_error *err = NULL;
  char want[512];
  assert_int_equal (cmdline_read (line, strlen (line), &cl, &err), -1);
  assert_null (cl);
  assert_non_null (err);
  snprintf (want, sizeof want, "cannot read this command line: %s", why);
  assert_string_equal (err->msg, want);
  cr_error_free (err);
}

/* Read a line; expect exactly these commands (full texts), in order.  */
static struct cmdline *
expect_commands (const char *line, const char *const *want, size_t n)
{
  struct cmdline *cl = read_ok (line);
  for (size_t i = 0; i < cl->n && i < n; i++)
    {
      char *t = cmdline_command_full_text (&cl->cmds[i]);
      if (strcmp (t, want[i]) != 0)
        fail_msg ("%s: command %zu is \"%s\", not \"%s\"", line, i, t, want[i]);
      free (t);
    }
  if (cl->n != n)
    fail_msg ("%s: %zu commands, not %zu", line, cl->n, n);
  return cl;
}

#define EXPECT(line, ...)                                                      \
  do                                                                           \
    {                                                                          \
      const char *const want_[] = { __VA_ARGS__ };                             \
      cmdline_free (                                                           \
          expect_commands (line, want_, sizeof want_ / sizeof want_[0]));      \
    }                                                                          \
  while (0)

static bool
sleeps (const char *line)
{
  struct cmdline *cl = read_ok (line);
  bool ret = cmdline_begins_with_sleep (cl);
  cmdline_free (cl);
  return ret;
}

static void
test_lists_and_pipelines (void **state)
{
  EXPECT ("git status", "git status");
  EXPECT ("a && b || c; d & e", "a", "b", "c", "d", "e");
  EXPECT ("a | b |& c", "a", "b", "c");
  EXPECT ("a\nb\n\nc\n", "a", "b", "c");
  EXPECT ("a &&\n b", "a", "b");
  EXPECT ("! grep -q x f && echo no", "grep -q x f", "echo no");
  EXPECT ("  \t ls   -la  ", "ls -la");
  struct cmdline *cl = read_ok ("");
  assert_int_equal (cl->n, 0);
  cmdline_free (cl);
  cl = read_ok ("# only a comment\n\n");
  assert_int_equal (cl->n, 0);
  cmdline_free (cl);
}

static void
test_quotes_and_escapes (void **state)
{
  EXPECT ("echo 'a b' \"c d\" e\\ f", "echo a b c d e f");
  EXPECT ("r''m -rf x", "rm -rf x");
  EXPECT ("\\rm x", "rm x");
  EXPECT ("echo \"a\\\"b\\$c\\\\d\\e\"", "echo a\"b$c\\d\\e");
  EXPECT ("echo 'it''s'", "echo its");
  EXPECT ("echo a\\\nb", "echo ab");
  EXPECT ("echo \"x\\\ny\"", "echo xy");
  EXPECT ("echo a#b # c", "echo a#b");
  EXPECT ("echo '$(rm -rf /)' \"\\$(rm)\"", "echo $(rm -rf /) $(rm)");
  EXPECT ("echo \"it's\" 'say \"hi\"'", "echo it's say \"hi\"");
  struct cmdline *cl = read_ok ("echo 'a*' \"?\" \\*");
  assert_false (cl->cmds[0].dynamic);
  cmdline_free (cl);
}

static void
test_unterminated (void **state)
{
  read_fails ("echo 'abc", "a single quote is not closed");
  read_fails ("echo \"abc", "a double quote is not closed");
  read_fails ("echo `date", "a backquote is not closed");
  read_fails ("echo $(date", "a $( is not closed");
  read_fails ("echo ${x", "a ${ is not closed");
  read_fails ("echo $((1+2", "a $(( is not closed");
  read_fails ("(cd x", "a ( is not closed");
  read_fails ("{ echo a;", "it ends where } was expected");
  read_fails ("if true; then echo", "it ends where fi was expected");
  read_fails ("while true; do x", "it ends where done was expected");
  read_fails ("case x in a) y", "it ends where esac was expected");
  read_fails ("a &&", "it ends where a command was expected");
  read_fails ("a |", "it ends where a command was expected");
  read_fails ("cat <<EOF\nabc",
              "the here-document ended by EOF has no end line");
  read_fails ("cat <<EOF", "the here-document ended by EOF has no end line");
}

static void
test_syntax_errors (void **state)
{
  read_fails (")", "unexpected )");
  read_fails ("; ls", "unexpected ;");
  read_fails ("ls &&& x", "unexpected &");
  read_fails ("fi", "unexpected fi");
  read_fails ("echo >", "the redirection > has no target");
  read_fails ("echo > | x", "the redirection > has no target");
  read_fails ("echo a(b", "unexpected (");
  read_fails ("case x in a) y;& esac",
              "it uses ;& or ;;&, which sh does not read");
  read_fails ("[[ -f x ]]", "it uses [[, which sh does not read");
  read_fails ("diff <(a) <(b)", "the redirection < has no target");
}

static void
test_substitutions (void **state)
{
  EXPECT ("echo $(date)", "date", "echo $(date)");
  EXPECT ("echo `date`", "date", "echo `date`");
  EXPECT ("x $(a $(b) `c`) d", "b", "c", "a $(b) `c`", "x $(a $(b) `c`) d");
  EXPECT ("echo `echo \\`date\\``", "date", "echo `date`",
          "echo `echo \\`date\\``");
  EXPECT ("echo \"$(git rev-parse HEAD)\"", "git rev-parse HEAD",
          "echo $(git rev-parse HEAD)");
  EXPECT ("echo \"`id -u`\"", "id -u", "echo `id -u`");
  EXPECT ("echo $( case x in a) echo a;; esac )", "echo a",
          "echo $( case x in a) echo a;; esac )");
  EXPECT ("echo ${X:-$(whoami)}", "whoami", "echo ${X:-$(whoami)}");
  EXPECT ("echo ${X:-'}'}", "echo ${X:-'}'}");
  EXPECT ("echo $((1 + $(id -u) * 2))", "id -u", "echo $((1 + $(id -u) * 2))");
  EXPECT ("echo $((x)) $# $? $1 $@ ${#a} $$",
          "echo $((x)) $# $? $1 $@ ${#a} $$");
  EXPECT ("X=$(pwd)", "pwd", "X=$(pwd)");
  EXPECT ("echo $", "echo $");
  EXPECT ("echo a$ b", "echo a$ b");
  read_fails ("echo $((1 ) x", "a $(( is not closed by ))");
  read_fails ("echo $'\\x41'", "it uses $'...' quoting, which sh and bash read "
                               "differently");
  read_fails ("echo $\"x\"", "it uses $\"...\" quoting, which sh and bash read "
                             "differently");
  EXPECT ("echo \"$'x'\"", "echo $'x'");
}

static void
test_dynamic (void **state)
{
  struct cmdline *cl = read_ok ("echo $HOME a");
  assert_true (cl->cmds[0].dynamic);
  assert_string_equal (cl->cmds[0].argv[1], "$HOME");
  cmdline_free (cl);
  cl = read_ok ("ls *.c");
  assert_true (cl->cmds[0].dynamic);
  cmdline_free (cl);
  cl = read_ok ("ls [ab].c");
  assert_true (cl->cmds[0].dynamic);
  cmdline_free (cl);
  cl = read_ok ("[ -f x ] && ls {}");
  assert_false (cl->cmds[0].dynamic);
  assert_false (cl->cmds[1].dynamic);
  cmdline_free (cl);
  cl = read_ok ("echo {a,b}");
  assert_true (cl->cmds[0].dynamic);
  cmdline_free (cl);
  cl = read_ok ("echo ~/x 'a b'");
  assert_false (cl->cmds[0].dynamic);
  cmdline_free (cl);
  cl = read_ok ("ls > $OUT");
  assert_true (cl->cmds[0].dynamic);
  cmdline_free (cl);
}

static void
test_dynamic_program (void **state)
{
  read_fails ("$CMD x", "the program name comes from an expansion: $CMD");
  read_fails ("\"$CMD\" x", "the program name comes from an expansion: $CMD");
  read_fails ("$(which python) x",
              "the program name comes from an expansion: $(which python)");
  read_fails ("`echo rm` -rf /",
              "the program name comes from an expansion: `echo rm`");
  read_fails ("./build* x",
              "the program name comes from an expansion: ./build*");
  read_fails ("{rm,-rf,/}",
              "the program name comes from an expansion: {rm,-rf,/}");
  read_fails ("X=1 $X", "the program name comes from an expansion: $X");
  read_fails ("sudo $CMD", "the program name comes from an expansion: $CMD");
  read_fails ("env A=1 -- $CMD",
              "the program name comes from an expansion: $CMD");
  read_fails ("timeout 5 $CMD",
              "the program name comes from an expansion: $CMD");
  read_fails ("find . -exec $CMD {} \\;",
              "the program name comes from an expansion: $CMD");
  read_fails ("for c in a b; do $c; done",
              "the program name comes from an expansion: $c");
}

static void
test_assignments (void **state)
{
  struct cmdline *cl = read_ok ("FOO=1 BAR='a b' make -j2");
  assert_int_equal (cl->n, 1);
  assert_int_equal (cl->cmds[0].n_assign, 2);
  assert_string_equal (cl->cmds[0].assign[0], "FOO=1");
  assert_string_equal (cl->cmds[0].assign[1], "BAR=a b");
  assert_null (cl->cmds[0].assign[2]);
  assert_int_equal (cl->cmds[0].argc, 2);
  assert_string_equal (cl->cmds[0].argv[0], "make");
  assert_null (cl->cmds[0].argv[2]);
  char *t = cmdline_command_text (&cl->cmds[0]);
  assert_string_equal (t, "make -j2");
  free (t);
  t = cmdline_command_full_text (&cl->cmds[0]);
  assert_string_equal (t, "FOO=1 BAR=a b make -j2");
  free (t);
  cmdline_free (cl);

  cl = read_ok ("X=1");
  assert_int_equal (cl->n, 1);
  assert_int_equal (cl->cmds[0].argc, 0);
  assert_null (cl->cmds[0].argv[0]);
  assert_int_equal (cl->cmds[0].n_assign, 1);
  cmdline_free (cl);

  EXPECT ("make X=1", "make X=1");
  cl = read_ok ("make X=1");
  assert_int_equal (cl->cmds[0].n_assign, 0);
  cmdline_free (cl);
  EXPECT ("'X'=1", "X=1");
  read_fails ("PS4='$(rm -rf ~)' sh -x -c true",
              "it sets PS4, whose value the shell runs");
  read_fails ("BASH_ENV=x.sh bash -c true",
              "it sets BASH_ENV, whose value the shell runs");
  read_fails ("export BASH_ENV=./evil", "it sets BASH_ENV, whose value the "
                                        "shell runs");
}

static void
test_redirections (void **state)
{
  struct cmdline *cl = read_ok ("make > out.log 2>&1 </dev/null 2>>err >&2 "
                                "3<>f 2>/dev/null >|g &>h");
  const struct cmdline_command *c = &cl->cmds[0];
  const char *want[]
      = { ">out.log", "2>&1",        "</dev/null", "2>>err", ">&2",
          "3<>f",     "2>/dev/null", ">|g",        "&>h" };
  assert_int_equal (c->argc, 1);
  assert_int_equal (c->n_redirs, 9);
  for (size_t i = 0; i < 9; i++)
    assert_string_equal (c->redirs[i], want[i]);
  char *t = cmdline_command_full_text (c);
  assert_string_equal (t, "make >out.log 2>>err 3<>f >|g &>h");
  free (t);
  t = cmdline_command_text (c);
  assert_string_equal (t, "make");
  free (t);
  cmdline_free (cl);
  EXPECT ("> f", ">f");
  EXPECT ("echo x 2>&1 | tee log", "echo x", "tee log");
  EXPECT ("cat < $(ls)", "ls", "cat");
  EXPECT ("read x <<< \"$(date)\"", "date", "read x");
  EXPECT ("echo x>y", "echo x >y");
  EXPECT ("echo 12>y", "echo 12>y");
  EXPECT ("echo 12345>y", "echo 12345 >y");
}

static void
test_heredocs (void **state)
{
  EXPECT ("cat <<EOF > f.txt\nhello $(whoami) `id`\n\\$(not)\nEOF\necho done",
          "whoami", "id", "cat >f.txt", "echo done");
  EXPECT ("cat <<'EOF'\n$(rm -rf /)\nEOF", "cat");
  EXPECT ("cat <<\"EOF\"\n`rm`\nEOF\n", "cat");
  EXPECT ("cat <<E\\OF\n$(rm)\nEOF", "cat");
  EXPECT ("cat <<-EOF\n\t$(date)\n\tEOF\nls", "date", "cat", "ls");
  EXPECT ("cat <<A <<B\na\nA\n$(b)\nB\nx", "b", "cat", "x");
  EXPECT ("x=$(cat <<EOF\n$(id)\nEOF\n)", "id", "cat",
          "x=$(cat <<EOF\n$(id)\nEOF\n)");
  EXPECT ("cat <<EOF | sh -c 'cat'\nhi\nEOF", "cat", "sh -c cat", "cat");
  read_fails ("cat <<$X\nx\n$X", "a here-document delimiter uses an expansion");
  read_fails ("cat <<EOF\n$(rm\nEOF", "a $( is not closed");
  read_fails ("bash <<EOF\nrm -rf /\nEOF",
              "it runs a shell on commands from its input");
}

static void
test_groups_and_compounds (void **state)
{
  EXPECT ("(cd x && make) > log", "cd x", "make");
  EXPECT ("{ a; b; } | c", "a", "b", "c");
  EXPECT ("{ a\n}", "a");
  EXPECT ("echo { }", "echo { }");
  EXPECT ("if a; then b; elif c; then d; else e; fi", "a", "b", "c", "d", "e");
  EXPECT ("if a\nthen\n b\nfi", "a", "b");
  EXPECT ("for f in *.c $(ls); do gcc -c \"$f\"; done", "ls", "gcc -c $f");
  EXPECT ("for f; do echo $f; done", "echo $f");
  EXPECT ("for f\ndo echo; done", "echo");
  EXPECT ("while read -r l; do echo \"$l\"; done < in", "read -r l", "echo $l");
  EXPECT ("until curl -s x; do sleep 1; done", "curl -s x", "sleep 1");
  EXPECT ("case $1 in (a|b) x;; *) y;; esac", "x", "y");
  EXPECT ("case $1 in\n a)\n x\n ;;\nesac", "x");
  EXPECT ("case x in esac", );
  EXPECT ("echo if then fi done", "echo if then fi done");
  EXPECT ("((x))", "x");
  read_fails ("f() { ls; }", "it defines a shell function");
  read_fails ("function f { ls; }", "it defines a shell function");
  read_fails ("for 1 in a; do x; done",
              "for is not followed by a variable name");
  read_fails ("if a; b; fi", "unexpected fi where then was expected");
}

static void
test_background (void **state)
{
  struct cmdline *cl = read_ok ("npm run dev &\nsleep 1; curl x & y");
  assert_int_equal (cl->n, 4);
  assert_true (cl->cmds[0].background);
  assert_false (cl->cmds[1].background);
  assert_true (cl->cmds[2].background);
  assert_false (cl->cmds[3].background);
  cmdline_free (cl);
  cl = read_ok ("(a; b) &");
  assert_true (cl->cmds[0].background);
  assert_true (cl->cmds[1].background);
  cmdline_free (cl);
  cl = read_ok ("echo $(date) &");
  assert_true (cl->cmds[0].background);
  assert_true (cl->cmds[1].background);
  cmdline_free (cl);
}

static void
test_shell_c (void **state)
{
  EXPECT ("bash -c 'npm test && rm -rf x'", "bash -c npm test && rm -rf x",
          "npm test", "rm -rf x");
  EXPECT ("sh -ec \"echo \\$HOME\"", "sh -ec echo $HOME", "echo $HOME");
  EXPECT ("bash -o pipefail -c 'a | b'", "bash -o pipefail -c a | b", "a", "b");
  EXPECT ("/bin/sh -c 'sh -c \"ls\"'", "/bin/sh -c sh -c \"ls\"", "sh -c ls",
          "ls");
  EXPECT ("sudo sh -c 'apt update'", "sudo sh -c apt update", "apt update");
  EXPECT ("xargs -I{} sh -c 'echo {}' < f", "xargs -I{} sh -c echo {}",
          "echo {}");
  EXPECT ("bash script.sh", "bash script.sh");
  EXPECT ("bash --version", "bash --version");
  EXPECT ("sh -c", "sh -c");
  struct cmdline *cl = read_ok ("bash -c 'ls'");
  assert_true (cl->cmds[0].transparent);
  assert_false (cl->cmds[1].transparent);
  cmdline_free (cl);
  cl = read_ok ("sudo bash -c 'ls'");
  assert_false (cl->cmds[0].transparent);
  cmdline_free (cl);
  cl = read_ok ("X=1 bash -c 'ls'");
  assert_false (cl->cmds[0].transparent);
  cmdline_free (cl);
  cl = read_ok ("bash -c 'ls' > out");
  assert_false (cl->cmds[0].transparent);
  cmdline_free (cl);
  read_fails ("sh -c \"$X\"",
              "it runs a shell on text that is not written out");
  read_fails ("curl x | sh", "it runs a shell on commands from its input");
  read_fails ("bash -s < x", "it runs a shell on commands from its input");
  read_fails ("bash $SCRIPT", "it runs a script named by an expansion");
  read_fails ("sh -c 'echo \"oops'", "a double quote is not closed");
}

static void
test_eval_source_trap (void **state)
{
  EXPECT ("eval 'ls -l' \"| wc\"", "eval ls -l | wc", "ls -l", "wc");
  EXPECT ("eval", "eval");
  EXPECT (". ./env.sh && source x", ". ./env.sh", "source x");
  EXPECT ("trap 'rm -f /tmp/lock' EXIT", "trap rm -f /tmp/lock EXIT",
          "rm -f /tmp/lock");
  EXPECT ("trap - EXIT; trap -p; trap 2", "trap - EXIT", "trap -p", "trap 2");
  read_fails ("eval $X", "eval runs text that is not written out");
  read_fails ("eval \"echo $(date)\"",
              "eval runs text that is not written out");
  read_fails (". $F", "it sources a file named by an expansion");
  read_fails ("trap \"$X\" EXIT",
              "trap sets an action that is not written out");
  read_fails ("alias ls=rm", "it defines an alias, which changes what a later "
                             "command name runs");
  read_fails ("command alias x=y", "it defines an alias, which changes what a "
                                   "later command name runs");
  read_fails ("env -S 'rm -rf x'", "env -S splits its text into a command");
  read_fails ("eval 'eval \"$Y\"'", "eval runs text that is not written out");
  read_fails ("hash -p /tmp/x ls; ls", "it uses hash, which changes what a "
                                       "later command name runs");
  read_fails ("enable -f ./x.so ls", "it uses enable, which changes what a "
                                     "later command name runs");
  read_fails ("env 'BASH_FUNC_ls%%=() { rm; }' bash -c ls",
              "it defines a shell function through the environment");
  read_fails ("env PS4=x bash -xc ls",
              "it sets PS4, whose value the shell runs");
  read_fails ("command command command command command command command command "
              "command command command command command command command command "
              "command $X",
              "it wraps a program in more than 16 others");
  read_fails ("timeout --signal KILL 5 $X",
              "the program name comes from an expansion: $X");
  read_fails ("sudo --user root $X",
              "the program name comes from an expansion: $X");
  EXPECT ("hash -r; enable", "hash -r", "enable");
}

static void
test_wrappers_program (void **state)
{
  struct cmdline *cl = read_ok ("sudo -u root rm -rf /");
  assert_int_equal (cl->cmds[0].program, 3);
  cmdline_free (cl);
  cl = read_ok ("nohup nice -n 5 env A=1 make");
  assert_int_equal (cl->cmds[0].program, 6);
  cmdline_free (cl);
  cl = read_ok ("find . -name '*.o' -exec rm {} +");
  assert_int_equal (cl->cmds[0].program, 5);
  assert_false (cl->cmds[0].dynamic);
  cmdline_free (cl);
  cl = read_ok ("find . -exec sh -c 'rm \"$1\"' _ {} \\;");
  assert_int_equal (cl->n, 2);
  assert_string_equal (cl->cmds[1].argv[0], "rm");
  cmdline_free (cl);
  cl = read_ok ("make");
  assert_int_equal (cl->cmds[0].program, 0);
  cmdline_free (cl);
}

static void
test_limits (void **state)
{
  char *deep = malloc (200);
  size_t n = 0;
  for (int i = 0; i < 40; i++)
    deep[n++] = '(';
  deep[n++] = 'x';
  for (int i = 0; i < 40; i++)
    deep[n++] = ')';
  deep[n] = '\0';
  read_fails (deep, "it nests more than 32 levels deep");
  free (deep);

  struct buf_
  {
    char *p;
  } big = { malloc (CMDLINE_MAX_LEN + 2) };
  memset (big.p, 'a', CMDLINE_MAX_LEN + 1);
  big.p[CMDLINE_MAX_LEN + 1] = '\0';
  read_fails (big.p, "it is longer than 262144 bytes");
  big.p[CMDLINE_MAX_LEN] = '\0';
  struct cmdline *cl = read_ok (big.p);
  assert_int_equal (cl->n, 1);
  cmdline_free (cl);
  free (big.p);

  char *many = malloc ((size_t) 4097 * 2 + 1);
  for (size_t i = 0; i < 4097; i++)
    many[2 * i] = 'x', many[2 * i + 1] = ';';
  many[(size_t) 4097 * 2] = '\0';
  read_fails (many, "it holds more than 4096 commands");
  free (many);

  struct cmdline *out = (struct cmdline *) 1;
  struct cr_error *err = NULL;
  assert_int_equal (cmdline_read ("ls\0rm", 5, &out, &err), -1);
  assert_string_equal (err->msg,
                       "cannot read this command line: it contains a NUL byte");
  assert_null (out);
  cr_error_free (err);
  /* Only len bytes are read.  */
  cl = NULL;
  assert_int_equal (cmdline_read ("ls; rm", 2, &cl, &err), 0);
  assert_int_equal (cl->n, 1);
  cmdline_free (cl);
  cmdline_free (NULL);
}

static void
test_sleep_rule (void **state)
{
  assert_true (sleeps ("sleep 15 && gh pr checks 622"));
  assert_true (sleeps ("sleep 5; make"));
  assert_true (sleeps ("sleep 5\nmake"));
  assert_true (sleeps ("# wait a bit\nsleep 5\nmake"));
  assert_true (sleeps ("sleep 0.5 && x"));
  assert_true (sleeps ("sleep 1m 30s && x"));
  assert_true (sleeps ("sleep 2h; x"));
  assert_true (sleeps ("sleep infinity && x"));
  assert_true (sleeps ("/bin/sleep 3 && x"));
  assert_true (sleeps ("sleep '5' && x"));
  assert_true (sleeps ("sleep 5 >/dev/null && x"));
  assert_true (sleeps ("sleep 5 || x; y"));
  assert_true (sleeps ("sleep 5 && (make)"));
  assert_true (sleeps ("sleep 5 && x; y"));
  assert_true (sleeps ("! sleep 5 && x"));

  assert_false (sleeps ("sleep 5"));
  assert_false (sleeps ("sleep 5;"));
  assert_false (sleeps ("sleep 5\n"));
  assert_false (sleeps ("sleep 5 # then check"));
  assert_false (sleeps ("sleep 5 &\nx"));
  assert_false (sleeps ("sleep 5 & x"));
  assert_false (sleeps ("sleep 5 && x &"));
  assert_true (sleeps ("sleep 5; x &"));
  assert_false (sleeps ("echo; sleep 5"));
  assert_false (sleeps ("echo; sleep 5; make"));
  assert_false (sleeps ("sleep 5 || x"));
  assert_false (sleeps ("sleep 5 | x"));
  assert_false (sleeps ("sleep 0 && x"));
  assert_false (sleeps ("sleep 0s 0.0 && x"));
  assert_false (sleeps ("sleep $N && x"));
  assert_false (sleeps ("sleep 5x && x"));
  assert_false (sleeps ("sleep --help && x"));
  assert_false (sleeps ("sleep && x"));
  assert_false (sleeps ("(sleep 5; make)"));
  assert_false (sleeps ("{ sleep 5; make; }"));
  assert_false (sleeps ("x=$(sleep 5; make)"));
  assert_false (sleeps ("bash -c 'sleep 5; make'"));
  assert_false (sleeps ("cd x && sleep 5 && make"));
  assert_false (sleeps ("sleeper 5 && x"));
  assert_true (sleeps ("sleep 5 && sleep 5 && x"));
  assert_false (cmdline_begins_with_sleep (NULL));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_lists_and_pipelines),
    cmocka_unit_test (test_quotes_and_escapes),
    cmocka_unit_test (test_unterminated),
    cmocka_unit_test (test_syntax_errors),
    cmocka_unit_test (test_substitutions),
    cmocka_unit_test (test_dynamic),
    cmocka_unit_test (test_dynamic_program),
    cmocka_unit_test (test_assignments),
    cmocka_unit_test (test_redirections),
    cmocka_unit_test (test_heredocs),
    cmocka_unit_test (test_groups_and_compounds),
    cmocka_unit_test (test_background),
    cmocka_unit_test (test_shell_c),
    cmocka_unit_test (test_eval_source_trap),
    cmocka_unit_test (test_wrappers_program),
    cmocka_unit_test (test_limits),
    cmocka_unit_test (test_sleep_rule),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
