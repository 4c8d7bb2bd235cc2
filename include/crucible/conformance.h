/* The conformance audit (spec, "Conformance"): a backend's claims are asked
 * about rather than trusted.
 *
 * For every feature a policy can name, the audit writes the smallest policy
 * that requires exactly that feature, in the mode that reaches the backend
 * (confined when its probe says it confines, unconfined otherwise), and
 * offers it to the backend's prepare.  No command is started and nothing is
 * materialized: a prepared session is disposed of at once.  The claim and
 * the answer are read as one statement:
 *
 *   claimed (enforced or observed) and accepted     accepted
 *   disclaimed (unsupported), refused by its name   refused
 *   disclaimed, but accepted                        overclaimed  (a fault)
 *   claimed, but refused by its name                withheld     (a fault)
 *   a failure of the backend's own                  unreached    (no fault)
 *
 * "Refused by its name" is a failure whose error carries the feature in
 * refused_feature (sandbox_refuse).  A terminal, direct file operations and
 * resuming another session cannot be asked for in a policy: they are read,
 * not tested, and reported stated or absent.
 *
 * The answers are grouped into the families a backend is chosen by; a
 * family holds when every feature in it that could be asked about was
 * answered exactly, which says the claims are true, not that they are
 * generous.
 *
 * The audit calls the backend synchronously and bounds no wait: a harness
 * that must survive an unanswering backend bounds it from outside.  */
#ifndef CRUCIBLE_CONFORMANCE_H
#define CRUCIBLE_CONFORMANCE_H

#include <stdbool.h>
#include <stddef.h>

#include <crucible/error.h>
#include <crucible/sandbox.h>

/* conformance_run's status when there is no backend to audit: its probe
 * failed or says it cannot be used here.  err holds the probe's reason.  */
#define CONFORMANCE_NO_BACKEND (-2)

enum conformance_answer
{
  CONFORMANCE_ACCEPTED,
  CONFORMANCE_REFUSED,
  CONFORMANCE_OVERCLAIMED,
  CONFORMANCE_WITHHELD,
  CONFORMANCE_UNREACHED,
  CONFORMANCE_STATED, /* cannot be asked for; claimed */
  CONFORMANCE_ABSENT  /* cannot be asked for; disclaimed */
};

enum conformance_family
{
  CONFORMANCE_ISOLATION,
  CONFORMANCE_MATERIALIZATION,
  CONFORMANCE_NETWORK,
  CONFORMANCE_RESOURCES,
  CONFORMANCE_TERMINAL,
  CONFORMANCE_PERSISTENCE,
  CONFORMANCE_ACCOUNTING,
  CONFORMANCE_COST,
  CONFORMANCE_FAMILY_COUNT
};

enum conformance_verdict
{
  CONFORMANCE_HOLDS,         /* every askable feature answered exactly */
  CONFORMANCE_DOES_NOT_HOLD, /* a feature in it is overclaimed or withheld */
  CONFORMANCE_NOT_REACHED,   /* no fault, but a feature in it was unreached */
  CONFORMANCE_NOT_TESTED     /* nothing in it can be asked for in a policy */
};

/* What one feature's claim and answer were.  */
struct conformance_result
{
  enum sandbox_feature feature;
  enum sandbox_support claim;
  enum conformance_answer answer;
  char *detail; /* the backend's message when it refused or failed; owned,
                   or NULL */
};

struct conformance_audit
{
  char *backend_id; /* owned */
  char *version;    /* the probe's, owned, or NULL */
  bool confined;    /* what the probe said; the mode the policies used */
  /* The probe's reason when not confined (at most 256 bytes, a longer one
   * cut at a character boundary and ending "..."), or NULL.  */
  char *unconfined_reason;
  struct conformance_result results[SANDBOX_FEATURE_COUNT];
};

/* Probe backend, then offer it one policy per askable feature over
 * workspace (an absolute path, handed to prepare as policy.workspace).  On
 * success *out is the audit (free it with conformance_free) and 0 is
 * returned, whatever the verdicts.  Returns CONFORMANCE_NO_BACKEND with
 * the probe's error when the backend cannot be used here, -1 with an error
 * for anything else (a workspace that is not absolute).  */
int conformance_run (struct sandbox_backend *backend, const char *workspace,
                     struct conformance_audit **out, struct cr_error **err);
void conformance_free (struct conformance_audit *a);

/* Whether a policy can ask for f (false for pty, file_operations,
 * resume).  */
bool conformance_askable (enum sandbox_feature f);

/* The family f belongs to.  */
enum conformance_family conformance_family_of (enum sandbox_feature f);

/* How many answers are faults (overclaimed or withheld).  */
size_t conformance_faults (const struct conformance_audit *a);

/* How many askable features were unreached.  */
size_t conformance_unreached (const struct conformance_audit *a);

/* A family's verdict, and whether it holds.  */
enum conformance_verdict
conformance_family_verdict (const struct conformance_audit *a,
                            enum conformance_family family);
bool conformance_holds (const struct conformance_audit *a,
                        enum conformance_family family);

/* The words the report uses: "withheld", "resources", "holds".  */
const char *conformance_answer_name (enum conformance_answer answer);
const char *conformance_family_name (enum conformance_family family);
const char *conformance_verdict_name (enum conformance_verdict verdict);

/* Whether an answer is a fault.  */
bool conformance_is_fault (enum conformance_answer answer);

/* The report: a header naming the backend, one row per feature (claim and
 * answer), one row per family, then the faults and the unreached features
 * with the backend's own words.  Newline-terminated, never translated (it
 * is compared between machines); owned by the caller.  */
char *conformance_report (const struct conformance_audit *a);

#endif
