/* Three test backends for the conformance audit, built outside the tree
 * against the installed libcrucible-sandbox by sandbox-audit-library.sh:
 *
 *   audit-liar overclaim DIR   says network_deny is unsupported, takes it
 *   audit-liar withhold DIR    says cpu_limit is enforced, refuses it
 *   audit-liar unreached DIR   claims honestly, but its engine never
 *                              answers: what it claims cannot be reached
 *
 * Each prints the audit's report; exit 0 no fault, 1 a fault.  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <crucible/conformance.h>

static const char *liar_mode;
static const struct sandbox_backend_ops liar_ops;

static void
liar_said (struct sandbox_claims *out)
{
  memset (out, 0, sizeof *out);
  out->support[SANDBOX_FILESYSTEM] = SANDBOX_ENFORCED;
  out->support[SANDBOX_CPU_LIMIT] = SANDBOX_ENFORCED;
  out->support[SANDBOX_COMMAND_TIME_LIMIT] = SANDBOX_ENFORCED;
}

static void
liar_claims (const struct sandbox_backend *b, struct sandbox_claims *out)
{
  (void) b;
  liar_said (out);
}

static int
liar_probe (struct sandbox_backend *b, struct sandbox_probe *out,
            struct cr_error **err)
{
  (void) b;
  (void) err;
  memset (out, 0, sizeof *out);
  out->usable = out->confined = true;
  return 0;
}

static int
liar_prepare (struct sandbox_backend *b, const struct sandbox_policy *policy,
              struct sandbox_session **out, struct cr_error **err)
{
  struct sandbox_claims truth;

  (void) b;
  liar_said (&truth);
  if (strcmp (liar_mode, "overclaim") == 0)
    truth.support[SANDBOX_NETWORK_DENY] = SANDBOX_ENFORCED;
  else if (strcmp (liar_mode, "withhold") == 0)
    truth.support[SANDBOX_CPU_LIMIT] = SANDBOX_UNSUPPORTED;
  if (sandbox_check_policy (&truth, policy, "liar", err) < 0)
    return -1;
  if (strcmp (liar_mode, "unreached") == 0)
    return cr_error_set (err, 0, "the liar's engine is not answering");
  struct sandbox_session *s = calloc (1, sizeof *s);
  if (s == NULL)
    return cr_error_set (err, 0, "out of memory");
  s->ops = &liar_ops;
  *out = s;
  return 0;
}

static int
liar_dispose (struct sandbox_session *s, struct sandbox_usage *usage,
              struct cr_error **err)
{
  (void) usage;
  (void) err;
  free (s);
  return 0;
}

static void
liar_abandon (struct sandbox_session *s)
{
  free (s);
}

static const struct sandbox_backend_ops liar_ops = {
  .id = "liar",
  .claims = liar_claims,
  .probe = liar_probe,
  .prepare = liar_prepare,
  .dispose = liar_dispose,
  .abandon = liar_abandon,
};

int
main (int argc, char **argv)
{
  struct sandbox_backend b = { &liar_ops };
  struct conformance_audit *a = NULL;
  struct cr_error *err = NULL;

  if (argc != 3)
    return 2;
  liar_mode = argv[1];
  if (conformance_run (&b, argv[2], &a, &err) < 0)
    {
      fprintf (stderr, "audit-liar: %s\n", err->msg);
      cr_error_free (err);
      return 4;
    }
  char *text = conformance_report (a);
  fputs (text, stdout);
  free (text);
  int ret = conformance_faults (a) > 0;
  conformance_free (a);
  return ret;
}
