"""Service mode: a webhook receiver, a durable queue (huey on SQLite or Redis) and workers that
triage each issue through the one flow (`issuetriage.act.flow.act`), exactly as
`issuetriage triage OWNER/REPO#N --apply` does. docs/service.md has the processes and settings."""
