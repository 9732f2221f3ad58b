/* What a run did to /work: a snapshot of the tree before and after, the
 * difference (created, changed, deleted, with sizes and SHA-256 of the new
 * contents), and --collect's copy-out.  Run only once the sandbox's
 * processes are gone, on a tree they could write: nothing is followed. */
#ifndef SANDRUN_SANDBOX_FILES_H
#define SANDRUN_SANDBOX_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandrun/error.h"

/* At most this many entries are looked at (a tree of millions of files
 * must not stall the receipt). */
#define SB_FILES_MAX 100000

struct sb_file
{
  char *path; /* relative to /work */
  uint64_t size;
  uint64_t disk_bytes; /* allocated (st_blocks) */
  int64_t mtime_ns, ctime_ns;
  ino_t ino;
  mode_t mode;
  const char *change; /* "created", "changed", "deleted" in a diff */
  bool has_sha256;
  char sha256[65];
};

struct sb_files
{
  struct sb_file *v;
  size_t n;
  bool incomplete; /* SB_FILES_MAX reached */
};

int sb_files_snapshot (const char *dir, struct sb_files *out, sr_error **err);
/* The changes from `before` to the tree at `dir` now. */
int sb_files_diff (const char *dir, const struct sb_files *before,
                   struct sb_files *changes, sr_error **err);
/* Copy the created and changed regular files to `to`. */
int sb_files_collect (const char *dir, const struct sb_files *changes,
                      const char *to, sr_error **err);
/* The bytes of disk the files created or changed since `before` hold now
 * (a sparse file counts what it allocates). */
uint64_t sb_files_growth (const char *dir, const struct sb_files *before);
void sb_files_clear (struct sb_files *f);

#endif
