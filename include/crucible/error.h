/* One error type carried up the stack with context (crun's model); part of
 * libcrucible-sandbox's installed interface, and the type every layer of
 * crucible uses.
 *
 * A function that can fail takes `struct cr_error **err`, returns a negative
 * number after filling it, and its caller adds context on the way up, so the
 * person reads "reading config /x/.crucible/config.json: line 3: ..." rather
 * than "error -1".  The caller of the outermost function owns *err and frees
 * it with cr_error_free().  */
#ifndef CRUCIBLE_ERROR_H
#define CRUCIBLE_ERROR_H

struct cr_error
{
  int code;  /* errno value, or 0 when the failure is not a system call's */
  char *msg; /* complete message, owned by the error */
  /* When a sandbox backend refused a policy because of one feature it does
   * not hold: that feature (an enum sandbox_feature, set by sandbox_refuse);
   * -1 for every other failure.  Context added on the way up keeps it.  */
  int refused_feature;
};

/* Fill *err (which must be NULL) with a message; when code is non-zero,
 * ": strerror(code)" is appended.  Returns -1 so callers can return it.  */
int cr_error_set (struct cr_error **err, int code, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* Prefix the message in *err with context ("context: message").  Returns -1.
 * When *err is NULL (a caller bug), a new error carrying only the context is
 * made, so nothing is lost.  */
int cr_error_prefix (struct cr_error **err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* Free an error; NULL is allowed.  */
void cr_error_free (struct cr_error *err);

/* Free *err and set it to NULL.  */
void cr_error_clear (struct cr_error **err);

#endif
