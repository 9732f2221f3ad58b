/* What a sandbox may do: the options of `sandrun sandbox` with their safe
 * defaults, and the parsers of their values.  The one-shot command fills it
 * from its flags; sessions (issue 14) will fill it from theirs. */
#ifndef SANDRUN_SANDBOX_OPTIONS_H
#define SANDRUN_SANDBOX_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandrun/error.h"

#define SB_DEFAULT_TIMEOUT_MS 10000
#define SB_DEFAULT_MEMORY (256ULL << 20)
#define SB_DEFAULT_PIDS 64
#define SB_DEFAULT_OUTPUT_LIMIT (1ULL << 20)
#define SB_DEFAULT_DISK (256ULL << 20)
#define SB_DEFAULT_TMP_SIZE (64ULL << 20)
#define SB_DEFAULT_FILE_SIZE (256ULL << 20)
#define SB_DEFAULT_OPEN_FILES 256

struct sb_bind
{
  char *src; /* absolute host path */
  char *dst; /* absolute path in the sandbox */
};

struct sb_options
{
  char **argv;   /* the command, NULL-terminated, not empty */
  char *rootfs;  /* NULL: the read-only view of the host's system dirs */
  char *workdir; /* NULL: an empty ephemeral /work */
  struct sb_bind *ro_binds;
  size_t ro_binds_len;
  char *collect;    /* NULL: no copy out */
  char **env;       /* K=V given with --env, NULL-terminated or NULL */
  char *stdin_file; /* NULL: our stdin */
  char *net;        /* "none" */
  char *receipt;    /* NULL, "-" or a file */
  char *audit_log;  /* NULL or a file (appended) */
  bool quiet;

  int64_t timeout_ms;    /* wall clock; 0: none */
  uint64_t memory;       /* bytes, no swap */
  uint64_t cpus_milli;   /* CPU bandwidth in thousandths of a CPU; 0: none */
  uint64_t cpu_time_s;   /* RLIMIT_CPU seconds; 0: none */
  int64_t pids;          /* pids.max */
  uint64_t output_limit; /* bytes per stream */
  uint64_t file_size;    /* RLIMIT_FSIZE bytes */
  uint64_t disk;         /* bytes written under /work */
  uint64_t tmp_size;     /* bytes of /tmp (and /dev/shm) */
  uint64_t open_files;   /* RLIMIT_NOFILE */
};

void sb_options_init (struct sb_options *o);
void sb_options_clear (struct sb_options *o);

/* "256M", "1G", "4096" (bytes), "1.5G"; binary units (K = 1024). */
int sb_parse_size (const char *s, uint64_t *out);
/* "10s", "500ms", "2m", "1.5s", "10" (seconds). */
int sb_parse_duration_ms (const char *s, int64_t *out);
/* "0.5", "2": CPUs as thousandths. */
int sb_parse_cpus (const char *s, uint64_t *out);
/* "SRC:DST" with both absolute. */
int sb_parse_bind (const char *s, struct sb_bind *out, sr_error **err);

/* "256 MiB", "1.5 GiB", "512 bytes": for messages. */
char *sb_format_size (uint64_t bytes);
/* "10 s", "1.5 s", "500 ms". */
char *sb_format_duration (int64_t ms);

#endif
