/* `list`: every container of the store, as sr_container_info. */
#include <stdlib.h>

#include "oci-spec/oci-spec.h"
#include "sandrun/container.h"
#include "core/lifecycle.h"
#include "sandrun/util.h"

/* The record's strings move into the entry: no copies. */
static void
info_from (sr_container *c, struct sr_container_info *info)
{
  sr_record *rec = &c->rec;
  *info = (struct sr_container_info){
    .id = steal_pointer (&rec->id),
    .pid = c->status == SR_STATUS_STOPPED ? 0 : rec->pid,
    .status = c->status,
    .bundle = steal_pointer (&rec->bundle),
    .rootfs = steal_pointer (&rec->rootfs),
    .created = steal_pointer (&rec->created),
    .owner = steal_pointer (&rec->owner),
    .annotations = rec->annotations,
  };
  rec->annotations = (oci_map){ NULL, 0 };
}

int
sr_container_list (const struct sr_globals *g, struct sr_container_info **out,
                   size_t *n, sr_error **err)
{
  _cleanup_strv_ char **ids = NULL;
  sr_store store = { .root_fd = -1 };
  *out = NULL;
  *n = 0;
  /* No root directory yet: no containers. */
  if (sr_store_open (g->root, false, &store, NULL) < 0)
    return 0;
  int r = sr_store_list (&store, &ids, err);
  sr_store_close (&store);
  if (r < 0)
    return -1;

  size_t count = strv_len (ids);
  struct sr_container_info *v = count ? xcalloc (count, sizeof *v) : NULL;
  for (size_t i = 0; i < count; i++)
    {
      _cleanup_container_ sr_container c = SR_CONTAINER_INIT;
      /* A container deleted meanwhile is simply not listed. */
      if (sr_container_load (g, ids[i], false, &c, NULL) == 0)
        info_from (&c, &v[(*n)++]);
    }
  *out = v;
  return 0;
}

void
sr_container_list_free (struct sr_container_info *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (v[i].id);
      free (v[i].bundle);
      free (v[i].rootfs);
      free (v[i].created);
      free (v[i].owner);
      oci_map_free (&v[i].annotations);
    }
  free (v);
}
