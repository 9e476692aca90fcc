"""toolbridge's Gemini generateContent plugin (being built: it registers nothing yet)."""
