/* command handlers (placeholder) */
