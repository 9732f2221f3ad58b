/* suidprobe: installed setuid-root in a container's rootfs, it tells what
 * an exec of a setuid binary gave the process:
 *   ruid=R euid=E CapEff=HEX CapPrm=HEX NoNewPrivs=N */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void
status_field (const char *name, char *out, size_t size)
{
  char line[256];
  size_t n = strlen (name);
  FILE *f = fopen ("/proc/self/status", "re");
  snprintf (out, size, "?");
  if (f == NULL)
    return;
  while (fgets (line, sizeof line, f) != NULL)
    if (strncmp (line, name, n) == 0 && line[n] == ':')
      {
        char *v = line + n + 1;
        v += strspn (v, " \t");
        v[strcspn (v, "\n")] = '\0';
        snprintf (out, size, "%s", v);
        break;
      }
  fclose (f);
}

int
main (void)
{
  char eff[64], prm[64], nnp[16];
  status_field ("CapEff", eff, sizeof eff);
  status_field ("CapPrm", prm, sizeof prm);
  status_field ("NoNewPrivs", nnp, sizeof nnp);
  printf ("ruid=%d euid=%d CapEff=%s CapPrm=%s NoNewPrivs=%s\n", (int) getuid (), (int) geteuid (),
          eff, prm, nnp);
  return 0;
}
