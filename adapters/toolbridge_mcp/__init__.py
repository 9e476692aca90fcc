"""toolbridge's the Model Context Protocol plugin (being built: it registers nothing yet)."""
