"""Live quality: label events, what humans did after each plan, live precision, demotion, review
and stale follow-up. Everything here reads the store; only `review` and `stale` write, and only
through the guard and the store's apply."""
