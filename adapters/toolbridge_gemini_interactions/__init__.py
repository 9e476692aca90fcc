"""toolbridge's Gemini Interactions plugin (being built: it registers nothing yet)."""
