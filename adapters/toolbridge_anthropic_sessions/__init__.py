"""toolbridge's Claude Managed Agents sessions plugin (being built: it registers nothing yet)."""
