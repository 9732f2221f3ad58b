/* The command handlers: each parses its own flags, calls the core, prints,
 * and returns the process exit status.  Errors are reported by main(). */
#ifndef SANDRUN_CMD_H
#define SANDRUN_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include "sandrun/container.h"
#include "sandrun/error.h"

typedef int (*sr_cmd_fn) (const struct sr_globals *g, int argc, char **argv,
                          sr_error **err);

int cmd_create (const struct sr_globals *g, int argc, char **argv, sr_error **err);
int cmd_start (const struct sr_globals *g, int argc, char **argv, sr_error **err);
int cmd_run (const struct sr_globals *g, int argc, char **argv, sr_error **err);
int cmd_state (const struct sr_globals *g, int argc, char **argv, sr_error **err);
int cmd_kill (const struct sr_globals *g, int argc, char **argv, sr_error **err);
int cmd_delete (const struct sr_globals *g, int argc, char **argv, sr_error **err);
int cmd_list (const struct sr_globals *g, int argc, char **argv, sr_error **err);
int cmd_ps (const struct sr_globals *g, int argc, char **argv, sr_error **err);
int cmd_exec (const struct sr_globals *g, int argc, char **argv, sr_error **err);
int cmd_spec (const struct sr_globals *g, int argc, char **argv, sr_error **err);
int cmd_pause (const struct sr_globals *g, int argc, char **argv, sr_error **err);
int cmd_resume (const struct sr_globals *g, int argc, char **argv, sr_error **err);
int cmd_update (const struct sr_globals *g, int argc, char **argv, sr_error **err);
int cmd_events (const struct sr_globals *g, int argc, char **argv, sr_error **err);
int cmd_features (const struct sr_globals *g, int argc, char **argv, sr_error **err);
int cmd_sandbox (const struct sr_globals *g, int argc, char **argv, sr_error **err);
int cmd_mcp (const struct sr_globals *g, int argc, char **argv, sr_error **err);
int cmd_help (const struct sr_globals *g, int argc, char **argv, sr_error **err);

/* help.c: the handler of a command, or NULL for an unknown one;
 * `sandrun --help`; whether `argv` (a command's, argv[0] its name) asks for
 * the command's help among its options; the command's help (-1 for an
 * unknown command). */
sr_cmd_fn cmd_find (const char *name);
void cmd_help_main (FILE *out);
bool cmd_wants_help (const char *name, int argc, char **argv);
int cmd_help_command (const char *name, FILE *out);

/* Shared by create and run: parse the create flags.  `extra` are run's own
 * long options (may be NULL); returns the index of the first operand, or
 * -1 with *err set. */
int cmd_parse_create_opts (int argc, char **argv, struct sr_create_opts *opts,
                           bool is_run, sr_error **err);

/* Exactly `n` operands after the options, else a usage error. */
int cmd_expect_operands (const char *cmd, int argc, char **argv, int first,
                         int n, const char *usage, sr_error **err);

#endif
