"""Replayable evaluation: every corpus issue through the full engine, scored against gold."""
