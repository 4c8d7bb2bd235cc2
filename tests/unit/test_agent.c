/* Unit tests for core/agent.c: reading the agent's messages, writing JSON
 * strings, and the built-in shell agent's line.  */
#include <config.h>

#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/agent.h"
#include "lib/buf.h"

/* Parse s and return the error text, or NULL when it parsed.  */
static char *
parse_error (const char *s, struct agent_msg *msg)
{
  struct cr_error *err = NULL;
  if (agent_parse_line (s, strlen (s), msg, &err) == 0)
    return NULL;
  char *text = strdup (err->msg);
  cr_error_free (err);
  return text;
}

/* Whether s parses.  */
static bool
parses (const char *s, struct agent_msg *msg)
{
  char *got = parse_error (s, msg);
  bool ok = got == NULL;
  free (got);
  return ok;
}

/* Assert that s is refused with exactly want.  */
static void
assert_refused (const char *s, const char *want)
{
  struct agent_msg msg;
  char *got = parse_error (s, &msg);
  assert_non_null (got);
  assert_string_equal (got, want);
  free (got);
  agent_msg_clear (&msg);
}

static void
test_parse_bash (void **state)
{
  struct agent_msg msg;
  assert_true (
      parses ("{\"type\":\"bash\",\"id\":\"c1\",\"command\":\"npm run dev\","
              "\"description\":\"the dev server\",\"timeout\":2.5,"
              "\"background\":false,\"env\":{\"A\":\"1\",\"B\":\"\"}}",
              &msg));
  assert_int_equal (msg.type, AGENT_MSG_BASH);
  assert_string_equal (msg.id, "c1");
  assert_string_equal (msg.command, "npm run dev");
  assert_string_equal (msg.description, "the dev server");
  assert_true (msg.timeout == 2.5);
  assert_false (msg.background);
  assert_int_equal (msg.n_env, 2);
  assert_string_equal (msg.env[1].name, "B");
  assert_int_equal (msg.env[1].value_len, 0);
  agent_msg_clear (&msg);
}

static void
test_parse_others (void **state)
{
  struct agent_msg msg;
  assert_true (parses ("{\"type\":\"bash_output\",\"id\":\"o\","
                       "\"number\":3}",
                       &msg));
  assert_int_equal (msg.type, AGENT_MSG_BASH_OUTPUT);
  assert_int_equal (msg.number, 3);
  agent_msg_clear (&msg);
  assert_true (parses ("{\"type\":\"hello\",\"protocol\":1}", &msg));
  assert_int_equal (msg.protocol, 1);
  agent_msg_clear (&msg);
  assert_true (parses ("{\"type\":\"end_turn\"}", &msg));
  assert_int_equal (msg.type, AGENT_MSG_END_TURN);
  agent_msg_clear (&msg);
  assert_true (parses ("{\"type\":\"text\",\"text\":\"a\\nb\"}", &msg));
  assert_string_equal (msg.text, "a\nb");
  agent_msg_clear (&msg);
}

/* A tool call: its name, and its arguments as JSON text, numbers as the
 * agent spelled them; no arguments is {}; arguments not an object are
 * refused.  */
static void
test_parse_tool (void **state)
{
  struct agent_msg msg;
  assert_true (parses ("{\"type\":\"tool\",\"id\":\"m1\",\"name\":"
                       "\"mcp__files__read\",\"arguments\":{\"path\":"
                       "\"a b\",\"n\":1.50,\"l\":[true,null]}}",
                       &msg));
  assert_int_equal (msg.type, AGENT_MSG_TOOL);
  assert_string_equal (msg.id, "m1");
  assert_string_equal (msg.tool, "mcp__files__read");
  assert_string_equal (msg.arguments,
                       "{\"path\":\"a b\",\"n\":1.50,\"l\":[true,null]}");
  agent_msg_clear (&msg);
  assert_true (
      parses ("{\"type\":\"tool\",\"id\":\"m2\",\"name\":\"x\"}", &msg));
  assert_string_equal (msg.arguments, "{}");
  agent_msg_clear (&msg);
  assert_refused ("{\"type\":\"tool\",\"id\":\"m3\",\"name\":\"x\","
                  "\"arguments\":[1]}",
                  "\"arguments\" must be an object");
  assert_refused ("{\"type\":\"tool\",\"id\":\"m4\",\"name\":\"x\","
                  "\"argument\":{}}",
                  "unknown field \"argument\" in a tool message");
}

static void
test_parse_errors (void **state)
{
  assert_refused ("{", "not JSON (parse error: premature EOF)");
  assert_refused ("\"x\"", "a message must be a JSON object");
  assert_refused ("{\"type\":7}", "a message needs \"type\" as a string");
  assert_refused ("{\"type\":\"nap\"}", "unknown message type \"nap\"");
  assert_refused ("{\"type\":\"end_turn\",\"x\":1}",
                  "unknown field \"x\" in an end_turn message");
  assert_refused ("{\"type\":\"bash\",\"id\":\"i\",\"command\":\"\"}",
                  "a bash message needs \"command\" as a non-empty string");
  assert_refused ("{\"type\":\"bash\",\"id\":\"i\",\"command\":\"x\","
                  "\"background\":1}",
                  "\"background\" must be true or false");
  assert_refused ("{\"type\":\"bash\",\"id\":\"i\",\"command\":\"x\","
                  "\"timeout\":0}",
                  "\"timeout\" must be a number of seconds above 0");
  assert_refused ("{\"type\":\"bash\",\"id\":\"i\",\"command\":\"x\","
                  "\"env\":[]}",
                  "\"env\" must be an object of strings");
  assert_refused ("{\"type\":\"bash\",\"id\":\"i\",\"command\":\"x\","
                  "\"env\":{\"A\":1}}",
                  "\"env\": \"A\" must be a string");
  assert_refused ("{\"type\":\"bash_output\",\"id\":\"i\",\"number\":1.5}",
                  "a bash_output message needs \"number\" as an integer");
  assert_refused ("{\"type\":\"hello\"}",
                  "a hello message needs \"protocol\" as an integer");
  assert_refused ("{\"type\":\"text\"}",
                  "a text message needs \"text\" as a non-empty string");
}

static void
test_parse_keeps_id (void **state)
{
  struct agent_msg msg;
  char *got
      = parse_error ("{\"type\":\"bash\",\"id\":\"k\",\"timeout\":1}", &msg);
  assert_non_null (got);
  assert_string_equal (msg.id, "k");
  free (got);
  agent_msg_clear (&msg);
  struct cr_error *err = NULL;
  assert_int_equal (agent_parse_line ("{\"a\"\0}", 6, &msg, &err), -1);
  assert_string_equal (err->msg, "a message contains a NUL byte");
  cr_error_free (err);
  agent_msg_clear (&msg);
}

/* The JSON string agent_json_string writes for s (len bytes).  */
static char *
json (const char *s, size_t len)
{
  struct buf b = BUF_INIT;
  agent_json_string (&b, s, len);
  return buf_steal (&b, NULL);
}

static void
test_json_string (void **state)
{
  char *a = json ("a\"b\\c\n\t\x01é", strlen ("a\"b\\c\n\t\x01é"));
  assert_string_equal (a, "\"a\\\"b\\\\c\\n\\t\\u0001é\"");
  free (a);
  char *b = json ("x\xffy\xc3", 4);
  assert_string_equal (b, "\"x\xef\xbf\xbdy\xef\xbf\xbd\"");
  free (b);
  char *c = json ("\xed\xa0\x80", 3);
  assert_string_equal (c, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
  free (c);
}

/* Assert what the built-in agent makes of a prompt.  */
static void
assert_shell (const char *prompt, const char *line, bool background)
{
  bool bg;
  char *got = agent_shell_line (prompt, &bg);
  assert_string_equal (got, line);
  assert_int_equal (bg, background);
  free (got);
}

static void
test_shell_line (void **state)
{
  assert_shell ("ls", "ls", false);
  assert_shell ("npm run dev &", "npm run dev", true);
  assert_shell ("npm run dev  &  ", "npm run dev", true);
  assert_shell ("a && b", "a && b", false);
  assert_shell ("a &&", "a &&", false);
  assert_shell ("a&", "a&", false);
  assert_shell ("x\t&", "x", true);
  assert_shell ("echo hi   ", "echo hi", false);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_parse_bash),
    cmocka_unit_test (test_parse_others),
    cmocka_unit_test (test_parse_tool),
    cmocka_unit_test (test_parse_errors),
    cmocka_unit_test (test_parse_keeps_id),
    cmocka_unit_test (test_json_string),
    cmocka_unit_test (test_shell_line),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
