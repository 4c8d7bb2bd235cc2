/* libFuzzer target for the JSON-RPC reader of `crucible mcp`
 * (tui/cmd_mcp.c, included here so that its static reader is reached as
 * the server reaches it): the input is what a client writes, split into
 * lines as the server splits it.  No command runs (the server is set up
 * as one whose backend cannot be had, so every call is refused); every
 * answer goes to /dev/null.  tests/fuzz/replay.c runs the same function
 * over tests/fuzz/corpus-jsonrpc without libFuzzer.  */
#include "tui/cmd_mcp.c"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Answers go nowhere while an input is read: standard output is /dev/null
 * until fuzz_loud puts back what it was (the replay's TAP goes there).  */
static int
fuzz_quiet (void)
{
  int saved = dup (STDOUT_FILENO);
  int fd = open ("/dev/null", O_WRONLY);
  if (saved < 0 || fd < 0 || dup2 (fd, STDOUT_FILENO) < 0)
    abort ();
  close (fd);
  return saved;
}

/* Standard output as it was before fuzz_quiet.  */
static void
fuzz_loud (int saved)
{
  if (dup2 (saved, STDOUT_FILENO) < 0)
    abort ();
  close (saved);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct mcp m;
  struct cr_error *err = NULL;
  static char *no_env[] = { NULL };

  int saved = fuzz_quiet ();
  mcp_init (&m);
  m.loop = loop_new (&err);
  if (m.loop == NULL)
    abort ();
  m.host.cfg = config_new_defaults ();
  m.refusal = "fuzzing: no command runs";
  m.sup = supervisor_new (m.loop, NULL, m.host.cfg, "/nonexistent", no_env);
  m.rules = permit_rules (m.host.cfg, &err);
  if (m.rules == NULL)
    abort ();
  mcp_take_input (&m, (const char *) data, size);
  mcp_take_input (&m, "\n", 1);
  while (m.calls != NULL)
    mcp_call_free (m.calls);
  supervisor_free (m.sup);
  rules_free (m.rules);
  config_free (m.host.cfg);
  jsonrpc_asks_free (&m.asks);
  jsonrpc_lines_free (&m.in);
  loop_free (m.loop);
  fuzz_loud (saved);
  return 0;
}
