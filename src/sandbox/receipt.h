/* The receipt of an execution: what ran, how long, what it used, what it
 * produced and which limit stopped it (contrib/sandbox/receipt.schema.json).
 * Sessions (issue 14) write one per exec from the same pieces. */
#ifndef SANDRUN_SANDBOX_RECEIPT_H
#define SANDRUN_SANDBOX_RECEIPT_H

#include <stdbool.h>
#include <stdint.h>

#include "bundle.h"
#include "egress.h"
#include "files.h"
#include "options.h"
#include "supervisor.h"

#define SB_RECEIPT_VERSION "1"

/* What the cgroup and the file systems reported after the run. */
struct sb_usage
{
  uint64_t cpu_user_us, cpu_system_us;
  uint64_t peak_memory_bytes;
  uint64_t pids_peak;
  uint64_t oom_kills; /* processes the kernel killed at the memory limit */
  uint64_t memory_max_events;
  uint64_t pids_max_events; /* forks refused at the pids limit */
  bool work_full, tmp_full; /* the tmpfs had no room left */
  bool workdir_stopped; /* a --workdir grew past --disk: the run was stopped */
};

/* What a kernel session's interpreter said of one execution. */
struct sb_kernel_result
{
  char *exception; /* "ZeroDivisionError: division by zero", or NULL */
  char *traceback;
  char *value;      /* repr of the last expression's value, or NULL */
  bool interrupted; /* KeyboardInterrupt at the timeout */
  bool restarted;   /* the interpreter was started anew by this execution */
  bool state_lost;  /* ... and the earlier executions' state is gone */
};

struct sb_receipt
{
  const char *session; /* NULL for the one-shot */
  const struct sb_kernel_result *kernel;
  const struct sb_options *o;
  const struct sb_bundle *b;
  const struct sb_outcome *res;
  const struct sb_stream *out, *err;
  const struct sb_files *files;
  const struct sb_egress *egress; /* the gateway's record, or NULL */
  struct sb_usage usage;
  char *started_at, *finished_at;
  /* filled by sb_receipt_judge */
  const char *limit_exceeded;
  char **limits_hit;
  char *message;
};

/* What the receipt describes: the options, bundle, outcome, output and
 * files of the execution (kept by the caller). */
void sb_receipt_set (struct sb_receipt *r, const struct sb_options *o,
                     const struct sb_bundle *b, const struct sb_supervisor *sv,
                     const struct sb_outcome *res,
                     const struct sb_files *files);
/* Decide limit_exceeded, limits_hit and the message. */
void sb_receipt_judge (struct sb_receipt *r);
/* The receipt as JSON, malloc'd; without the output bodies for the audit
 * log (`with_output` false, one line). */
char *sb_receipt_json (const struct sb_receipt *r, bool with_output,
                       bool pretty);
/* Write the receipt where --receipt says and append to --audit-log. */
int sb_receipt_emit (const struct sb_receipt *r, const struct sb_options *o,
                     sr_error **err);
void sb_kernel_result_clear (struct sb_kernel_result *k);
void sb_receipt_clear (struct sb_receipt *r);

/* `len` bytes as valid UTF-8: each byte that is not part of a valid
 * sequence becomes the four characters \xHH (and a backslash itself
 * stays one); malloc'd. */
char *sb_utf8_escape (const char *s, size_t len, size_t *out_len);

#endif
