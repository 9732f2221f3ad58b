/* internal cgroup helpers (placeholder) */
