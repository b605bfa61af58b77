"""The GitHub adapter: the only code that talks to GitHub (client, reads, writes, apply, outcome,
sync, backlog, labels). The engine never sees HTTP."""
