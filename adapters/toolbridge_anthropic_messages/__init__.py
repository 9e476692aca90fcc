"""toolbridge's Anthropic Messages plugin (being built: it registers nothing yet)."""
