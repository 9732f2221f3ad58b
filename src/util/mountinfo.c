/* Parsing /proc/PID/mountinfo lines. */
#include <string.h>

#include "util/mountinfo.h"

/* In place: \ooo (three octal digits, as the kernel's seq_file escapes
 * write them) to the byte. */
static void
unescape_octal (char *s)
{
  char *w = s;
  for (char *r = s; *r; r++)
    {
      if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0'
          && r[2] <= '7' && r[3] >= '0' && r[3] <= '7')
        {
          *w++ = (char) ((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
          r += 3;
        }
      else
        *w++ = *r;
    }
  *w = '\0';
}

bool
sr_mountinfo_parse (char *line, struct sr_mountinfo *m)
{
  char *f[6] = { 0 };
  char *save = NULL;
  char *t = strtok_r (line, " ", &save);
  for (int i = 0; i < 6 && t != NULL; i++)
    {
      f[i] = t;
      t = strtok_r (NULL, " ", &save);
    }
  /* Optional fields ("shared:1", "master:2", ...) up to the "-". */
  while (t != NULL && strcmp (t, "-") != 0)
    t = strtok_r (NULL, " ", &save);
  char *fstype = t ? strtok_r (NULL, " ", &save) : NULL;
  char *source = fstype ? strtok_r (NULL, " ", &save) : NULL;
  char *super = source ? strtok_r (NULL, " ", &save) : NULL;
  if (f[5] == NULL || super == NULL)
    return false;
  unescape_octal (f[3]);
  unescape_octal (f[4]);
  unescape_octal (source);
  *m = (struct sr_mountinfo){
    .root = f[3],
    .point = f[4],
    .opts = f[5],
    .fstype = fstype,
    .source = source,
    .superopts = super,
  };
  return true;
}

bool
sr_mountinfo_has_opt (const char *opts, const char *want)
{
  size_t wl = strlen (want);
  for (const char *p = opts; *p;)
    {
      size_t l = strcspn (p, ",");
      if (l == wl && memcmp (p, want, wl) == 0)
        return true;
      p += l + (p[l] == ',');
    }
  return false;
}
