"""What the user reads: the terminal summaries, the report's front page and the contact sheets."""
